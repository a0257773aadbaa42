# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The parser filters (collective_perf, nccl_log, perftest) are thin faces over their
module_utils parsers: each registered under its name, a text or a list of its lines gives the
parser's result (checked on a real capture), bad input is a filter error naming the filter."""

from __future__ import annotations

import importlib

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._collective_perf import parse_collective_perf
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_log import parse_nccl_log
from ansible_collections.gpucluster.training.plugins.module_utils._perftest import parse_perftest_bw
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text


# filter name, parser, real capture, a fact the capture shows, bad inputs
CASES = {
    "collective_perf": (parse_collective_perf, "nccl-tests/nccl_all_reduce_perf_2node_16xH100_OCI_RoCE_ocitutorials.txt",
                        lambda r: r["avg_busbw_gbps"] == 458.452 and r["nodes"] == 2, ["not a run", None, 7]),
    "nccl_log": (parse_nccl_log, "nccl-log/rccl_ddp_1node_2x7900XTX_socket_fallback_rccl2.17.1_rccl1055.log",
                 lambda r: r["socket_fallback"] is True and r["network"] == "Socket", ["no log here", None, 1]),
    "perftest": (parse_perftest_bw, "perftest/ib_write_bw_bidir_report_gbits_a_RoCE_use_rocm_rocmdocs.txt",
                 lambda r: r["bw_average_max_gbps"] == 204.59, ["ib_write_bw: command not found", None, 2]),
}


def _filters(name):
    return importlib.import_module("ansible_collections.gpucluster.training.plugins.filter.%s" % name).FilterModule().filters()


@pytest.mark.parametrize("name", sorted(CASES))
def test_registered_under_its_name(name):
    assert set(_filters(name)) == {name}


@pytest.mark.parametrize("name", sorted(CASES))
def test_string_and_lines_give_the_parser_result(name):
    parser, fixture, fact, _bad = CASES[name]
    text = fixture_text(fixture)
    expected = parser(text)
    assert _filters(name)[name](text) == expected
    assert _filters(name)[name](text.splitlines()) == expected
    assert _filters(name)[name](text.split("\n")) == expected
    assert fact(expected)


@pytest.mark.parametrize("name, value", [(name, value) for name in sorted(CASES) for value in CASES[name][3]])
def test_bad_input_is_a_filter_error(name, value):
    with pytest.raises(AnsibleFilterError, match=name):
        _filters(name)[name](value)
