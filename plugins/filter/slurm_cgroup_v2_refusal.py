# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the cgroup v2 / Slurm version check (documentation: slurm_cgroup_v2_refusal.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import SlurmConfError, cgroup_v2_refusal
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("slurm_cgroup_v2_refusal", SlurmConfError)
def slurm_cgroup_v2_refusal(version, cgroup2_hosts=None, plugins=None):
    """Slurm version, cgroup v2 hosts, cgroup plugins in use -> refusal text or ''."""
    return cgroup_v2_refusal(version, cgroup2_hosts, plugins)


FilterModule = filter_module(slurm_cgroup_v2_refusal=slurm_cgroup_v2_refusal)
