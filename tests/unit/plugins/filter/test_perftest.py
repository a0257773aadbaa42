# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The perftest filter is a thin face over module_utils._perftest."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.perftest import FilterModule
from ansible_collections.gpucluster.training.plugins.module_utils._perftest import (
    parse_perftest_bw,
)

FIXTURE = (Path(__file__).resolve().parents[3] / "fixtures" / "perftest"
           / "ib_write_bw_bidir_report_gbits_a_RoCE_use_rocm_rocmdocs.txt")
FILTER = FilterModule().filters()["perftest"]


def test_registered_under_its_name():
    assert set(FilterModule().filters()) == {"perftest"}


def test_string_and_lines_give_the_parser_result():
    text = FIXTURE.read_text(encoding="utf-8")
    expected = parse_perftest_bw(text)
    assert FILTER(text) == expected
    assert FILTER(text.splitlines()) == expected
    assert expected["bw_average_max_gbps"] == 204.59


@pytest.mark.parametrize("value", ["ib_write_bw: command not found", None, 2])
def test_bad_input_is_a_filter_error(value):
    with pytest.raises(AnsibleFilterError, match="perftest"):
        FILTER(value)
