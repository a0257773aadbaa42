# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests of the NCCL_DEBUG=INFO log parser, over the real fixtures (tests/fixtures/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._nccl_log import (
    NcclLogParseError,
    parse_nccl_log,
)
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.fuzz_inputs import parser_tests

GDRDMA = "nccl_gather_perf_2node_A100_RoCE+IB_GDRDMA_nccl2.16.5_nccltests350.log"
NO_GDRDMA = "nccl_horovod_2node_V100_IB_mlx4_noGDRDMA_mpi_prefix_nccl2.16.2_supersecurehuman.log"
SOCKET = "rccl_ddp_1node_2x7900XTX_socket_fallback_rccl2.17.1_rccl1055.log"
PLUGIN = "nccl_alltoall_2node_H20_RoCE_bond_NCCL_RDMA_Plugin_v6_GDRDMA_nccl2.26.5_nccltests321.log"
FIXTURE_NAMES = [GDRDMA, NO_GDRDMA, SOCKET, PLUGIN]


CASES = [
    (GDRDMA, {
        "version": "2.16.5+cuda11.8", "library": "NCCL", "network": "IB", "rdma": True,
        "gdrdma": True, "socket_fallback": False, "hcas": ["mlx5_0:1", "mlx5_2:1"],
        "hca_link_layers": {"mlx5_0:1": "RoCE", "mlx5_2:1": "IB"}, "gid_index": None,
        "oob_interface": "ibp209s0f0", "hosts": ["n013"], "socket_lines": [],
    }, 6, {"host": "n013", "line": 53, "channel": 0, "from_rank": 1, "to_rank": 0,
           "direction": "receive", "transport": "IB", "device": 1, "gdrdma": True,
           "shared": False}),
    (NO_GDRDMA, {
        "version": "2.16.2+cuda11.0", "library": "NCCL", "network": "IB", "rdma": True,
        "gdrdma": False, "socket_fallback": False, "hcas": ["mlx4_0:1", "mlx4_0:2"],
        "hca_link_layers": {"mlx4_0:1": "IB", "mlx4_0:2": "IB"}, "gid_index": None,
        "oob_interface": "ib0", "hosts": ["node01", "node03"], "socket_lines": [],
    }, 8, {"host": "node01", "line": 20, "channel": 0, "from_rank": 1, "to_rank": 0,
           "direction": "receive", "transport": "IB", "device": 1, "gdrdma": False,
           "shared": False}),
    (SOCKET, {
        "version": "2.17.1+hip5.7", "library": "RCCL", "network": "Socket", "rdma": False,
        "gdrdma": None, "socket_fallback": True, "hcas": [], "hca_link_layers": {},
        "gid_index": None, "oob_interface": "eth0", "hosts": ["9cce34ff6c6c"],
        "socket_lines": [
            {"host": "9cce34ff6c6c", "line": 14,
             "text": "9cce34ff6c6c:505250:505433 [1] NCCL INFO Using network Socket"},
            {"host": "9cce34ff6c6c", "line": 35,
             "text": "9cce34ff6c6c:504930:505428 [0] NCCL INFO Using network Socket"},
        ],
    }, 0, None),
    # A network plugin (Tencent Cloud's "NCCL RDMA Plugin v6", a build of nccl-rdma-sharp-plugins):
    # the transport name holds spaces, GDRDMA is the segment after the device (issue 15.2).
    (PLUGIN, {
        "version": "2.26.5+cuda12.2", "library": "NCCL", "network": "NCCL RDMA Plugin v6", "rdma": True,
        "gdrdma": True, "socket_fallback": False, "hcas": ["mlx5_bond_6:1", "mlx5_bond_7:1"],
        "hca_link_layers": {"mlx5_bond_6:1": "RoCE", "mlx5_bond_7:1": "RoCE"}, "gid_index": 3,
        "oob_interface": "bond0", "hosts": ["vm-host40", "vm-host38"], "socket_lines": [],
    }, 12, {"host": "vm-host38", "line": 49, "channel": 1, "from_rank": 1, "to_rank": 2,
            "direction": "receive", "transport": "NCCL RDMA Plugin v6", "device": 0, "gdrdma": True,
            "shared": True}),
]


