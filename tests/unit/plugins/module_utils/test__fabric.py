# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests of the cross-host fabric check.

Nodes are built from the real captures in tests/fixtures (see SOURCES.md): ibstat outputs parsed by
_ibstat, and sysfs trees built here from show_gids listings (port attributes from the ibstat capture
named in each case, since show_gids does not print them). Inputs named "synthetic" are made up.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.module_utils._fabric import (
    CHECKS,
    FabricError,
    check_fabric,
    parse_hca,
)
from ansible_collections.gpucluster.training.plugins.module_utils._ibstat import parse_ibstat
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import derive_nccl_env
from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_rdma import (
    parse_sysfs_rdma,
)
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.sysfs_trees import gid_tree

IBSTAT_H100_IB = "ibstat/ibstat_H100_8xCX7-NDR400-IB_plus_4xCX6Dx-Ethernet_mooncake2039.txt"
IBSTAT_CX6DX_ROCE = "ibstat/ibstat_2xCX6Dx-RoCE-100G_l2fwd-nv6.txt"
GIDS_2XCX = "gids/show_gids_2xCX_RoCE_ens3np0_ens2np0_rows_for_mlx5_0-1_nccl1131.txt"
GIDS_CX6 = "gids/show_gids_CX6_ens1f0_RoCE_v1v2_ipv4_at_index4-5_ibm_ssnr_pr4.txt"
NETWORK = {"default_ipv4": {"interface": "eth0"}}


def _sysfs_from_show_gids(gids_name, ibstat_name):
    """sysfs tree: GID table from a show_gids capture, port attributes from an ibstat capture."""
    ports = dict((dev["name"], dev["ports"][0]) for dev in parse_ibstat(fixture_text(ibstat_name))["devices"])

    def port_files(device):
        port = ports[device]
        return {"state": "4: ACTIVE" if port["state"] == "ACTIVE" else "1: DOWN",
                "phys_state": "5: LinkUp" if port["phys_state"] == "LinkUp" else "3: Disabled",
                "rate": "%s Gb/sec (4X)" % port["rate_gbps"], "link_layer": port["link_layer"]}

    return parse_sysfs_rdma(gid_tree(fixture_text(gids_name), port=port_files))


def _node(host, rdma, policy=None):
    return {"host": host, "rdma": rdma, "env": derive_nccl_env(rdma, network=NETWORK, policy=policy)["env"]}


@pytest.fixture(name="ib_node")
def fixture_ib_node():
    return _node("ib1", parse_ibstat(fixture_text(IBSTAT_H100_IB)))


@pytest.fixture(name="roce3")
def fixture_roce3():
    return _node("roce3", _sysfs_from_show_gids(GIDS_2XCX, IBSTAT_CX6DX_ROCE))


@pytest.fixture(name="roce5")
def fixture_roce5():
    return _node("roce5", _sysfs_from_show_gids(GIDS_CX6, IBSTAT_CX6DX_ROCE))


def test_real_nodes_derive_what_the_captures_say(ib_node, roce3, roce5):
    assert ib_node["env"]["NCCL_IB_HCA"].count(":1") == 8
    assert roce3["env"]["NCCL_IB_GID_INDEX"] == "3"
    assert roce5["env"]["NCCL_IB_GID_INDEX"] == "5"


def test_one_node_agrees_with_itself(ib_node):
    result = check_fabric([ib_node])
    assert result["ok"] and result["messages"] == [] and result["disagreeing"] == []
    node = result["nodes"]["ib1"]
    assert node["link_layer"] == "InfiniBand" and node["rate_gbps"] == 400 and node["gid_index"] is None
    assert len(node["hca"]) == 8 and all(h.endswith(":1") for h in node["hca"])
    assert result["reference"] == {"rdma": True, "link_layer": "InfiniBand", "rate_gbps": 400, "ports": 8,
                                   "planes": node["planes"], "gid_index": None}
    assert node["ports"] == 8 and len(node["planes"]) == 1


