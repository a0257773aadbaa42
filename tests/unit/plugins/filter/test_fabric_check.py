# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric_check filter is a thin face over module_utils._fabric (synthetic nodes)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.fabric_check import FilterModule
from ansible_collections.gpucluster.training.plugins.module_utils._fabric import check_fabric

FILTER = FilterModule().filters()["fabric_check"]


def _node(host, layer, rate, gid=None):
    env = {"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_DISABLE": "0"}
    if gid is not None:
        env["NCCL_IB_GID_INDEX"] = str(gid)
    port = {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "link_layer": layer, "rate_gbps": rate}
    return {"host": host, "rdma": {"devices": [{"name": "mlx5_0", "ports": [port]}]}, "env": env}


def test_registered_under_its_name():
    assert set(FilterModule().filters()) == {"fabric_check"}


def test_same_result_as_the_derivation():
    nodes = [_node("a", "Ethernet", 200, 3), _node("b", "Ethernet", 100, 3)]
    assert FILTER(nodes) == check_fabric(nodes)
    assert FILTER(nodes, ["link_layer"])["ok"]
    assert FILTER(nodes, expect={"rate_gbps": 100})["disagreeing"] == ["a"]


@pytest.mark.parametrize("value", [None, "gpu1", [{"host": "a"}], 3])
def test_bad_input_is_a_filter_error(value):
    with pytest.raises(AnsibleFilterError, match="fabric_check"):
        FILTER(value)
