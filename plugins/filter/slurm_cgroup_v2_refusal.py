# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the cgroup v2 / Slurm version check (documentation: slurm_cgroup_v2_refusal.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import SlurmConfError, cgroup_v2_refusal


def slurm_cgroup_v2_refusal(version, cgroup2_hosts=None, plugins=None):
    """Slurm version, cgroup v2 hosts, cgroup plugins in use -> refusal text or ''."""
    try:
        return cgroup_v2_refusal(version, cgroup2_hosts, plugins)
    except SlurmConfError as exc:
        raise AnsibleFilterError("slurm_cgroup_v2_refusal: %s" % exc) from exc


class FilterModule:
    """gpucluster.training.slurm_cgroup_v2_refusal"""

    def filters(self):
        return {"slurm_cgroup_v2_refusal": slurm_cgroup_v2_refusal}
