# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of module_utils/_rdma_site.py (documentation: rdma_node_env.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import NcclEnvError
from ansible_collections.gpucluster.training.plugins.module_utils._rdma_site import node_env
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("rdma_node_env", NcclEnvError, prefix=False)
def rdma_node_env(rdma, gpus=None, network=None, site=None):
    """A node's NCCL/RCCL settings with the site's, each value with its origin."""
    return node_env(rdma, gpus=gpus, network=network, site=site)


FilterModule = filter_module(rdma_node_env=rdma_node_env)
