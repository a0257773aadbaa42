# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests of the perftest bandwidth parser, over the real fixtures (tests/fixtures/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._perftest import (
    MB_PER_SEC_IN_GBPS,
    PerftestParseError,
    parse_perftest_bw,
)
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.fuzz_inputs import parser_tests

ROCM = "ib_write_bw_bidir_report_gbits_a_RoCE_use_rocm_rocmdocs.txt"
POST_LIST = "ib_write_bw_post_list_duration_report_gbits_RoCE_perftest273.txt"
MIB = "ib_write_bw_a_use_rocm_MiB_MI355X_AINIC_ionic_alibaba.txt"
FIXTURE_NAMES = [ROCM, POST_LIST, MIB]


CASES = [
    (ROCM, {
        "test": "RDMA_Write Bidirectional BW Test", "operation": "write", "bidirectional": True,
        "device": "<RDMA-NIC-2>", "link_type": "Ethernet", "transport_type": "IB",
        "connection_type": "RC", "gid_index": 3, "mtu_bytes": 4096, "qps": 1, "unit": "Gb/sec",
        "complete": True, "bw_peak_max_gbps": 204.59, "bw_average_max_gbps": 204.59,
    }, 23,
        {"bytes": 2, "iterations": 5000, "bw_peak": 0.142947, "bw_average": 0.012281,
         "msg_rate_mpps": 0.767588, "bw_peak_gbps": 0.142947, "bw_average_gbps": 0.012281},
        {"bytes": 8388608, "iterations": 5000, "bw_peak": 204.59, "bw_average": 204.59,
         "msg_rate_mpps": 0.003049, "bw_peak_gbps": 204.59, "bw_average_gbps": 204.59}),
    (POST_LIST, {
        "test": "RDMA_Write Post List BW Test", "operation": "write", "bidirectional": False,
        "device": "ib0", "link_type": "Ethernet", "transport_type": "IB",
        "connection_type": "RC", "gid_index": 2, "mtu_bytes": 4096, "qps": 1, "unit": "Gb/sec",
        "complete": True, "bw_peak_max_gbps": 0.0, "bw_average_max_gbps": 0.48,
    }, 1,
        {"bytes": 8, "iterations": 224958464, "bw_peak": 0.0, "bw_average": 0.48,
         "msg_rate_mpps": 7.498617, "bw_peak_gbps": 0.0, "bw_average_gbps": 0.48},
        None),
    # perftest 24.07.0 and later without --report_gbits: MiB/sec, 2**20 bytes/s like the old MB/sec
    (MIB, {
        "test": "RDMA_Write BW Test", "operation": "write", "bidirectional": False,
        "device": "ionic_0", "link_type": "Ethernet", "transport_type": "IB",
        "connection_type": "RC", "gid_index": 0, "mtu_bytes": 4096, "qps": 1, "unit": "MiB/sec",
        "complete": True, "bw_peak_max_gbps": 166.754202, "bw_average_max_gbps": 166.695734,
    }, 23,
        {"bytes": 2, "iterations": 5000, "bw_peak": 6.82, "bw_average": 6.76,
         "msg_rate_mpps": 3.543784, "bw_peak_gbps": 0.05721, "bw_average_gbps": 0.056707},
        {"bytes": 8388608, "iterations": 5000, "bw_peak": 19044.44, "bw_average": 19044.43,
         "msg_rate_mpps": 0.002381, "bw_peak_gbps": 159.756342, "bw_average_gbps": 159.756258}),
]


@pytest.mark.parametrize("name, expected, n_rows, first, last", CASES,
                         ids=[Path(c[0]).stem for c in CASES])
def test_fixture(name, expected, n_rows, first, last):
    result = parse_perftest_bw(fixture_text("perftest", name))
    rows = result.pop("rows")
    assert result == expected
    assert len(rows) == n_rows
    assert rows[0] == first
    assert rows[-1] == (last or first)


def test_row_at_64k_of_the_rocm_run():
    rows = parse_perftest_bw(fixture_text("perftest", ROCM))["rows"]
    row = next(r for r in rows if r["bytes"] == 65536)
    assert (row["bw_peak"], row["bw_average"], row["msg_rate_mpps"]) == (204.12, 203.85, 0.388818)


