# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the PartitionName line derivation (documentation: slurm_partition_lines.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    partition_lines,
)
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("slurm_partition_lines", SlurmConfError)
def slurm_partition_lines(partitions, groups, computes, version=None):
    """Partitions as data over inventory groups -> PartitionName lines."""
    return partition_lines(list(partitions or []), dict(groups or {}), list(computes or []), version=version)


FilterModule = filter_module(slurm_partition_lines=slurm_partition_lines)
