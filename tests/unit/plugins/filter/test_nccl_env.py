# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the nccl_env filter and module_utils/_nccl_env.py.

RDMA facts come from the real ibstat captures (tests/fixtures/ibstat) and from sysfs trees BUILT
BY THESE TESTS from the real show_gids listings (tests/fixtures/gids).  show_gids has no port
state or rate: the trees set ACTIVE/LinkUp 100 Gb/s Ethernet.  Tests that change a real table
(to make two ports disagree, or to add NUMA nodes) say so and are synthetic.
"""

from __future__ import annotations


import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.filter.nccl_env import FilterModule, nccl_env
from ansible_collections.gpucluster.training.plugins.module_utils._ibstat import parse_ibstat
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import NcclEnvError, derive_nccl_env, gloo_socket_ifname
from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_rdma import parse_sysfs_rdma
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.sysfs_trees import gid_tree


def gids_fact(name):
    """gpucluster_rdma from a sysfs tree built from a real show_gids listing."""
    return parse_sysfs_rdma(gid_tree(fixture_text("gids", name)))


def ibstat_fact(name):
    return parse_ibstat(fixture_text("ibstat", name))


IBM = "show_gids_CX6_ens1f0_RoCE_v1v2_ipv4_at_index4-5_ibm_ssnr_pr4.txt"
NCCL1131 = "show_gids_2xCX_RoCE_ens3np0_ens2np0_rows_for_mlx5_0-1_nccl1131.txt"
MACVLAN = "show_gids_macvlan_pod_mlx5_0-1_rows_index4-7_nccl1573.txt"
HURRAY = "show_gids_CX4_RoCE_linklocal_only_plus_IB_hurray0.txt"
IB_H100 = "ibstat_H100_8xCX7-NDR400-IB_plus_4xCX6Dx-Ethernet_mooncake2039.txt"
ROCE_IBSTAT = "ibstat_2xCX6Dx-RoCE-100G_l2fwd-nv6.txt"


@pytest.mark.parametrize("listing,hca,gid_index", [
    (IBM, "=mlx5_0:1", "5"),
    (NCCL1131, "=mlx5_0:1,mlx5_1:1", "3"),
    (MACVLAN, "=mlx5_0:1,mlx5_1:1", "7"),
])
def test_roce_gid_index_from_real_tables(listing, hca, gid_index):
    result = nccl_env(gids_fact(listing))
    assert result["env"]["NCCL_IB_HCA"] == hca
    assert result["env"]["NCCL_IB_GID_INDEX"] == gid_index
    assert result["env"]["NCCL_IB_DISABLE"] == "0"
    assert "RoCE v2" in result["reasons"]["NCCL_IB_GID_INDEX"]
    assert "NCCL_NET_GDR_LEVEL" not in result["env"]


def test_table_without_ipv4_roce_v2_entry_is_an_error():
    with pytest.raises(NcclEnvError, match="mlx5_0:1 has no RoCE v2 GID with an IPv4-mapped address"):
        derive_nccl_env(gids_fact(HURRAY))


def test_infiniband_host_selects_the_ib_rail():
    result = derive_nccl_env(ibstat_fact(IB_H100))
    assert result["env"]["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1"
    assert "NCCL_IB_GID_INDEX" not in result["env"]
    assert "dominant link layer InfiniBand (8 active port(s); left out 2 Ethernet)" in result["reasons"]["NCCL_IB_HCA"]
    assert "SM LID 1024" in result["reasons"]["NCCL_IB_HCA"]
    assert "unknown (facts from ibstat)" in result["reasons"]["NCCL_NET_GDR_LEVEL"]


def test_roce_from_ibstat_leaves_gid_index_unset():
    result = derive_nccl_env(ibstat_fact(ROCE_IBSTAT))
    assert result["env"]["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1"
    assert "NCCL_IB_GID_INDEX" not in result["env"]
    assert "not known" in result["reasons"]["NCCL_IB_GID_INDEX"]


def test_policy_can_force_ethernet_rail():
    result = derive_nccl_env(ibstat_fact(IB_H100), policy={"link_layer": "Ethernet"})
    assert result["env"]["NCCL_IB_HCA"] == "=mlx5_7:1,mlx5_8:1"


def test_allow_and_deny():
    assert derive_nccl_env(gids_fact(NCCL1131), policy={"deny": ["mlx5_1"]})["env"]["NCCL_IB_HCA"] == "=mlx5_0:1"
    assert derive_nccl_env(ibstat_fact(IB_H100), policy={"allow": ["mlx5_1?:1"]})["env"]["NCCL_IB_HCA"] == "=mlx5_10:1,mlx5_11:1"


def test_disagreeing_ports_need_a_policy():
    # synthetic change of the real nccl#1131 table: mlx5_1's IPv4 GIDs moved to 4/5, as on a host with an extra IPv6 address
    fact = gids_fact(NCCL1131)
    for gid in fact["devices"][1]["ports"][0]["gids"]:
        if gid["ipv4"]:
            gid["index"] += 2
    with pytest.raises(NcclEnvError, match="differs between ports"):
        derive_nccl_env(fact)
    result = derive_nccl_env(fact, policy={"gid_index": 3})
    assert result["env"]["NCCL_IB_GID_INDEX"] == "3"


def test_no_active_port():
    fact = ibstat_fact(IB_H100)
    with pytest.raises(NcclEnvError, match=r"no active RDMA port \(found: .*mlx5_1:1 DOWN/Disabled Ethernet 40 Gb/s"):
        derive_nccl_env(fact, policy={"allow": ["mlx5_1", "mlx5_2"]})
    with pytest.raises(NcclEnvError, match="no RDMA device at all"):
        derive_nccl_env({"devices": []})
    fallback = derive_nccl_env({"devices": []}, policy={"socket_fallback": True})
    assert fallback["env"] == {"NCCL_IB_DISABLE": "1"}


def test_numa_affinity_orders_hcas():
    # synthetic NUMA nodes on the real nccl#1131 table: mlx5_0 on node 1, mlx5_1 on node 0; GPUs 0-1 on node 0
    fact = gids_fact(NCCL1131)
    fact["devices"][0]["numa_node"] = 1
    fact["devices"][1]["numa_node"] = 0
    gpus = {"count": 4, "devices": [{"index": i, "numa_node": i // 2, "counted": True} for i in range(4)]}
    result = derive_nccl_env(fact, gpus=gpus)
    assert result["env"]["NCCL_IB_HCA"] == "=mlx5_1:1,mlx5_0:1"
    assert "NUMA affinity" in result["reasons"]["NCCL_IB_HCA"]


def test_socket_ifname():
    fact = gids_fact(NCCL1131)
    assert derive_nccl_env(fact, network={"default_ipv4": {"interface": "eno1"}})["env"]["NCCL_SOCKET_IFNAME"] == "=eno1"
    result = derive_nccl_env(fact, network={"default_ipv4": {"interface": "ens3np0"}})
    assert "NCCL_SOCKET_IFNAME" not in result["env"] and "is an RDMA netdev" in result["reasons"]["NCCL_SOCKET_IFNAME"]
    assert derive_nccl_env(fact, policy={"socket_ifname": "bond0"})["env"]["NCCL_SOCKET_IFNAME"] == "=bond0"
    assert "no network facts" in derive_nccl_env(fact)["reasons"]["NCCL_SOCKET_IFNAME"]


@pytest.mark.parametrize("value, written", [
    ("^docker0,lo", "^docker0,lo"),     # exclude interfaces starting with docker0 or lo
    ("^=docker0", "^=docker0"),         # exclude exactly docker0
    ("=eno1", "=eno1"),                 # already exact
    ("eno1", "=eno1"),                  # a bare name is made exact (NCCL would match it as a prefix)
    ("eno1,eno2", "=eno1,eno2"),
])
def test_socket_ifname_policy_in_nccl_syntax_is_written_as_given(value, written):
    result = derive_nccl_env(gids_fact(NCCL1131), network={"default_ipv4": {"interface": "eth9"}}, policy={"socket_ifname": value})
    assert result["env"]["NCCL_SOCKET_IFNAME"] == written
    assert value in result["reasons"]["NCCL_SOCKET_IFNAME"]
    # gloo takes names, not NCCL's syntax: an exclusion list names none, gloo gets the fallback
    gloo = gloo_socket_ifname(result["env"]["NCCL_SOCKET_IFNAME"], fallback="eth9")
    assert gloo == ("eth9" if value.startswith("^") else "eno1")


def test_gdr_level_only_with_peer_memory_and_a_policy():
    fact = gids_fact(IBM)
    fact["peer_memory"] = ["nvidia_peermem"]
    # NCCL picks the GDR level from the topology: nothing forced by default
    result = derive_nccl_env(fact)
    assert "NCCL_NET_GDR_LEVEL" not in result["env"]
    assert "GPUDirect RDMA available (peer-memory module(s) loaded: nvidia_peermem)" in result["reasons"]["NCCL_NET_GDR_LEVEL"]
    assert derive_nccl_env(fact, policy={"gdr_level": "PHB"})["env"]["NCCL_NET_GDR_LEVEL"] == "PHB"
    assert "NCCL_NET_GDR_LEVEL" not in derive_nccl_env(fact, gpus={"count": 0, "devices": []}, policy={"gdr_level": "PHB"})["env"]
    dmabuf = gids_fact(IBM)
    dmabuf["dma_buf"] = ["nvidia-open"]
    assert "DMA-BUF: nvidia-open" in derive_nccl_env(dmabuf)["reasons"]["NCCL_NET_GDR_LEVEL"]
    assert derive_nccl_env(dmabuf, policy={"gdr_level": "PXB"})["env"]["NCCL_NET_GDR_LEVEL"] == "PXB"
    with pytest.raises(NcclEnvError, match="dma_buf"):
        derive_nccl_env(dict(dmabuf, dma_buf="yes"))
    assert "NCCL_NET_GDR_LEVEL" not in derive_nccl_env(gids_fact(IBM))["env"]
    assert derive_nccl_env(gids_fact(IBM), policy={"peer_memory": True, "gdr_level": "SYS"})["env"]["NCCL_NET_GDR_LEVEL"] == "SYS"


def test_filter_wraps_errors():
    assert "nccl_env" in FilterModule().filters()
    with pytest.raises(AnsibleFilterError, match="no RDMA device at all"):
        nccl_env({"devices": []})


@pytest.mark.parametrize("rdma,kwargs", [
    (None, {}), ({"devices": "x"}, {}), ({"devices": [{"name": 1}]}, {}),
    ({"devices": [{"name": "a", "ports": [{"port": 1, "state": "ACTIVE", "link_layer": "Ethernet", "rate_gbps": "fast"}]}]}, {}),
    ({"devices": []}, {"policy": {"colour": "red"}}), ({"devices": []}, {"policy": {"allow": "mlx5_0"}}),
    ({"devices": []}, {"gpus": []}), ({"devices": []}, {"network": {"default_ipv4": "eth0"}}),
])
def test_bad_inputs(rdma, kwargs):
    with pytest.raises(NcclEnvError):
        derive_nccl_env(rdma, **kwargs)


JSONISH = st.recursive(st.none() | st.booleans() | st.integers(-2, 300) | st.floats(allow_nan=False) | st.text(max_size=12),
                       lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=5),
                       max_leaves=20)
PORT = st.fixed_dictionaries({"port": st.integers(0, 3) | JSONISH, "state": st.sampled_from(["ACTIVE", "DOWN"]) | JSONISH,
                              "phys_state": st.sampled_from(["LinkUp", None]) | JSONISH,
                              "link_layer": st.sampled_from(["InfiniBand", "Ethernet"]) | JSONISH,
                              "rate_gbps": st.sampled_from([100, 400, 2.5, None]) | JSONISH, "sm_lid": st.integers(0, 5) | st.none(),
                              "gids": st.none() | st.lists(st.fixed_dictionaries({
                                  "index": st.integers(0, 8), "gid": st.sampled_from(["0000:0000:0000:0000:0000:ffff:0a00:0001", "fe80::1"]),
                                  "type": st.sampled_from(["RoCEv2", "RoCEv1", "IB"]), "netdev": st.sampled_from(["eth0", "ens1", None]),
                                  "ipv4": st.sampled_from(["10.0.0.1", None])}) | JSONISH, max_size=4)})
DEVICE = st.fixed_dictionaries({"name": st.sampled_from(["mlx5_0", "mlx5_1", "mlx5_10"]) | JSONISH, "ports": st.lists(PORT, max_size=3) | JSONISH,
                                "netdev": st.sampled_from(["eth0", "ens1", None]) | JSONISH, "numa_node": st.integers(-1, 2) | st.none()})


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({"devices": st.lists(DEVICE, max_size=4) | JSONISH, "peer_memory": st.none() | st.just(["nvidia_peermem"]) | JSONISH}),
       st.none() | JSONISH, st.none() | JSONISH, st.none() | JSONISH)
def test_any_facts_give_result_or_own_error(rdma, gpus, network, policy):
    try:
        result = derive_nccl_env(rdma, gpus=gpus, network=network, policy=policy)
    except NcclEnvError:
        return
    assert set(result) == {"env", "reasons", "hcas", "warnings"}
    assert all(isinstance(value, str) for value in result["env"].values())