def test_megabytes_are_converted_with_perftest_factor():
    # synthetic: the real ROCm table printed in perftest's default MB/sec unit (header swapped)
    text = fixture_text("perftest", ROCM).replace("[Gb/sec]", "[MB/sec]")
    result = parse_perftest_bw(text)
    assert result["unit"] == "MB/sec"
    last = result["rows"][-1]
    assert last["bw_average"] == 204.59
    assert last["bw_average_gbps"] == round(204.59 * 1048576 * 8 / 1e9, 6)
    assert MB_PER_SEC_IN_GBPS == pytest.approx(0.008388608)


def test_mebibytes_per_second_are_2_pow_20_bytes():
    # perftest's format_factor 0x100000 for its default unit: MiB/sec and the older MB/sec label
    # are the same unit, so the real MiB/sec row converts exactly like an MB/sec one.
    last = parse_perftest_bw(fixture_text("perftest", MIB))["rows"][-1]
    assert last["bw_average"] == 19044.43
    assert last["bw_average_gbps"] == round(19044.43 * MB_PER_SEC_IN_GBPS, 6) == 159.756258
    relabelled = parse_perftest_bw(fixture_text("perftest", MIB).replace("[MiB/sec]", "[MB/sec]"))
    assert relabelled["unit"] == "MB/sec"  # synthetic: the real MiB table with the pre-24.07 label
    assert relabelled["rows"] == parse_perftest_bw(fixture_text("perftest", MIB))["rows"]


@pytest.mark.parametrize("label", ["Mb/sec", "mib/sec", "GB/sec"])
def test_unit_labels_perftest_never_prints_are_refused(label):
    # synthetic: the real MiB/sec table with a label perftest does not print; "Mb/sec" (megabits)
    # read as 2**20 bytes would be 8.4 times too high, so the table is not read at all
    text = fixture_text("perftest", MIB).replace("[MiB/sec]", "[%s]" % label)
    with pytest.raises(PerftestParseError, match="no perftest bandwidth table found"):
        parse_perftest_bw(text)


def test_interleaved_cpu_frequency_warning_is_skipped():
    # synthetic: perftest's CPU frequency warning placed between two real rows
    text = fixture_text("perftest", ROCM).replace(
        "4          5000",
        "Conflicting CPU frequency values detected: 1500.000000 != 3300.016000. "
        "CPU Frequency is not max.\n4          5000")
    assert len(parse_perftest_bw(text)["rows"]) == 23


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_crlf_gives_the_same_result(name):
    text = fixture_text("perftest", name)
    assert parse_perftest_bw(text.replace("\n", "\r\n")) == parse_perftest_bw(text)


def test_table_without_closing_line_is_incomplete():
    text = fixture_text("perftest", ROCM)
    cut = text[: text.rindex("-----")].rstrip("-\n")  # synthetic: the closing dashes lost
    result = parse_perftest_bw(cut)
    assert result["complete"] is False
    assert len(result["rows"]) == 23


def test_header_without_rows():
    text = fixture_text("perftest", ROCM)
    with pytest.raises(PerftestParseError, match="no result row"):
        parse_perftest_bw(text[: text.index("2          5000")])


def test_two_tables_are_refused():
    text = fixture_text("perftest", POST_LIST)
    with pytest.raises(PerftestParseError, match="one run at a time"):
        parse_perftest_bw(text + text)


@pytest.mark.parametrize("text", ["", "ib_write_bw: command not found\n",
                                  "#bytes #iterations t_min[usec] t_max[usec]\n2 1000 1.0 2.0\n"])
def test_not_a_bandwidth_table(text):
    with pytest.raises(PerftestParseError):
        parse_perftest_bw(text)


def _shape(result):
    assert isinstance(result, dict)
    assert result["rows"]


test_property_garbled_fixture, test_property_arbitrary_text, test_property_reordered_lines, test_not_text = parser_tests(
    parse_perftest_bw, PerftestParseError, [fixture_text("perftest", name) for name in FIXTURE_NAMES], _shape)
