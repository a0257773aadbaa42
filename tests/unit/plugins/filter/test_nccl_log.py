# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The nccl_log filter is a thin face over module_utils._nccl_log."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.nccl_log import FilterModule
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_log import parse_nccl_log

FIXTURE = (Path(__file__).resolve().parents[3] / "fixtures" / "nccl-log"
           / "rccl_ddp_1node_2x7900XTX_socket_fallback_rccl2.17.1_rccl1055.log")
FILTER = FilterModule().filters()["nccl_log"]


def test_registered_under_its_name():
    assert set(FilterModule().filters()) == {"nccl_log"}


def test_string_and_lines_give_the_parser_result():
    text = FIXTURE.read_text(encoding="utf-8")
    expected = parse_nccl_log(text)
    assert FILTER(text) == expected
    assert FILTER(text.split("\n")) == expected
    assert expected["socket_fallback"] is True and expected["network"] == "Socket"


@pytest.mark.parametrize("value", ["no log here", None, 1])
def test_bad_input_is_a_filter_error(value):
    with pytest.raises(AnsibleFilterError, match="nccl_log"):
        FILTER(value)