def test_roce_nodes_with_different_gid_index_disagree(roce3, roce5):
    result = check_fabric([roce3, roce5], checks=["port_state", "link_layer", "rate", "plane", "gid_index"])
    assert not result["ok"]
    assert result["disagreeing"] == ["roce5"]
    assert result["reference"]["gid_index"] == "3"
    (message,) = result["messages"]
    assert message.startswith("roce5: NCCL_IB_GID_INDEX 5 (mlx5_0:1) differs from 3 on roce3")
    assert "mpirun -x" in message


def test_gid_index_check_can_be_left_out(roce3, roce5):
    result = check_fabric([roce3, roce5], checks=["port_state", "link_layer", "rate"])
    assert result["ok"], result["messages"]
    assert result["reference"] == {"rdma": True, "link_layer": "Ethernet", "rate_gbps": 100, "ports": None, "planes": None,
                                   "gid_index": None}


def test_ib_node_among_roce_nodes_is_named_with_link_layer_and_rate(ib_node, roce3, roce5):
    result = check_fabric([roce3, roce5, ib_node])
    assert result["disagreeing"] == ["roce5", "ib1"]
    ib_messages = [m for m in result["messages"] if m.startswith("ib1: ")]
    assert ib_messages[0].startswith("ib1: link layer InfiniBand (mlx5_0:1, mlx5_3:1")
    assert ib_messages[0].endswith("differs from Ethernet on roce3, roce5")
    assert ib_messages[1].endswith("differs from 100 Gb/s on roce3, roce5")
    assert ib_messages[1].startswith("ib1: rate 400 Gb/s")
    # the IB node has no GID index and is not compared on it
    assert not any("GID" in m for m in ib_messages)


def test_tie_goes_to_the_first_node_in_play_order(ib_node, roce3):
    assert check_fabric([ib_node, roce3])["disagreeing"] == ["roce3"]
    assert check_fabric([roce3, ib_node])["disagreeing"] == ["ib1"]


def test_expectation_overrides_the_majority(ib_node, roce3, roce5):
    result = check_fabric([roce3, roce5, ib_node], checks=["link_layer", "rate"],
                          expect={"link_layer": "InfiniBand", "rate_gbps": "400"})
    assert result["disagreeing"] == ["roce3", "roce5"]
    assert "differs from the expected InfiniBand" in result["messages"][0]
    assert result["reference"]["rate_gbps"] == 400


def test_expected_gid_index(roce3, roce5):
    result = check_fabric([roce3, roce5], checks=["gid_index"], expect={"gid_index": 5, "rate_gbps": None})
    assert result["disagreeing"] == ["roce3"]
    assert result["messages"][0].startswith("roce3: NCCL_IB_GID_INDEX 3 (mlx5_0:1, mlx5_1:1) differs from the expected 5")


def test_dict_input_keeps_its_order(ib_node, roce3):
    nodes = {"roce3": {"rdma": roce3["rdma"], "env": roce3["env"]}, "ib1": {"rdma": ib_node["rdma"], "env": ib_node["env"]}}
    assert check_fabric(nodes)["disagreeing"] == ["ib1"]


def test_port_named_but_down_is_a_difference_of_that_node(ib_node):
    # synthetic: the IB capture with NCCL_IB_HCA forced onto one of its Down Ethernet ports
    node = copy.deepcopy(ib_node)
    node["env"]["NCCL_IB_HCA"] = "=mlx5_0:1,mlx5_1:1"
    result = check_fabric([node])
    messages = result["messages"]
    assert "ib1: mlx5_1:1 is DOWN/Disabled, not ACTIVE/LinkUp" in messages
    assert "ib1: selected ports mix link layers InfiniBand and Ethernet" in messages
    assert "ib1: selected ports mix rates 400 Gb/s, 40 Gb/s" in messages
    assert result["nodes"]["ib1"]["link_layer"] == "mixed"
    assert check_fabric([node], checks=["gid_index"])["ok"]


