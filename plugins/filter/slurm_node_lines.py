# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the Slurm NodeName line derivation (documentation: slurm_node_lines.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    node_attributes,
    node_lines,
)


def slurm_node_lines(facts, gpus=None, gpu_counts=None, mem_reserve_mib=1024, mem_reserve_percent=0, extra=None, mem_round_mib=1024):
    """{name: ansible_facts}, {name: gpucluster_gpus}, {name: n} -> NodeName lines (equal nodes share one)."""
    if not isinstance(facts, dict):
        raise AnsibleFilterError("slurm_node_lines: expects a dict of node name -> ansible_facts")
    gpus = gpus or {}
    gpu_counts = gpu_counts or {}
    attrs = {}
    for name, node_facts in facts.items():
        try:
            attrs[name] = node_attributes(
                node_facts or {},
                gpus=gpus.get(name) or None,
                mem_reserve_mib=mem_reserve_mib,
                mem_reserve_percent=mem_reserve_percent,
                gpu_count=gpu_counts.get(name),
                mem_round_mib=mem_round_mib,
            )
        except SlurmConfError as exc:
            raise AnsibleFilterError("slurm_node_lines: node %s: %s" % (name, exc)) from exc
    try:
        return node_lines(attrs, extra=extra)
    except SlurmConfError as exc:
        raise AnsibleFilterError("slurm_node_lines: %s" % exc) from exc


class FilterModule:
    """gpucluster.training.slurm_node_lines"""

    def filters(self):
        return {"slurm_node_lines": slurm_node_lines}
