# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RoCE on a VLAN, a bond (RoCE LAG) or a macvlan: _sysfs_rdma, rdma_info and nccl_env.

The GID tables are real show_gids listings (tests/fixtures/gids, see SOURCES.md):
* ucx10420: RoCE LAG, device mlx5_bond_0, every GID on bond0 (openucx/ucx#10420);
* tensorflow22077: mlx4_0 port 1 with an IPv4 GID on the VLAN eth2.10, mlx5_0 on eth4.
The sysfs trees are BUILT BY THESE TESTS from them.  show_gids prints neither port state nor the
stacking: the trees set ACTIVE/LinkUp 100 Gb/s Ethernet, and the lower_* links, DEVTYPE,
bonding/slaves and /proc/net/vlan/config entries follow from the listing (eth2.10 is VLAN 10 on
eth2, as its name and the ifconfig output in the same thread show).  The bond's slave names are
not in the listing: ens1f0np0/ens1f1np1 are set by the test (synthetic).  A test that flips GID
types says so (synthetic).
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import NcclEnvError, derive_nccl_env
from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_rdma import (
    SysfsRdmaError,
    parse_sysfs_rdma,
    parse_vlan_config,
)
from ansible_collections.gpucluster.training.plugins.modules import rdma_info
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.sysfs_trees import gid_tree

BOND = "show_gids_RoCE_LAG_mlx5_bond_0_bond0_rows_ucx10420.txt"
VLAN = "show_gids_CX3_eth2.10_VLAN_v1_plus_CX5_eth4_v2_tensorflow22077.txt"
VLAN_CONFIG = "VLAN Dev name    | VLAN ID\nName-Type: VLAN_NAME_TYPE_RAW_PLUS_VID_NO_PAD\neth2.10        | 10  | eth2\n"


def bond_tree(stacking=True):
    files = gid_tree(fixture_text("gids", BOND), pci_netdevs={"mlx5_bond_0": ["ens1f0np0"]})
    if stacking:
        files["class/net/bond0/"] = "lower_ens1f0np0\nlower_ens1f1np1\nbonding\n"
        files["class/net/bond0/uevent"] = "DEVTYPE=bond\n"
        files["class/net/bond0/bonding/slaves"] = "ens1f0np0 ens1f1np1\n"
    return files


def vlan_tree(flip_v2=()):
    files = gid_tree(fixture_text("gids", VLAN), pci_netdevs={"mlx4_0": ["eth2", "eth3"], "mlx5_0": ["eth4"]}, flip_v2=flip_v2)
    files["class/net/eth2.10/"] = "lower_eth2\n"
    files["class/net/eth2.10/uevent"] = "DEVTYPE=vlan\n"
    files["proc/net/vlan/config"] = VLAN_CONFIG
    return files


def test_bond_is_stacked_on_the_lag_port():
    dev = parse_sysfs_rdma(bond_tree())["devices"][0]
    assert dev["name"] == "mlx5_bond_0" and dev["netdev"] == "ens1f0np0"
    assert dev["upper_netdevs"] == [{"name": "bond0", "kind": "bond", "vlan_id": None, "lowers": ["ens1f0np0", "ens1f1np1"]}]


def test_bond_gid_table_gives_index_3():
    result = derive_nccl_env(parse_sysfs_rdma(bond_tree()))
    assert result["env"]["NCCL_IB_HCA"] == "=mlx5_bond_0:1"
    assert result["env"]["NCCL_IB_GID_INDEX"] == "3"
    assert result["hcas"][0]["roce_netdev"] == "bond0"


def test_bond_without_stacking_facts_is_the_reported_failure():
    # what the issue reproduced: the GIDs sit on bond0, not on the PCI netdev, and nothing says bond0 is on it
    fact = parse_sysfs_rdma(bond_tree(stacking=False))
    assert fact["devices"][0]["upper_netdevs"] == []
    with pytest.raises(NcclEnvError, match=r"no RoCE v2 GID .*netdev ens1f0np0 .*3 RoCEv2 10\.16\.29\.13 bond0"):
        derive_nccl_env(fact)


def test_vlan_is_stacked_with_its_id():
    devs = {d["name"]: d for d in parse_sysfs_rdma(vlan_tree())["devices"]}
    assert devs["mlx4_0"]["upper_netdevs"] == [{"name": "eth2.10", "kind": "vlan", "vlan_id": 10, "lowers": ["eth2"]}]
    assert devs["mlx5_0"]["upper_netdevs"] == []


def test_vlan_roce_v1_only_port_is_named_in_the_error():
    # the real table: the VLAN address of mlx4_0 has only a RoCE v1 GID (ConnectX-3)
    with pytest.raises(NcclEnvError, match=r"mlx4_0:1 .*stacked on it \(eth2\.10\).*2 RoCEv1 10\.10\.10\.2 eth2\.10"):
        derive_nccl_env(parse_sysfs_rdma(vlan_tree()), policy={"allow": ["mlx4_0:1"]})
    result = derive_nccl_env(parse_sysfs_rdma(vlan_tree()), policy={"allow": ["mlx5_0"]})
    assert result["env"]["NCCL_IB_GID_INDEX"] == "3"


def test_vlan_training_subnet_is_preferred():
    # SYNTHETIC: mlx4_0 port 1's GIDs typed RoCE v2 (as a ConnectX-4 or later would list them too)
    fact = parse_sysfs_rdma(vlan_tree(flip_v2={("mlx4_0", 1)}))
    plain = derive_nccl_env(fact, policy={"allow": ["mlx4_0:1"]})
    assert plain["env"]["NCCL_IB_GID_INDEX"] == "1"
    assert "several netdevs" in plain["reasons"]["NCCL_IB_GID_INDEX"] and "eth2.10" in plain["reasons"]["NCCL_IB_GID_INDEX"]
    training = derive_nccl_env(fact, policy={"allow": ["mlx4_0:1"], "subnet": "10.10.10.0/24"})
    assert training["env"]["NCCL_IB_GID_INDEX"] == "2"
    assert training["hcas"][0]["roce_netdev"] == "eth2.10"
    assert "VLAN 10" in training["reasons"]["NCCL_IB_HCA"]
    with pytest.raises(NcclEnvError, match="in subnet 192.168.0.0/16"):
        derive_nccl_env(fact, policy={"allow": ["mlx4_0:1"], "subnet": "192.168.0.0/16"})
    with pytest.raises(NcclEnvError, match="CIDR"):
        derive_nccl_env(fact, policy={"subnet": "vlan100"})


def test_facts_without_upper_list_accept_vlan_by_name():
    fact = parse_sysfs_rdma(vlan_tree(flip_v2={("mlx4_0", 1)}))
    for dev in fact["devices"]:
        del dev["upper_netdevs"]
    result = derive_nccl_env(fact, policy={"allow": ["mlx4_0:1"], "subnet": "10.10.10.0/24"})
    assert result["env"]["NCCL_IB_GID_INDEX"] == "2"


def test_vlan_config_parser():
    assert parse_vlan_config(VLAN_CONFIG) == {"eth2.10": {"vlan_id": 10, "lower": "eth2"}}
    for bad in ("eth2.10 | ten | eth2\n", "eth2.10 | 5000 | eth2\n", "garbage\n"):
        with pytest.raises(SysfsRdmaError, match="vlan config"):
            parse_vlan_config(bad)


def test_module_reads_the_stacking(tmp_path):
    sysfs, proc = tmp_path / "sys", tmp_path / "proc"
    for rel, text in vlan_tree(flip_v2={("mlx4_0", 1)}).items():
        if rel.startswith("proc/") or rel.startswith("class/net/") or rel.endswith("/device/net/"):
            continue
        path = sysfs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for dev, nets in (("mlx4_0", ["eth2", "eth3"]), ("mlx5_0", ["eth4"])):
        pci = sysfs / "devices" / dev
        for net in nets:
            (pci / "net" / net).mkdir(parents=True)
            (sysfs / "class" / "net").mkdir(parents=True, exist_ok=True)
            if not (sysfs / "class" / "net" / net).exists():
                os.symlink(str(pci / "net" / net), str(sysfs / "class" / "net" / net))
        os.symlink(str(pci), str(sysfs / "class" / "infiniband" / dev / "device"))
    vlan = sysfs / "class" / "net" / "eth2.10"
    vlan.mkdir()
    os.symlink(str(sysfs / "class" / "net" / "eth2"), str(vlan / "lower_eth2"))
    (vlan / "uevent").write_text("DEVTYPE=vlan\nINTERFACE=eth2.10\nIFINDEX=9\n")
    (proc / "net" / "vlan").mkdir(parents=True)
    (proc / "net" / "vlan" / "config").write_text(VLAN_CONFIG)
    files = rdma_info.read_tree(str(sysfs), str(proc))
    assert files["class/net/eth2.10/"] == "lower_eth2" and files["class/net/eth2.10/uevent"] == "DEVTYPE=vlan"
    devs = {d["name"]: d for d in parse_sysfs_rdma(files)["devices"]}
    assert devs["mlx4_0"]["upper_netdevs"] == [{"name": "eth2.10", "kind": "vlan", "vlan_id": 10, "lowers": ["eth2"]}]


# --- rail-optimised RoCE: one VLAN (or subnet) per rail (SYNTHETIC facts, shaped like rdma_info's) ---

def _rails(addresses):
    """Four 400 Gb/s RoCE ports, rail i on VLAN 101+i (netdev ens<i>np0.10<i+1>), with a RoCE v2 IPv4
    GID at index 3 holding addresses[i] (None: no IPv4 GID on that rail)."""
    devices = []
    for i, address in enumerate(addresses):
        netdev, vlan = "ens%dnp0" % i, "ens%dnp0.10%d" % (i, i + 1)
        gids = [{"index": 0, "gid": "fe80:0000:0000:0000:0000:0000:0000:%04x" % (i + 1), "type": "RoCEv1", "netdev": netdev, "ipv4": None}]
        if address:
            gids.append({"index": 3, "gid": "0000:0000:0000:0000:0000:ffff:%s" % address, "type": "RoCEv2",
                         "netdev": vlan, "ipv4": address})
        devices.append({"name": "mlx5_%d" % i, "netdev": netdev,
                        "upper_netdevs": [{"name": vlan, "kind": "vlan", "vlan_id": 101 + i, "lowers": [netdev]}],
                        "ports": [{"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 400,
                                   "link_layer": "Ethernet", "gids": gids}]})
    return {"source": "sysfs", "devices": devices, "peer_memory": []}


def test_a_vlan_per_rail_keeps_every_rail():
    # before: ports were grouped by (GID prefix, VLAN) and the biggest group kept: one rail of four
    result = derive_nccl_env(_rails(["10.1.0.5", "10.2.0.5", "10.3.0.5", "10.4.0.5"]))
    assert result["env"]["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"
    assert result["env"]["NCCL_IB_GID_INDEX"] == "3"
    assert "RoCE rails: 4 port(s) on VLANs 101, 102, 103, 104" in result["reasons"]["NCCL_IB_HCA"]


def test_a_training_subnet_leaves_out_a_port_outside_it_and_says_so():
    result = derive_nccl_env(_rails(["10.16.0.5", "10.16.1.5", "10.16.2.5", "192.168.7.5"]), policy={"subnet": "10.16.0.0/16"})
    assert result["env"]["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1,mlx5_2:1"
    assert "left out, no RoCE v2 IPv4 GID in the training subnet 10.16.0.0/16: mlx5_3:1" in result["reasons"]["NCCL_IB_HCA"]
    assert any("mlx5_3:1" in w and "rdma_hca_deny" in w for w in result["warnings"])


def test_a_rail_without_an_address_fails_naming_it():
    # before: silently left out (a node with a rail fewer than the others)
    with pytest.raises(NcclEnvError, match=r"RoCE port mlx5_2:1 has no RoCE v2 GID with an IPv4-mapped address"):
        derive_nccl_env(_rails(["10.1.0.5", "10.2.0.5", None, "10.4.0.5"]))
