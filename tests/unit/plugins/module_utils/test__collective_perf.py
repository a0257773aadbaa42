# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests of the nccl-tests / rccl-tests parser, over the real fixtures (tests/fixtures/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._collective_perf import (
    CollectivePerfParseError,
    parse_collective_perf,
)
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.fuzz_inputs import parser_tests


# name, complete, nodes, ranks, gpu_model, n_rows, first row, last out-of-place, avg, max, wrong_total
CASES = [
    (
        "nccl-tests/nccl_all_reduce_perf_4node_DGX-A100_IB_error_column_deepops.txt",
        True, None, None, None, 13,
        {"size_bytes": 1048576, "count": 262144, "type": "float", "redop": "sum", "root": None,
         "out_of_place": {"time_us": 135.3, "algbw_gbps": 7.75, "busbw_gbps": 15.02, "wrong": 7e-07},
         "in_place": {"time_us": 132.7, "algbw_gbps": 7.90, "busbw_gbps": 15.31, "wrong": 7e-07}},
        {"size_bytes": 4294967296, "oop": {"time_us": 43557.0, "algbw_gbps": 98.61,
                                           "busbw_gbps": 191.05, "wrong": 1e-06}},
        113.289, 191.56, 0,
    ),
    (
        "nccl-tests/nccl_all_reduce_perf_2node_16xH100_OCI_RoCE_ocitutorials.txt",
        True, 2, 16, "NVIDIA H100 80GB HBM3", 5,
        {"size_bytes": 1073741824, "count": 268435456, "type": "float", "redop": "sum", "root": -1,
         "out_of_place": {"time_us": 4511.2, "algbw_gbps": 238.02, "busbw_gbps": 446.28, "wrong": 0},
         "in_place": {"time_us": 4520.9, "algbw_gbps": 237.50, "busbw_gbps": 445.32, "wrong": 0}},
        {"size_bytes": 17179869184, "oop": {"time_us": 69338.0, "algbw_gbps": 247.77,
                                            "busbw_gbps": 464.57, "wrong": 0}},
        458.452, 464.79, 0,
    ),
    (
        "nccl-tests/rccl_all_reduce_perf_2node_16xMI300X_RoCE_hisohara.txt",
        True, 2, 16, "AMD Instinct MI300X", 32,
        {"size_bytes": 8, "count": 2, "type": "float", "redop": "sum", "root": -1,
         "out_of_place": {"time_us": 256.5, "algbw_gbps": 0.0, "busbw_gbps": 0.0, "wrong": 0},
         "in_place": {"time_us": 254.7, "algbw_gbps": 0.0, "busbw_gbps": 0.0, "wrong": 0}},
        {"size_bytes": 17179869184, "oop": {"time_us": 90115.0, "algbw_gbps": 190.64,
                                            "busbw_gbps": 357.46, "wrong": 0}},
        92.3318, 357.46, 0,
    ),
    (
        "nccl-tests/rccl_all_reduce_perf_2node_16xMI355X_Pollara_no_summary_hisohara.txt",
        False, 2, 16, None, 31,
        {"size_bytes": 8, "count": 2, "type": "float", "redop": "sum", "root": -1,
         "out_of_place": {"time_us": 41.16, "algbw_gbps": 0.0, "busbw_gbps": 0.0, "wrong": 0},
         "in_place": {"time_us": 39.80, "algbw_gbps": 0.0, "busbw_gbps": 0.0, "wrong": 0}},
        {"size_bytes": 8589934592, "oop": {"time_us": 43643.0, "algbw_gbps": 196.82,
                                           "busbw_gbps": 369.04, "wrong": 0}},
        None, 369.08, 0,
    ),
    (
        "nccl-tests/rccl_all_reduce_perf_4node_32xMI250X_srun_label_rccl1490.txt",
        True, None, None, None, 17,
        {"size_bytes": 65536, "count": 16384, "type": "float", "redop": "sum", "root": -1,
         "out_of_place": {"time_us": 78.91, "algbw_gbps": 0.83, "busbw_gbps": 1.61, "wrong": 0},
         "in_place": {"time_us": 77.42, "algbw_gbps": 0.85, "busbw_gbps": 1.64, "wrong": 0}},
        {"size_bytes": 4294967296, "oop": {"time_us": 89585.0, "algbw_gbps": 47.94,
                                           "busbw_gbps": 92.89, "wrong": 0}},
        43.7269, 92.89, 0,
    ),
    (
        "nccl-tests/rccl_all_gather_perf_4node_32xMI250X_srun_label_cut_header_rccl1490.txt",
        True, None, None, None, 17,
        {"size_bytes": 65536, "count": 512, "type": "float", "redop": "none", "root": -1,
         "out_of_place": {"time_us": 107.5, "algbw_gbps": 0.61, "busbw_gbps": 0.59, "wrong": 0},
         "in_place": {"time_us": 105.6, "algbw_gbps": 0.62, "busbw_gbps": 0.60, "wrong": 0}},
        {"size_bytes": 4294967296, "oop": {"time_us": 44904.0, "algbw_gbps": 95.65,
                                           "busbw_gbps": 92.66, "wrong": 0}},
        37.9868, 92.74, 0,
    ),
    (
        "nccl-log/nccl_gather_perf_2node_A100_RoCE+IB_GDRDMA_nccl2.16.5_nccltests350.log",
        False, 2, 2, "NVIDIA A100-PCIE-40GB", 8,
        {"size_bytes": 134217728, "count": 16777216, "type": "float", "redop": "none", "root": 0,
         "out_of_place": {"time_us": 3324.7, "algbw_gbps": 40.37, "busbw_gbps": 20.19, "wrong": 0},
         "in_place": {"time_us": 3003.4, "algbw_gbps": 44.69, "busbw_gbps": 22.34, "wrong": 0}},
        {"size_bytes": 1073741824, "oop": {"time_us": 27257.0, "algbw_gbps": 39.39,
                                           "busbw_gbps": 19.70, "wrong": 0}},
        None, 23.12, 0,
    ),
]
FIXTURE_NAMES = [case[0] for case in CASES]


