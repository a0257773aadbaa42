# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the cross-host fabric check (documentation: fabric_check.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._fabric import (
    FabricError,
    check_fabric,
)
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("fabric_check", FabricError)
def fabric_check(nodes, checks=None, expect=None):
    """[{host, rdma, env}, ...] -> {ok, reference, nodes, disagreeing, messages}."""
    return check_fabric(nodes, checks=checks, expect=expect)


FilterModule = filter_module(fabric_check=fabric_check)
