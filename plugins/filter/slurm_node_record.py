# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the controller's record of the compute nodes' facts (documentation: slurm_node_record.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_nodes import SlurmRecordError, node_record
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("slurm_node_record", (SlurmRecordError, TypeError), prefix=False)
def slurm_node_record(files):
    """[path, text] of each record file read on the controller, in order -> the record."""
    return node_record([tuple(pair) for pair in files])


FilterModule = filter_module(slurm_node_record=slurm_node_record)