@pytest.mark.parametrize(
    "name, complete, nodes, ranks, gpu_model, n_rows, first, last, avg, busbw_max, wrong_total",
    CASES,
    ids=[Path(case[0]).stem for case in CASES],
)
def test_fixture(name, complete, nodes, ranks, gpu_model, n_rows, first, last, avg, busbw_max,
                 wrong_total):
    result = parse_collective_perf(fixture_text(name))
    assert result["complete"] is complete
    assert result["nodes"] == nodes
    assert result["ranks"] == ranks
    assert result["gpu_model"] == gpu_model
    assert len(result["rows"]) == n_rows
    assert result["rows"][0] == first
    assert result["rows"][-1]["size_bytes"] == last["size_bytes"]
    assert result["rows"][-1]["out_of_place"] == last["oop"]
    assert result["avg_busbw_gbps"] == avg
    assert result["max_busbw_gbps"] == busbw_max
    assert result["wrong_total"] == wrong_total
    assert set(result) == {"complete", "nodes", "ranks", "gpu_model", "rows", "avg_busbw_gbps",
                           "max_busbw_gbps", "wrong_total"}


@pytest.mark.parametrize("name", FIXTURE_NAMES, ids=[Path(n).stem for n in FIXTURE_NAMES])
def test_crlf_gives_the_same_result(name):
    text = fixture_text(name)
    assert parse_collective_perf(text.replace("\n", "\r\n")) == parse_collective_perf(text)


def test_srun_prefix_is_the_same_as_no_prefix():
    text = fixture_text("nccl-tests/rccl_all_reduce_perf_4node_32xMI250X_srun_label_rccl1490.txt")
    unprefixed = "\n".join(line[4:] for line in text.splitlines())  # synthetic: " 0: " removed
    assert parse_collective_perf(unprefixed) == parse_collective_perf(text)


def test_mpirun_tag_output_prefix():
    text = fixture_text("nccl-tests/nccl_all_reduce_perf_2node_16xH100_OCI_RoCE_ocitutorials.txt")
    tagged = "\n".join("[1,0]<stdout>:" + line for line in text.splitlines())  # synthetic
    assert parse_collective_perf(tagged) == parse_collective_perf(text)


def test_header_printed_but_run_never_finished():
    # synthetic: the real H100 run cut after its column header (a job killed before any row)
    text = fixture_text("nccl-tests/nccl_all_reduce_perf_2node_16xH100_OCI_RoCE_ocitutorials.txt")
    cut = text[: text.index("  1073741824")]
    result = parse_collective_perf(cut)
    assert result["complete"] is False
    assert result["rows"] == []
    assert result["nodes"] == 2 and result["ranks"] == 16
    assert result["avg_busbw_gbps"] is None and result["max_busbw_gbps"] is None


def test_layout_without_header_is_taken_from_the_rows():
    # synthetic: the old-layout DGX run with its three header lines removed
    text = fixture_text("nccl-tests/nccl_all_reduce_perf_4node_DGX-A100_IB_error_column_deepops.txt")
    rows_only = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    result = parse_collective_perf(rows_only)
    assert len(result["rows"]) == 13
    assert result["rows"][0]["root"] is None
    assert result["rows"][0]["out_of_place"]["wrong"] == 7e-07
    assert result["complete"] is False
    assert result["wrong_total"] is None


def test_na_and_asterisk_values():
    # synthetic rows in the current layout: N/A in-place figures and an rccl-tests asterisk
    text = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n"
        "           8             2     float     sum      -1    19.28    0.00    0.00      0"
        "      N/A     N/A     N/A     N/A\n"
        "          16             4     float     sum      -1    16.32    0.00    0.00     3*"
        "    16.53    0.00    0.00      0\n"
    )
    result = parse_collective_perf(text)
    assert result["rows"][0]["in_place"] == {
        "time_us": None, "algbw_gbps": None, "busbw_gbps": None, "wrong": None}
    assert result["rows"][1]["out_of_place"]["wrong"] == 3
    assert result["wrong_total"] == 3


def test_two_runs_in_one_text_are_refused():
    text = fixture_text("nccl-tests/rccl_all_reduce_perf_4node_32xMI250X_srun_label_rccl1490.txt")
    with pytest.raises(CollectivePerfParseError, match="one run at a time"):
        parse_collective_perf(text + text)


@pytest.mark.parametrize("text", ["", "\n\n", "hello world\n", "# just a comment\n", "12 34\n"])
def test_not_nccl_tests_output(text):
    with pytest.raises(CollectivePerfParseError):
        parse_collective_perf(text)


def _shape(result):
    assert isinstance(result, dict)
    assert isinstance(result["complete"], bool)
    if not result["complete"]:
        assert result["avg_busbw_gbps"] is None


test_property_garbled_fixture, test_property_arbitrary_text, test_property_reordered_lines, test_not_text = parser_tests(
    parse_collective_perf, CollectivePerfParseError, [fixture_text(name) for name in FIXTURE_NAMES], _shape)
