# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collective_perf filter is a thin face over module_utils._collective_perf."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.collective_perf import FilterModule
from ansible_collections.gpucluster.training.plugins.module_utils._collective_perf import (
    parse_collective_perf,
)

FIXTURE = (Path(__file__).resolve().parents[3] / "fixtures" / "nccl-tests"
           / "nccl_all_reduce_perf_2node_16xH100_OCI_RoCE_ocitutorials.txt")
FILTER = FilterModule().filters()["collective_perf"]


def test_registered_under_its_name():
    assert set(FilterModule().filters()) == {"collective_perf"}


def test_string_and_lines_give_the_parser_result():
    text = FIXTURE.read_text(encoding="utf-8")
    expected = parse_collective_perf(text)
    assert FILTER(text) == expected
    assert FILTER(text.splitlines()) == expected
    assert expected["avg_busbw_gbps"] == 458.452 and expected["nodes"] == 2


@pytest.mark.parametrize("value", ["not a run", None, 7])
def test_bad_input_is_a_filter_error(value):
    with pytest.raises(AnsibleFilterError, match="collective_perf"):
        FILTER(value)
