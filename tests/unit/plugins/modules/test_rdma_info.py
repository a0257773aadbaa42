# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the rdma_info module.

The sysfs directories are BUILT BY THE TESTS from real show_gids listings (tests/fixtures/gids):
gids/<i>, gid_attrs/types/<i>, gid_attrs/ndevs/<i> and device/net/ come from the listing; port
state, rate and link layer are not in it and are set ACTIVE/LinkUp 100 Gb/s Ethernet by the test.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._fabric import check_fabric
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import NcclEnvError, derive_nccl_env
from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_rdma import parse_show_gids
from ansible_collections.gpucluster.training.plugins.module_utils._validate_hardware import limits, node_hardware
from ansible_collections.gpucluster.training.plugins.modules import rdma_info
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.module_harness import Exit, Fail, exits, run_main  # noqa: F401  pylint: disable=unused-import

IBM = "show_gids_CX6_ens1f0_RoCE_v1v2_ipv4_at_index4-5_ibm_ssnr_pr4.txt"
NCCL1131 = "show_gids_2xCX_RoCE_ens3np0_ens2np0_rows_for_mlx5_0-1_nccl1131.txt"


def run(args, expect=Exit):
    return run_main(rdma_info.main, args, expect)


def build_sysfs(root, listing, pci="0000:0c:00.0"):
    """Write a sysfs tree under root from a real show_gids listing (see the module docstring)."""
    for row in parse_show_gids(fixture_text("gids", listing)):
        dev = root / "class" / "infiniband" / row["device"]
        port = dev / "ports" / str(row["port"])
        for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
            (port / sub).mkdir(parents=True, exist_ok=True)
        for name, value in (("state", "4: ACTIVE"), ("phys_state", "5: LinkUp"), ("rate", "100 Gb/sec (4X EDR)"),
                            ("link_layer", "Ethernet"), ("lid", "0x0"), ("sm_lid", "0x0")):
            (port / name).write_text(value + "\n")
        (port / "gids" / str(row["index"])).write_text(row["gid"] + "\n")
        (port / "gid_attrs" / "types" / str(row["index"])).write_text("RoCE v2\n" if row["version"] == "v2" else "IB/RoCE v1\n")
        if row["netdev"]:
            (port / "gid_attrs" / "ndevs" / str(row["index"])).write_text(row["netdev"] + "\n")
        pcidir = root / "devices" / row["device"] / pci
        (pcidir / "net" / (row["netdev"] or "ib0")).mkdir(parents=True, exist_ok=True)
        (pcidir / "numa_node").write_text("0\n")
        if not (dev / "device").exists():
            os.symlink(str(pcidir), str(dev / "device"))
    # an unused all-zero entry, and one whose type the kernel refuses to read (no types/<i> file)
    port = root / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    (port / "gids" / "30").write_text("0000:0000:0000:0000:0000:0000:0000:0000\n")
    (port / "gids" / "31").write_text("fe80:0000:0000:0000:0000:0000:0000:0001\n")


