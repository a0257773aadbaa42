# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the default job memory derivation (documentation: slurm_default_memory.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    default_memory,
    node_attributes,
)
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("slurm_default_memory", SlurmConfError)
def slurm_default_memory(facts, gpus=None, gpu_counts=None, mem_reserve_mib=1024, mem_reserve_percent=0, mode="auto", mem_round_mib=1024):
    """{name: ansible_facts}, {name: gpucluster_gpus}, {name: n} -> {DefMemPerGPU|DefMemPerCPU: MiB} (or {})."""
    if not isinstance(facts, dict):
        raise SlurmConfError("expects a dict of node name -> ansible_facts")
    gpus = gpus or {}
    gpu_counts = gpu_counts or {}
    attrs = dict((name, node_attributes(node_facts or {}, gpus=gpus.get(name) or None, mem_reserve_mib=mem_reserve_mib,
                                        mem_reserve_percent=mem_reserve_percent, gpu_count=gpu_counts.get(name),
                                        mem_round_mib=mem_round_mib))
                 for name, node_facts in facts.items())
    found = default_memory(attrs, mode)
    return dict([found]) if found else {}


FilterModule = filter_module(slurm_default_memory=slurm_default_memory)
