# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the rdma_node_env filter and module_utils/_rdma_site.py (the rdma role's settings
around nccl_env), on the real ibstat captures in tests/fixtures/ibstat."""

from __future__ import annotations


import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.rdma_node_env import FilterModule, rdma_node_env
from ansible_collections.gpucluster.training.plugins.module_utils._ibstat import parse_ibstat
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import derive_nccl_env
from ansible_collections.gpucluster.training.plugins.module_utils._rdma_site import site_policy
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text

NETWORK = {"default_ipv4": {"interface": "eth0"}}
# the rdma role's defaults, without the rdma_ prefix
DEFAULTS = {"hca_allow": [], "hca_deny": [], "require_rdma": True, "gdr_level": "PHB", "link_layer": "", "gid_index": -1,
            "socket_ifname": "", "peer_memory": "auto", "peer_markers": [], "sysfs_root": "/sys", "nccl_topo_file": "",
            "nccl_extra_env": {}, "rccl_env": {}, "amd": False}


def ibstat(name):
    return parse_ibstat(fixture_text("ibstat", name))


H100_IB = "ibstat_H100_8xCX7-NDR400-IB_plus_4xCX6Dx-Ethernet_mooncake2039.txt"
CX4_ROCE = "ibstat_CX4-RoCE-active_plus_IB-down_hurray0.txt"


def test_defaults_derive_exactly_what_nccl_env_derives():
    rdma = ibstat(H100_IB)
    out = rdma_node_env(rdma, network=NETWORK, site=DEFAULTS)
    plain = derive_nccl_env(rdma, network=NETWORK, policy={"allow": [], "deny": [], "socket_fallback": False, "gdr_level": "PHB"})
    assert out["env"] == plain["env"] and out["hcas"] == plain["hcas"]
    assert out["reasons"] == plain["reasons"]  # no site setting: nothing added to any reason
    assert out["conf_keys"] == list(plain["env"])


def test_site_values_are_added_last_with_their_origin_and_rccl_only_on_amd():
    site = dict(DEFAULTS, nccl_topo_file="/opt/topo.xml", nccl_extra_env={"NCCL_DEBUG": "WARN", "UCX_TLS": 1},
                rccl_env={"HSA_FORCE_FINE_GRAIN_PCIE": True, "RCCL_MSCCL_ENABLE": 0})
    nvidia = rdma_node_env(ibstat(H100_IB), network=NETWORK, site=site)
    assert "HSA_FORCE_FINE_GRAIN_PCIE" not in nvidia["env"]
    amd = rdma_node_env(ibstat(H100_IB), network=NETWORK, site=dict(site, amd=True))
    assert list(amd["env"])[-5:] == ["NCCL_TOPO_FILE", "NCCL_DEBUG", "UCX_TLS", "HSA_FORCE_FINE_GRAIN_PCIE", "RCCL_MSCCL_ENABLE"]
    assert amd["env"]["UCX_TLS"] == "1" and amd["env"]["HSA_FORCE_FINE_GRAIN_PCIE"] == "True"
    assert amd["reasons"]["NCCL_TOPO_FILE"] == "topology file from rdma_nccl_topo_file (site setting)"
    assert amd["reasons"]["UCX_TLS"] == "rdma_nccl_extra_env (site setting)"
    assert amd["reasons"]["RCCL_MSCCL_ENABLE"] == "rdma_rccl_env (site setting for AMD GPU nodes, RCCL)"
    # only NCCL_* / RCCL_* go to /etc/nccl.conf
    assert "UCX_TLS" not in amd["conf_keys"] and "HSA_FORCE_FINE_GRAIN_PCIE" not in amd["conf_keys"]
    assert "RCCL_MSCCL_ENABLE" in amd["conf_keys"] and "NCCL_IB_HCA" in amd["conf_keys"]


@pytest.mark.parametrize("setting, markers, probed, policy_peer, why", [
    ("auto", [], [], None, ""),
    ("auto", ["sys/kernel/mm/memory_peers/amdkfd"], [], True,
     "; the role found a peer-memory client registered (sys/kernel/mm/memory_peers/amdkfd under /sys)"),
    ("auto", ["sys/kernel/mm/memory_peers/amdkfd"], ["nvidia_peermem"], None, ""),
    ("available", [], [], True, "; site setting rdma_peer_memory=available"),
    ("unavailable", ["x"], [], False, "; site setting rdma_peer_memory=unavailable"),
])
def test_peer_memory_policy_and_the_reason_it_gives(setting, markers, probed, policy_peer, why):
    rdma = dict(ibstat(CX4_ROCE), peer_memory=probed)
    out = rdma_node_env(rdma, network=NETWORK, site=dict(DEFAULTS, peer_memory=setting, peer_markers=markers))
    assert out["policy"].get("peer_memory") == policy_peer
    assert out["reasons"]["NCCL_NET_GDR_LEVEL"].endswith(why)


def test_policy_from_the_role_settings():
    policy = site_policy(dict(DEFAULTS, require_rdma=False, link_layer="Ethernet", gid_index=3, socket_ifname="ens1",
                              hca_deny=["mlx5_bond_*"], gdr_level="SYS"))
    assert policy == {"allow": [], "deny": ["mlx5_bond_*"], "socket_fallback": True, "gdr_level": "SYS",
                      "link_layer": "Ethernet", "gid_index": 3, "socket_ifname": "ens1"}


@pytest.mark.parametrize("value, fallback", [
    ("false", True), ("no", True), ("False", True), ("0", True), (False, True),
    ("true", False), ("yes", False), (True, False), (None, False),
])
def test_require_rdma_as_text_from_an_ini_inventory_or_extra_vars(value, fallback):
    assert site_policy(dict(DEFAULTS, require_rdma=value))["socket_fallback"] is fallback
    assert site_policy({k: v for k, v in DEFAULTS.items() if k != "require_rdma"})["socket_fallback"] is False


def test_require_rdma_false_as_text_lets_a_node_without_rdma_use_sockets():
    # the CX4 node's InfiniBand port is DOWN (its ibstat); the RoCE port is denied here (synthetic policy)
    site = dict(DEFAULTS, require_rdma="false", hca_deny=["mlx5_0"])
    out = rdma_node_env(ibstat(CX4_ROCE), network=NETWORK, site=site)
    assert out["env"]["NCCL_IB_DISABLE"] == "1" and out["hcas"] == []
    with pytest.raises(AnsibleFilterError, match="no active RDMA port"):
        rdma_node_env(ibstat(CX4_ROCE), network=NETWORK, site=dict(site, require_rdma="yes"))
    with pytest.raises(AnsibleFilterError, match="rdma_require_rdma must be true or false"):
        rdma_node_env(ibstat(CX4_ROCE), network=NETWORK, site=dict(site, require_rdma="maybe"))


@pytest.mark.parametrize("site", [dict(DEFAULTS, nccl_extra_env=["NCCL_DEBUG=INFO"]), dict(DEFAULTS, gid_index="x"), "policy"])
def test_bad_site_settings_fail_with_a_filter_error(site):
    with pytest.raises(AnsibleFilterError):
        rdma_node_env(ibstat(H100_IB), network=NETWORK, site=site)


def test_filter_is_registered():
    assert FilterModule().filters()["rdma_node_env"] is rdma_node_env
