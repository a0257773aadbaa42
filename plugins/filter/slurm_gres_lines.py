# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the gres.conf line derivation (documentation: slurm_gres_lines.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    gres_lines,
)


def slurm_gres_lines(nodes, plugin_files=None, autodetect=False, gpu_counts=None, node_facts=None):
    """{name: gpucluster_gpus} -> gres.conf lines (explicit File= lines or AutoDetect=)."""
    try:
        return gres_lines(nodes, plugin_files=plugin_files, autodetect=autodetect, gpu_counts=gpu_counts, node_facts=node_facts)
    except SlurmConfError as exc:
        raise AnsibleFilterError("slurm_gres_lines: %s" % exc) from exc


class FilterModule:
    """gpucluster.training.slurm_gres_lines"""

    def filters(self):
        return {"slurm_gres_lines": slurm_gres_lines}