def test_hca_naming_a_missing_device(ib_node):
    node = copy.deepcopy(ib_node)
    node["env"]["NCCL_IB_HCA"] = "=mlx5_0:1,mlx5_42:1"
    assert "ib1: NCCL_IB_HCA names mlx5_42:1, which this node does not have" in check_fabric([node])["messages"]
    node["env"]["NCCL_IB_HCA"] = "=mlx9"
    messages = check_fabric([node])["messages"]
    assert "ib1: NCCL_IB_HCA=mlx9 selects no RDMA port on this node" in [m.replace("==", "=") for m in messages]


def test_prefix_and_exclusion_lists_follow_nccl(ib_node):
    node = copy.deepcopy(ib_node)
    node["env"]["NCCL_IB_HCA"] = "mlx5_1"  # NCCL: prefix match, mlx5_1 also selects mlx5_10 and mlx5_11
    assert check_fabric([node])["nodes"]["ib1"]["hca"] == ["mlx5_1:1", "mlx5_10:1", "mlx5_11:1"]
    node["env"]["NCCL_IB_HCA"] = "^mlx5_1,mlx5_2,mlx5_7,mlx5_8"
    result = check_fabric([node])
    assert result["nodes"]["ib1"]["hca"] == ["mlx5_0:1", "mlx5_3:1", "mlx5_4:1", "mlx5_5:1", "mlx5_6:1", "mlx5_9:1"]  # ^mlx5_1 drops 10, 11 too
    assert result["ok"], result["messages"]


