# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of module_utils/_sysfs_rdma.py.

The sysfs trees here are BUILT BY THE TESTS from the real show_gids listings in
tests/fixtures/gids (gids/<i>, gid_attrs/types/<i>, gid_attrs/ndevs/<i>, device/net/).  show_gids
does not print port state, rate or link layer: where the same host's ibstat was published
(Hurray0/rdma_test) those values come from it; otherwise the test sets the port ACTIVE/LinkUp
at 100 Gb/s Ethernet and says so.
"""

from __future__ import annotations


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_rdma import (
    SysfsRdmaError,
    gid_ipv4,
    parse_show_gids,
    parse_sysfs_rdma,
)
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.sysfs_trees import gid_tree

IBM = "show_gids_CX6_ens1f0_RoCE_v1v2_ipv4_at_index4-5_ibm_ssnr_pr4.txt"
HURRAY = "show_gids_CX4_RoCE_linklocal_only_plus_IB_hurray0.txt"
NCCL1131 = "show_gids_2xCX_RoCE_ens3np0_ens2np0_rows_for_mlx5_0-1_nccl1131.txt"
MACVLAN = "show_gids_macvlan_pod_mlx5_0-1_rows_index4-7_nccl1573.txt"
ROCE_100G = {"state": "4: ACTIVE\n", "phys_state": "5: LinkUp\n", "rate": "100 Gb/sec (4X EDR)\n", "link_layer": "Ethernet\n",
             "lid": "0x0\n", "sm_lid": "0x0\n"}


def tree_from_show_gids(text, port_attrs=None):
    """The sysfs tree of a real show_gids listing; port values ``{device: {attr: text}}``, default ROCE_100G."""
    return gid_tree(text, port=lambda device: (port_attrs or {}).get(device) or ROCE_100G)


def test_show_gids_parser():
    rows = parse_show_gids(fixture_text("gids", IBM))
    assert len(rows) == 6
    assert rows[5] == {"device": "mlx5_0", "port": 1, "index": 5, "gid": "0000:0000:0000:0000:0000:ffff:ac13:003c",
                       "ipv4": "172.19.0.60", "version": "v2", "netdev": "ens1f0"}
    macvlan = parse_show_gids(fixture_text("gids", MACVLAN))
    assert [r["index"] for r in macvlan] == [4, 5, 6, 7, 4, 5, 6, 7]
    assert parse_show_gids(fixture_text("gids", HURRAY))[2]["netdev"] is None


def test_ibm_tree():
    fact = parse_sysfs_rdma(tree_from_show_gids(fixture_text("gids", IBM)))
    dev = fact["devices"][0]
    assert dev["name"] == "mlx5_0" and dev["netdev"] == "ens1f0"
    gids = dev["ports"][0]["gids"]
    assert [(g["index"], g["type"], g["ipv4"]) for g in gids] == [
        (0, "RoCEv1", None), (1, "RoCEv2", None), (2, "RoCEv1", None), (3, "RoCEv2", None),
        (4, "RoCEv1", "172.19.0.60"), (5, "RoCEv2", "172.19.0.60")]


def test_hurray_tree_with_its_ibstat_values():
    # port values from the same host's ibstat (Hurray0/rdma_test README): mlx5_0 RoCE active, mlx5_1 IB down
    attrs = {
        "mlx5_0": ROCE_100G,
        "mlx5_1": {"state": "1: DOWN\n", "phys_state": "3: Disabled\n", "rate": "10 Gb/sec (4X SDR)\n", "link_layer": "InfiniBand\n",
                   "lid": "0x2\n", "sm_lid": "0x1\n"},
    }
    fact = parse_sysfs_rdma(tree_from_show_gids(fixture_text("gids", HURRAY), attrs))
    ib = fact["devices"][1]["ports"][0]
    assert (ib["state"], ib["phys_state"], ib["lid"], ib["sm_lid"], ib["link_layer"]) == ("DOWN", "Disabled", 2, 1, "InfiniBand")
    assert ib["gids"][0]["type"] == "IB"


def test_unused_and_unreadable_gids_are_skipped():
    files = tree_from_show_gids(fixture_text("gids", IBM))
    pbase = "class/infiniband/mlx5_0/ports/1"
    files[pbase + "/gids/6"] = "0000:0000:0000:0000:0000:0000:0000:0000\n"      # unused entry
    files[pbase + "/gids/7"] = "fe80:0000:0000:0000:0000:0000:0000:0000\n"      # unused entry
    files[pbase + "/gids/8"] = "fe80:0000:0000:0000:0e42:a1ff:fe5d:4db9\n"      # type unreadable (EINVAL): absent
    del files[pbase + "/gid_attrs/types/0"]
    indexes = [g["index"] for g in parse_sysfs_rdma(files)["devices"][0]["ports"][0]["gids"]]
    assert indexes == [1, 2, 3, 4, 5]


def test_device_attributes_and_peer_memory():
    files = tree_from_show_gids(fixture_text("gids", NCCL1131))
    files["class/infiniband/mlx5_0/device@"] = "../../../0000:0c:00.0"
    files["class/infiniband/mlx5_0/device/numa_node"] = "1\n"
    files["class/infiniband/mlx5_0/fw_ver"] = "22.38.1002\n"
    files["class/infiniband/mlx5_1/device/numa_node"] = "-1\n"
    files["module/nvidia_peermem/"] = ""
    fact = parse_sysfs_rdma(files)
    first, second = fact["devices"]
    assert (first["pci_bus_id"], first["numa_node"], first["fw_ver"], first["netdev"]) == ("0000:0c:00.0", 1, "22.38.1002", "ens3np0")
    assert second["numa_node"] is None and second["netdev"] == "ens2np0"
    assert fact["peer_memory"] == ["nvidia_peermem"]


def test_no_rdma_device():
    assert parse_sysfs_rdma({}) == {"source": "sysfs", "devices": [], "peer_memory": [], "peer_memory_markers": [], "dma_buf": []}


def test_peer_memory_markers_in_the_order_of_the_list():
    # a peer-memory client's version file (MLNX_OFED's nv_mem, amdkfd's) is a marker; other paths are not
    files = {"kernel/mm/memory_peers/amdkfd/version": "", "kernel/mm/memory_peers/nv_mem/version": "",
             "kernel/mm/memory_peers/other/version": ""}
    assert parse_sysfs_rdma(files)["peer_memory_markers"] == [
        "kernel/mm/memory_peers/nv_mem/version", "kernel/mm/memory_peers/amdkfd/version"]


@pytest.mark.parametrize("attr,value", [("state", "9: WHAT\n"), ("rate", "fast\n"), ("link_layer", "Token Ring\n"), ("phys_state", "\n")])
def test_bad_port_values(attr, value):
    files = tree_from_show_gids(fixture_text("gids", IBM))
    files["class/infiniband/mlx5_0/ports/1/%s" % attr] = value
    with pytest.raises(SysfsRdmaError):
        parse_sysfs_rdma(files)


def test_missing_port_attribute():
    files = tree_from_show_gids(fixture_text("gids", IBM))
    del files["class/infiniband/mlx5_0/ports/1/state"]
    with pytest.raises(SysfsRdmaError, match="state is missing"):
        parse_sysfs_rdma(files)


@pytest.mark.parametrize("state, phys_state", [("1: DOWN\n", "2: Polling\n"), ("1: DOWN\n", "3: Disabled\n"),
                                               ("2: INIT\n", "5: LinkUp\n")])
def test_port_without_a_link_has_no_rate(state, phys_state):
    # Hurray0's IB port is DOWN (its ibstat); SYNTHETIC: its rate file is dropped, as on a port with no cable or
    # QSFP in the cage, whose rate the kernel refuses to read (EINVAL: no link width) so the probe has no entry
    attrs = {"mlx5_0": ROCE_100G,
             "mlx5_1": {"state": state, "phys_state": phys_state, "link_layer": "InfiniBand\n", "lid": "0x2\n", "sm_lid": "0x1\n"}}
    fact = parse_sysfs_rdma(tree_from_show_gids(fixture_text("gids", HURRAY), attrs))
    down = fact["devices"][1]["ports"][0]
    assert down["rate_gbps"] is None and down["link_layer"] == "InfiniBand" and down["sm_lid"] == 1
    assert down["gids"][0]["type"] == "IB"
    assert fact["devices"][0]["ports"][0]["rate_gbps"] == 100


def test_active_port_without_a_rate_is_still_an_error():
    files = tree_from_show_gids(fixture_text("gids", IBM))
    del files["class/infiniband/mlx5_0/ports/1/rate"]
    with pytest.raises(SysfsRdmaError, match="rate is missing"):
        parse_sysfs_rdma(files)
    # a rate that is there but is not one stays an error whatever the state
    files["class/infiniband/mlx5_0/ports/1/rate"] = "fast\n"
    files["class/infiniband/mlx5_0/ports/1/state"] = "1: DOWN\n"
    with pytest.raises(SysfsRdmaError, match="rate 'fast'"):
        parse_sysfs_rdma(files)


@pytest.mark.parametrize("value", [None, [], "text", {1: "x"}, {"class/infiniband/x/ports/one/state": "4: ACTIVE"}])
def test_not_a_tree(value):
    with pytest.raises(SysfsRdmaError):
        parse_sysfs_rdma(value)


def test_gid_ipv4():
    assert gid_ipv4("0000:0000:0000:0000:0000:ffff:0a98:040c") == "10.152.4.12"
    assert gid_ipv4("fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8") is None


LISTINGS = [fixture_text("gids", IBM), fixture_text("gids", HURRAY), fixture_text("gids", NCCL1131), fixture_text("gids", MACVLAN)]


def _checked_show_gids(text):
    try:
        return parse_show_gids(text)
    except SysfsRdmaError:
        return None


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(range(len(LISTINGS))), st.floats(0, 1))
def test_truncated_show_gids(which, fraction):
    text = LISTINGS[which]
    _checked_show_gids(text[:int(len(text) * fraction)])


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(range(len(LISTINGS))), st.randoms(use_true_random=False))
def test_reordered_show_gids(which, rnd):
    lines = LISTINGS[which].splitlines()
    rnd.shuffle(lines)
    _checked_show_gids("\n".join(lines))


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_show_gids(text):
    _checked_show_gids(text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(range(len(LISTINGS))), st.dictionaries(st.sampled_from(
    ["state", "phys_state", "rate", "link_layer", "lid", "sm_lid", "gids/3", "gid_attrs/types/3", "gid_attrs/ndevs/3", "gids/99"]),
    st.text(max_size=40), max_size=4))
def test_garbled_tree_gives_own_error(which, overrides):
    files = tree_from_show_gids(LISTINGS[which])
    for attr, value in overrides.items():
        files["class/infiniband/mlx5_0/ports/1/" + attr] = value
    try:
        fact = parse_sysfs_rdma(files)
    except SysfsRdmaError:
        return
    assert fact["devices"][0]["name"] == "mlx5_0"
