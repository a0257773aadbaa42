# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Find the bad node (issue 15.4): plan the pair runs, name the culprit from their verdicts.

The runs are real published captures (tests/fixtures/SOURCES.md) ATTRIBUTED to lab nodes:
the pairs without gpu3 get the DeepOps DGX A100 all_reduce_perf run (a healthy 8 x HDR result),
the pairs with gpu3 get the MI355X capture that ends before the run finished (a real cut
output); for two nodes, the NVIDIA/nccl-tests#290 H100 runs (a healthy node alone, a slow pair)
and the ROCm/rccl#876 single-node run that crashed. Each is judged on the hardware its publication
gives. Which node is bad is the test's scenario, not a hardware result.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._collective_perf import parse_collective_perf
from ansible_collections.gpucluster.training.plugins.module_utils._validate_judge import (
    DRAIN_PREFIX,
    ValidateJudgeError,
    find_bad_nodes,
    judge_run,
    plan_pairs,
)

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "nccl-tests"
GOOD = "nccl_all_reduce_perf_4node_DGX-A100_IB_error_column_deepops.txt"
CUT = "rccl_all_reduce_perf_2node_16xMI355X_Pollara_no_summary_hisohara.txt"
HW = {"gpu": "a100-40gb", "gpu_count": 8, "ports": 8, "rate_gbps": 200, "link_layer": "InfiniBand"}
H100_NDR = {"gpu": "h100", "gpu_count": 8, "ports": 8, "rate_gbps": 400, "link_layer": "InfiniBand"}
H100_ALONE = "nccl_all_reduce_perf_1node_8xH100_node005_nccltests290.txt"
H100_PAIR = "nccl_all_reduce_perf_2node_16xH100_NDR_srun_label_nccltests290.txt"
CRASHED_ALONE = "rccl_all_reduce_perf_1node_2x7900XTX_crash_rccl876.txt"


def _result(pair, name, hardware=None):
    return {"node": list(pair), "test": "all_reduce_multi", "origin": "supplied", "source": name,
            "hardware": hardware or HW, "result": parse_collective_perf((FIX / name).read_text(encoding="utf-8"))}


def _alone(node, name, hardware):
    return {"node": node, "test": "all_reduce_single", "origin": "supplied", "source": name,
            "hardware": hardware, "result": parse_collective_perf((FIX / name).read_text(encoding="utf-8"))}


def test_plan_pairs_is_a_ring():
    ring = [["gpu1", "gpu2"], ["gpu2", "gpu3"], ["gpu3", "gpu4"], ["gpu4", "gpu1"]]
    assert plan_pairs(["gpu1", "gpu2", "gpu3", "gpu4"]) == ring
    assert plan_pairs(["a", "b"]) == [["a", "b"]]
    assert plan_pairs(["a"]) == [] and plan_pairs(["a", "a"]) == []
    with pytest.raises(ValidateJudgeError):
        plan_pairs([None])


def test_the_node_in_every_failing_pair_is_drained_with_the_evidence():
    hosts = ["gpu1", "gpu2", "gpu3"]
    results = [_result(pair, CUT if "gpu3" in pair else GOOD) for pair in plan_pairs(hosts)]
    report = judge_run(results, dict((h, None) for h in hosts))
    search = report["bad_node_search"]
    assert list(search["culprits"]) == ["gpu3"]
    assert search["cleared"] == ["gpu1", "gpu2"] and search["undetermined"] == []
    gpu3 = report["nodes"]["gpu3"]
    assert gpu3["drain"] and gpu3["verdict"] == "fail"
    assert gpu3["reason"].startswith(DRAIN_PREFIX + "bad-node search: gpu3 fails with gpu")
    assert "did not finish" in gpu3["reason"]
    assert not report["nodes"]["gpu1"]["drain"] and not report["nodes"]["gpu2"]["drain"]
    assert "**gpu3** is the culprit" in report["markdown"]


def test_two_nodes_need_the_single_node_runs():
    # One failing pair: both nodes are suspects, nobody is drained for it.
    report = judge_run([_result(["gpu1", "gpu2"], CUT)], {"gpu1": None, "gpu2": None})
    assert report["bad_node_search"]["culprits"] == {}
    assert report["bad_node_search"]["undetermined"] == [["gpu1", "gpu2"]]
    assert not any(n["drain"] for n in report["nodes"].values())


