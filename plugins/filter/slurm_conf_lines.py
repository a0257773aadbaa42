# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the Slurm settings merge (documentation: slurm_conf_lines.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    config_lines,
)


def slurm_conf_lines(defaults, overrides=None, version=None, conf="slurm.conf"):
    """Defaults updated by overrides (omit removes) -> Key=Value lines, checked against the version."""
    try:
        return config_lines(defaults, overrides, version=version, conf=conf)
    except SlurmConfError as exc:
        raise AnsibleFilterError("slurm_conf_lines: %s" % exc) from exc


class FilterModule:
    """gpucluster.training.slurm_conf_lines"""

    def filters(self):
        return {"slurm_conf_lines": slurm_conf_lines}