def test_roce_tree_then_nccl_env(tmp_path):
    build_sysfs(tmp_path, IBM)
    (tmp_path / "module" / "nvidia_peermem").mkdir(parents=True)
    # SYNTHETIC /proc/driver/nvidia/version in the form of NVIDIA's open kernel module (R535)
    (tmp_path / "proc" / "driver" / "nvidia").mkdir(parents=True)
    (tmp_path / "proc" / "driver" / "nvidia" / "version").write_text(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.54.03  Release Build\n")
    result = run({"sysfs_root": str(tmp_path), "procfs_root": str(tmp_path / "proc")})
    fact = result["ansible_facts"]["gpucluster_rdma"]
    dev = fact["devices"][0]
    assert (dev["name"], dev["netdev"], dev["numa_node"], dev["pci_bus_id"]) == ("mlx5_0", "ens1f0", 0, "0000:0c:00.0")
    assert [g["index"] for g in dev["ports"][0]["gids"]] == [0, 1, 2, 3, 4, 5]
    assert fact["peer_memory"] == ["nvidia_peermem"] and fact["dma_buf"] == ["nvidia-open"]
    assert fact["peer_memory_markers"] == []
    assert result["msg"] == "1 RDMA device(s), 1 active port(s): mlx5_0:1 Ethernet 100 Gb/s"
    env = derive_nccl_env(fact)["env"]
    assert env["NCCL_IB_GID_INDEX"] == "5" and env["NCCL_IB_HCA"] == "=mlx5_0:1" and "NCCL_NET_GDR_LEVEL" not in env


def test_two_port_tree(tmp_path):
    build_sysfs(tmp_path, NCCL1131)
    fact = run({"sysfs_root": str(tmp_path)})["ansible_facts"]["gpucluster_rdma"]
    assert [d["netdev"] for d in fact["devices"]] == ["ens3np0", "ens2np0"]
    assert derive_nccl_env(fact)["env"]["NCCL_IB_GID_INDEX"] == "3"


def test_port_without_a_link_whose_rate_cannot_be_read(tmp_path):
    build_sysfs(tmp_path, NCCL1131)
    # SYNTHETIC: mlx5_1's cage is empty (DOWN/Polling) and its rate cannot be read (the kernel answers EINVAL
    # without a link width); a directory in its place makes the read fail the same way in a tmp tree
    port = tmp_path / "class" / "infiniband" / "mlx5_1" / "ports" / "1"
    (port / "state").write_text("1: DOWN\n")
    (port / "phys_state").write_text("2: Polling\n")
    (port / "rate").unlink()
    (port / "rate").mkdir()
    result = run({"sysfs_root": str(tmp_path)})
    assert result["msg"] == "2 RDMA device(s), 1 active port(s): mlx5_0:1 Ethernet 100 Gb/s"
    fact = result["ansible_facts"]["gpucluster_rdma"]
    assert [p["rate_gbps"] for d in fact["devices"] for p in d["ports"]] == [100, None]
    # the consumers of rate_gbps use the active ports only
    derived = derive_nccl_env(fact, network={"default_ipv4": {"interface": "eno1"}})
    assert derived["env"]["NCCL_IB_HCA"] == "=mlx5_0:1" and derived["hcas"][0]["rate_gbps"] == 100
    fabric = check_fabric([{"host": "n1", "rdma": fact, "env": derived["env"]}])
    assert fabric["ok"] and fabric["nodes"]["n1"]["rate_gbps"] == 100
    hardware = node_hardware(rdma=fact)
    assert [(p["name"], p["rate_gbps"]) for p in hardware["ports"]] == [("mlx5_0:1", 100.0)]
    assert limits(hardware)["inter_node_gbs"] == 12.5
    # a recorded port that has since lost its link: the judge gets it without a rate; the derivation's error lists it
    assert node_hardware(rdma=fact, hcas=["mlx5_1:1"])["ports"][0]["rate_gbps"] is None
    with pytest.raises(NcclEnvError, match="mlx5_1:1 DOWN/Polling Ethernet"):
        derive_nccl_env(fact, policy={"allow": ["mlx5_1"]})


def test_no_rdma_device(tmp_path):
    result = run({"sysfs_root": str(tmp_path)})
    assert result["ansible_facts"]["gpucluster_rdma"]["devices"] == []
    assert result["msg"].startswith("no RDMA device found")


def test_ibstat_capture():
    text = fixture_text("ibstat", "ibstat_H100_8xCX7-NDR400-IB_plus_4xCX6Dx-Ethernet_mooncake2039.txt")
    result = run({"ibstat_output": text, "_ansible_check_mode": True})
    assert result["ansible_facts"]["gpucluster_rdma"]["source"] == "ibstat"
    assert "12 RDMA device(s), 10 active port(s)" in result["msg"]


@pytest.mark.parametrize("text", ["", "garbage", "CA 'mlx5_0'\n\tNumber of ports: 1\n"])
def test_bad_ibstat_fails_cleanly(text):
    assert run({"ibstat_output": text}, expect=Fail)["msg"].startswith("ibstat:")


def test_garbled_sysfs_fails_cleanly(tmp_path):
    build_sysfs(tmp_path, IBM)
    (tmp_path / "class" / "infiniband" / "mlx5_0" / "ports" / "1" / "rate").write_text("very fast\n")
    assert "rate" in run({"sysfs_root": str(tmp_path)}, expect=Fail)["msg"]


def test_peer_memory_client_markers_read_in_the_same_call(tmp_path):
    build_sysfs(tmp_path, NCCL1131)
    # the version file a peer-memory client (MLNX_OFED's nv_mem) registers, under the sysfs root
    marker = tmp_path / "kernel" / "mm" / "memory_peers" / "nv_mem"
    marker.mkdir(parents=True)
    (marker / "version").write_text("1.3\n")
    fact = run({"sysfs_root": str(tmp_path)})["ansible_facts"]["gpucluster_rdma"]
    assert fact["peer_memory_markers"] == ["kernel/mm/memory_peers/nv_mem/version"]
    assert fact["peer_memory"] == []
