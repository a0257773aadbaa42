# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the Slurm hostlist compression (documentation: slurm_hostlist.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    hostlist,
)
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("slurm_hostlist", (SlurmConfError, TypeError))
def slurm_hostlist(names):
    """List of host names -> Slurm hostlist expression (gpu[1-2,10])."""
    return hostlist(list(names) if not isinstance(names, str) else names)


FilterModule = filter_module(slurm_hostlist=slurm_hostlist)
