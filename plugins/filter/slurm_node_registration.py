# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the compute nodes' registration check (documentation: slurm_node_registration.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_nodes import SlurmNodesError, node_registration
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("slurm_node_registration", (SlurmNodesError, TypeError), lines=True)
def slurm_node_registration(text, names):
    """sinfo %n|%t|%E output and the node names -> each node's state, reason and verdict."""
    return node_registration(text, list(names))


FilterModule = filter_module(slurm_node_registration=slurm_node_registration)