def test_node_without_rdma_disagrees_with_an_rdma_fabric(roce3):
    tcp = {"host": "tcp1", "rdma": {"devices": []}, "env": {"NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "=eth0"}}
    result = check_fabric([roce3, tcp])
    assert result["disagreeing"] == ["tcp1"]
    assert result["messages"] == ["tcp1: has no usable RDMA port (NCCL_IB_DISABLE=1) while roce3 use RDMA"]
    only_tcp = check_fabric([tcp])
    assert only_tcp["ok"] and only_tcp["reference"]["rdma"] is False


def test_roce_node_without_known_gid_table_is_reported_unset():
    rdma = parse_ibstat(fixture_text(IBSTAT_CX6DX_ROCE))  # ibstat: no GID table, index left unset
    unknown = _node("ibstat1", rdma)
    assert "NCCL_IB_GID_INDEX" not in unknown["env"]
    known = _node("roce3", _sysfs_from_show_gids(GIDS_2XCX, IBSTAT_CX6DX_ROCE))
    messages = check_fabric([known, unknown])["messages"]
    assert messages[0].startswith("ibstat1: NCCL_IB_GID_INDEX unset (mlx5_0:1, mlx5_1:1) differs from 3 on roce3")


@pytest.mark.parametrize("value, expected", [
    (None, ("all", [])),
    ("", ("all", [])),
    ("=mlx5_0:1,mlx5_1:1", ("exact", [("mlx5_0", 1), ("mlx5_1", 1)])),
    ("mlx5_0", ("include", [("mlx5_0", None)])),
    ("^mlx5_bond_0:1", ("exclude", [("mlx5_bond_0", 1)])),
    (" mlx5_0:1 , ", ("include", [("mlx5_0", 1)])),
])
def test_parse_hca(value, expected):
    assert parse_hca(value) == expected


@pytest.mark.parametrize("nodes, checks, expect, match", [
    ("gpu1", None, None, "nodes must be a list"),
    ([{"rdma": {}}], None, None, "host name"),
    ([{"host": "a", "rdma": {"devices": []}, "env": "NCCL_IB_HCA=x"}], None, None, "must be a dict"),
    ([{"host": "a", "rdma": [], "env": {"NCCL_IB_HCA": "x"}}], None, None, "gpucluster_rdma must be a dict"),
    ([{"host": "a", "rdma": {"devices": [{"ports": []}]}, "env": {}}], None, None, "needs a name"),
    ([{"host": "a", "rdma": {"devices": [{"name": "m", "ports": [{"port": "x"}]}]}, "env": {}}], None, None, "not a number"),
    ([{"host": "a", "rdma": {"devices": []}, "env": {"NCCL_IB_HCA": "mlx5_0:one"}}], None, None, "not '<device>"),
    ([], ["speed"], None, "unknown fabric check"),
    ([], "rate", None, "checks must be a list"),
    ([], None, {"mtu": 4096}, "unknown expect key"),
    ([], None, ["rate"], "expect must be a dict"),
    ([{"host": "a", "rdma": {"devices": []}, "env": {"NCCL_IB_DISABLE": "1"}}] * 2, None, None, "listed twice"),
    ({"a": "x"}, None, None, "expected {rdma, env}"),
])
def test_bad_input_is_a_fabric_error(nodes, checks, expect, match):  # synthetic inputs
    with pytest.raises(FabricError, match=match):
        check_fabric(nodes, checks=checks, expect=expect)


def test_checks_are_the_documented_ones():
    assert CHECKS == ("port_state", "link_layer", "rate", "ports", "plane", "gid_index")


def test_a_node_with_fewer_rails_is_named(roce3, roce5):
    # roce3 selected 2 ports, roce5 1 (real captures, SOURCES.md): a rail fewer slows every job roce5 is in
    result = check_fabric([roce3, roce3 | {"host": "roce3b"}, roce5], checks=["ports"])
    assert result["disagreeing"] == ["roce5"] and result["reference"]["ports"] == 2
    assert result["messages"] == ["roce5: selected port count 1 (mlx5_0:1) differs from 2 on roce3, roce3b"]


def test_a_node_on_another_infiniband_plane_is_named(ib_node):
    # synthetic: the IB capture on a second node whose ports answer to another subnet manager
    other = copy.deepcopy(ib_node)
    other["host"] = "ib2"
    for dev in other["rdma"]["devices"]:
        for port in dev["ports"]:
            if port.get("link_layer") == "InfiniBand":
                port["sm_lid"] = 12
    third = copy.deepcopy(ib_node)
    third["host"] = "ib3"
    result = check_fabric([ib_node, third, other])
    lid = result["nodes"]["ib1"]["planes"][0]
    assert result["disagreeing"] == ["ib2"], result["messages"]
    assert result["messages"][0].startswith("ib2: InfiniBand plane(s), SM LID 12 (mlx5_0:1")
    assert result["messages"][0].endswith("differs from %s on ib1, ib3" % lid)
    assert check_fabric([ib_node, other], checks=["port_state", "rate"])["ok"]


_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12))


def _nested(inner):
    return st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3))


_VALUE = st.recursive(_SCALAR, _nested, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(nodes=_VALUE, checks=st.one_of(st.none(), st.lists(st.sampled_from(CHECKS + ("x",)), max_size=3)))
def test_garbage_never_raises_anything_but_fabric_error(nodes, checks):  # synthetic inputs
    try:
        check_fabric(nodes, checks=checks)
    except FabricError:
        pass


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_mangled_real_nodes_never_raise_anything_but_fabric_error(data):  # synthetic, from a real node
    node = _node("roce3", _sysfs_from_show_gids(GIDS_2XCX, IBSTAT_CX6DX_ROCE))
    port = node["rdma"]["devices"][0]["ports"][0]
    key = data.draw(st.sampled_from(["state", "phys_state", "rate_gbps", "link_layer", "port"]))
    port[key] = data.draw(_VALUE)
    node["env"]["NCCL_IB_GID_INDEX"] = data.draw(_VALUE)
    try:
        check_fabric([node])
    except FabricError:
        pass
