# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of module_utils/_nccl_env.py (documentation: nccl_env.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import NcclEnvError, derive_nccl_env
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("nccl_env", NcclEnvError, prefix=False)
def nccl_env(rdma, gpus=None, network=None, policy=None):
    """Derive NCCL/RCCL settings from the gpucluster_rdma fact."""
    return derive_nccl_env(rdma, gpus=gpus, network=network, policy=policy)


FilterModule = filter_module(nccl_env=nccl_env)