def test_single_node_failure_names_the_culprit_of_a_pair():
    checks = [
        {"node": ["a", "b"], "test": "all_reduce_multi", "check": "busbw", "status": "fail", "message": "slow"},
        {"node": "a", "test": "all_reduce_single", "check": "busbw", "status": "pass", "message": "ok"},
        {"node": "b", "test": "all_reduce_single", "check": "complete", "status": "fail", "message": "crashed"},
    ]
    found = find_bad_nodes(checks)
    assert list(found["culprits"]) == ["b"] and found["cleared"] == ["a"]
    assert found["culprits"]["b"] == ["b fails alone and with a", "alone: crashed", "with a: slow"]


def test_a_failure_no_single_node_explains_is_undetermined():
    # Every pair fails: no node is cleared, nobody is blamed.
    checks = [{"node": list(p), "test": "all_reduce_multi", "check": "busbw", "status": "fail", "message": "x"}
              for p in plan_pairs(["a", "b", "c"])]
    found = find_bad_nodes(checks)
    assert found["culprits"] == {} and len(found["undetermined"]) == 3


def test_skips_and_other_tests_are_not_evidence():
    checks = [{"node": ["a", "b"], "test": "all_reduce_multi", "check": "busbw", "status": "skip", "message": "x"},
              {"node": "a", "test": "nccl_log", "check": "network", "status": "fail", "message": "x"}]
    assert find_bad_nodes(checks)["groups"] == []


def test_two_nodes_the_one_that_fails_alone_is_drained_the_other_stays():
    # The pair is slow (155.57 GB/s against the 8 x NDR reference), gpu1 alone is healthy
    # (476.53 GB/s, 8 x H100), gpu2 alone crashed before its first row.
    results = [_result(["gpu1", "gpu2"], H100_PAIR, H100_NDR),
               _alone("gpu1", H100_ALONE, H100_NDR),
               _alone("gpu2", CRASHED_ALONE, {"gpu_count": 2, "source": "2 x Radeon RX 7900 XTX"})]
    report = judge_run(results, {"gpu1": None, "gpu2": None})
    search = report["bad_node_search"]
    assert list(search["culprits"]) == ["gpu2"] and search["cleared"] == ["gpu1"]
    assert search["undetermined"] == [] and search["advice"] == []
    gpu2 = report["nodes"]["gpu2"]
    assert gpu2["drain"] and gpu2["verdict"] == "fail"
    assert gpu2["reason"].startswith(DRAIN_PREFIX + "bad-node search: gpu2 fails alone and with gpu1; alone: ")
    assert "did not finish" in gpu2["reason"] and len(gpu2["reason"]) <= 180
    assert not report["nodes"]["gpu1"]["drain"] and report["nodes"]["gpu1"]["verdict"] == "pass"
    assert "155.57 GB/s" in search["culprits"]["gpu2"][2]
    assert "**gpu2** is the culprit" in report["markdown"]


def test_a_node_that_only_passed_alone_does_not_convict_its_peer():
    # gpu1 alone never used its network adapters: the slow pair may be gpu1's adapter as well as
    # gpu2. Without gpu2's single-node run nobody is drained, and the search says what to run.
    results = [_result(["gpu1", "gpu2"], H100_PAIR, H100_NDR), _alone("gpu1", H100_ALONE, H100_NDR)]
    report = judge_run(results, {"gpu1": None, "gpu2": None})
    search = report["bad_node_search"]
    assert search["culprits"] == {} and search["undetermined"] == [["gpu1", "gpu2"]]
    assert search["advice"] == ["the run of gpu1, gpu2 fails and gpu2 has no single-node result: test it alone"]
    assert not any(n["drain"] for n in report["nodes"].values())
    assert "- undetermined: the run of gpu1, gpu2 fails and gpu2 has no single-node result" in report["markdown"]


def test_both_nodes_pass_alone_the_path_between_them_is_at_fault():
    results = [_result(["gpu1", "gpu2"], H100_PAIR, H100_NDR),
               _alone("gpu1", H100_ALONE, H100_NDR), _alone("gpu2", H100_ALONE, H100_NDR)]
    search = judge_run(results, {"gpu1": None, "gpu2": None})["bad_node_search"]
    assert search["culprits"] == {} and search["cleared"] == ["gpu1", "gpu2"]
    assert "the fault is on the path between them" in search["advice"][0]