@pytest.mark.parametrize("name, expected, n_channels, first_channel", CASES,
                         ids=[Path(c[0]).stem for c in CASES])
def test_fixture(name, expected, n_channels, first_channel):
    result = parse_nccl_log(fixture_text("nccl-log", name))
    channels = result.pop("channels")
    assert result == expected
    assert len(channels) == n_channels
    if first_channel:
        assert channels[0] == first_channel


def test_gdrdma_fixture_marks_shared_channels():
    channels = parse_nccl_log(fixture_text("nccl-log", GDRDMA))["channels"]
    assert [c["shared"] for c in channels] == [False, False, False, False, True, True]
    assert {c["direction"] for c in channels} == {"send", "receive"}


@pytest.mark.parametrize("name", FIXTURE_NAMES, ids=[Path(n).stem for n in FIXTURE_NAMES])
def test_crlf_gives_the_same_result(name):
    text = fixture_text("nccl-log", name)
    assert parse_nccl_log(text.replace("\n", "\r\n")) == parse_nccl_log(text)


def test_srun_label_prefix():
    text = fixture_text("nccl-log", GDRDMA)
    labelled = "\n".join(" 0: " + line for line in text.splitlines())  # synthetic prefix
    assert parse_nccl_log(labelled) == parse_nccl_log(text)


@pytest.mark.parametrize("line, transport, device, gdrdma, shared", [
    # synthetic single lines in the channel formats of published logs (NCCL 2.2x / plugins)
    ("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/2(3)/GDRDMA",
     "IB", 2, True, False),
    ("h:1:2 [7] NCCL INFO Channel 03/0 : 47[7] -> 39[7] [receive] via NET/IBext_v8/2",
     "IBext_v8", 2, False, False),
    ("h:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Libfabric/0/GDRDMA/flush=None",
     "Libfabric", 0, True, False),
    ("h:1:2 [1] NCCL INFO Channel 05/1 : 3[1] -> 0[0] [send] via NET/IB/12/GDRDMA/Shared",
     "IB", 12, True, True),
    ("h:1:2 [0] NCCL INFO Channel 00/0 : 3[0] -> 0[0] [receive] via NET/Socket/0",
     "Socket", 0, False, False),
    ("h:1:2 [0] NCCL INFO Ring 00 : 3 -> 10 [send] via NET/IB/0/GDRDMA",  # NCCL 2.4
     "IB", 0, True, False),
    ("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
     None, None, None, None),
    # The plugin lines of NVIDIA/nccl-tests#321 (tests/fixtures/SOURCES.md), proxy device in brackets.
    ("vm-host38:33958:34017 [1] NCCL INFO Channel 01/1 : 3[0] -> 0[1] [send] via NET/NCCL RDMA Plugin v6/0(2)/GDRDMA/Shared",
     "NCCL RDMA Plugin v6", 0, True, True),
    ("h:1:2 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [receive] via NET/IBext/0/GDRDMA",
     "IBext", 0, True, False),
])
def test_channel_formats(line, transport, device, gdrdma, shared):
    result = parse_nccl_log(line)
    if transport is None:
        assert result["channels"] == []
        return
    (channel,) = result["channels"]
    assert (channel["transport"], channel["device"], channel["gdrdma"], channel["shared"]) == (
        transport, device, gdrdma, shared)
    assert result["socket_fallback"] is (transport == "Socket")
    assert result["rdma"] is (transport != "Socket")


def test_gid_index_from_environment_line():
    # synthetic line in the form NCCL prints it
    text = "h:1:2 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.\n"
    assert parse_nccl_log(text)["gid_index"] == 3


@pytest.mark.parametrize("text", ["", "\n", "nothing to see\n", "NET/IB : Using [0]mlx5_0:1/IB\n"])
def test_not_a_log(text):
    with pytest.raises(NcclLogParseError):
        parse_nccl_log(text)


def _shape(result):
    assert isinstance(result, dict)
    assert isinstance(result["socket_fallback"], bool)
    assert all(isinstance(c["line"], int) for c in result["channels"])


test_property_garbled_fixture, test_property_arbitrary_text, test_property_reordered_lines, test_not_text = parser_tests(
    parse_nccl_log, NcclLogParseError, [fixture_text("nccl-log", name) for name in FIXTURE_NAMES], _shape)
