# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The validate_judge filter is a thin face over module_utils._validate_judge."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.validate_judge import FilterModule
from ansible_collections.gpucluster.training.plugins.module_utils._collective_perf import parse_collective_perf
from ansible_collections.gpucluster.training.plugins.module_utils._validate_judge import judge_run

FIXTURE = (Path(__file__).resolve().parents[3] / "fixtures" / "nccl-tests"
           / "nccl_all_reduce_perf_2node_16xH100_OCI_RoCE_ocitutorials.txt")
FILTER = FilterModule().filters()["validate_judge"]


def test_registered_under_its_name():
    assert set(FilterModule().filters()) == {"validate_judge"}


def test_same_result_as_the_judgement():
    # OCI BM.GPU.H100.8: 16 ports x 200 Gb/s -> 400 GB/s; 464.79 GB/s measured (see the module tests).
    results = [{"test": "all_reduce_multi", "origin": "supplied",
                "hardware": {"gpu": "h100", "gpu_count": 8, "ports": 16, "rate_gbps": 200},
                "result": parse_collective_perf(FIXTURE.read_text(encoding="utf-8"))}]
    hardware = {"gpu1": None, "gpu2": None}
    got = FILTER(results, hardware, {"min_efficiency": 0.8}, run={"mode": "supplied"})
    assert got == judge_run(results, hardware, {"min_efficiency": 0.8}, run={"mode": "supplied"})
    assert got["cluster"]["verdict"] == "pass" and got["run"] == {"mode": "supplied"}


@pytest.mark.parametrize("results, hardware", [("x", {}), ([{"test": "nope"}], {}), ([], [])])
def test_bad_input_is_a_filter_error(results, hardware):
    with pytest.raises(AnsibleFilterError, match="validate_judge"):
        FILTER(results, hardware)
