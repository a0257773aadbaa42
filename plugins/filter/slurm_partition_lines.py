# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the PartitionName line derivation (documentation: slurm_partition_lines.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    partition_lines,
)


def slurm_partition_lines(partitions, groups, computes, version=None):
    """Partitions as data over inventory groups -> PartitionName lines."""
    try:
        return partition_lines(list(partitions or []), dict(groups or {}), list(computes or []), version=version)
    except SlurmConfError as exc:
        raise AnsibleFilterError("slurm_partition_lines: %s" % exc) from exc


class FilterModule:
    """gpucluster.training.slurm_partition_lines"""

    def filters(self):
        return {"slurm_partition_lines": slurm_partition_lines}
