# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the gres.conf line derivation (documentation: slurm_gres_lines.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    gres_lines,
)
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("slurm_gres_lines", SlurmConfError)
def slurm_gres_lines(nodes, plugin_files=None, autodetect=False, gpu_counts=None, node_facts=None):
    """{name: gpucluster_gpus} -> gres.conf lines (explicit File= lines or AutoDetect=)."""
    return gres_lines(nodes, plugin_files=plugin_files, autodetect=autodetect, gpu_counts=gpu_counts, node_facts=node_facts)


FilterModule = filter_module(slurm_gres_lines=slurm_gres_lines)
