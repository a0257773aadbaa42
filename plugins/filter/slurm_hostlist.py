# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the Slurm hostlist compression (documentation: slurm_hostlist.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    hostlist,
)


def slurm_hostlist(names):
    """List of host names -> Slurm hostlist expression (gpu[1-2,10])."""
    try:
        return hostlist(list(names) if not isinstance(names, str) else names)
    except (SlurmConfError, TypeError) as exc:
        raise AnsibleFilterError("slurm_hostlist: %s" % exc) from exc


class FilterModule:
    """gpucluster.training.slurm_hostlist"""

    def filters(self):
        return {"slurm_hostlist": slurm_hostlist}
