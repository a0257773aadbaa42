# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fit the planner's throughput constants on the calibration cases and report every case.

    PYTHONPATH=.tmp/collections .venv/bin/python tools/planner_calibrate.py          report
    PYTHONPATH=.tmp/collections .venv/bin/python tools/planner_calibrate.py --fit    fit, report

The fit only sees cases with split "calibration" (tests/unit/plugins/module_utils/
planner_cases.py); the hold-out cases are reported, never fitted. Objective: mean squared
log error of the estimate plus a penalty when the published layout is not among the
planner's first three (ranks in tiers, _planner_search.rank). Coordinate descent over a small grid per constant; prints the
constants to write into _planner_throughput.CALIBRATION (nothing is written).
"""
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "plugins" / "module_utils"))

from ansible_collections.gpucluster.training.plugins.module_utils import _planner  # noqa: E402
from ansible_collections.gpucluster.training.plugins.module_utils import _planner_throughput as tm  # noqa: E402
from planner_cases import CASES, evaluate_case  # noqa: E402

GRID = {
    "gemm_efficiency.bf16": [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9],
    "gemm_efficiency.fp8": [0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7],
    "gemm_half_dim": [32.0, 64.0, 96.0, 128.0, 192.0, 256.0],
    "attention_efficiency": [0.3, 0.4, 0.5, 0.6, 0.7],
    "elementwise_bytes": [10.0, 20.0, 30.0, 40.0, 60.0],
    "layer_overhead_s": [0.0, 100e-6, 250e-6, 500e-6, 1000e-6],
    "cp_step_overhead_s": [0.0, 100e-6, 250e-6, 500e-6, 1000e-6],
}


def _set(name, value):
    if "." in name:
        outer, inner = name.split(".")
        tm.CALIBRATION[outer][inner] = value
    else:
        tm.CALIBRATION[name] = value


def _get(name):
    if "." in name:
        outer, inner = name.split(".")
        return tm.CALIBRATION[outer][inner]
    return tm.CALIBRATION[name]


def objective(cases):
    total = 0.0
    for case in cases:
        est, rank, _res = evaluate_case(case, _planner)
        total += math.log(est / case["published"]) ** 2
        if case["ranked"] and (rank is None or rank > 3):
            total += 0.05 * (4 if rank is None else rank - 3)
    return total / len(cases)


def fit(rounds=3):
    cases = [c for c in CASES if c["split"] == "calibration"]
    best = objective(cases)
    for _round in range(rounds):
        improved = False
        for name, values in GRID.items():
            keep = _get(name)
            for value in values:
                _set(name, value)
                score = objective(cases)
                if score < best - 1e-9:
                    best, keep, improved = score, value, True
            _set(name, keep)
        print("round %d: objective %.5f" % (_round + 1, best))
        if not improved:
            break
    print("CALIBRATION =", tm.CALIBRATION)


def report():
    print("| split | configuration | layout | published | planner's rank of the published "
          "layout | estimate | error |")
    print("|---|---|---|---|---|---|---|")
    errors = {"calibration": [], "holdout": []}
    for case in CASES:
        est, rank, _res = evaluate_case(case, _planner)
        spec = case["spec"]
        err = est / case["published"] - 1.0
        errors[case["split"]].append(abs(err))
        unit = "tokens/s/GPU" if case["metric"] == "tokens_per_s_per_gpu" else "TFLOP/s/GPU"
        layout = "TP%d PP%d CP%d VP%d MBS%d GBS%d seq %d %s" % (
            spec["tp"], spec["pp"], spec["cp"], spec.get("vpp", 1), spec["micro_batch_size"],
            spec["global_batch_size"], spec["seq_length"], spec["precision"])
        ranking = _res.get("published_ranking") or {}
        if not case["ranked"]:
            shown = "n/a (not ranked)"
        elif rank is None:
            shown = ">10"
        else:
            shown = "%d (tier %d%s)" % (rank, ranking["tier"], ", tied" if ranking["tied"] else "")
        print("| %s | %s | %s | %s %s | %s | %.0f | %+.1f%% |" % (
            case["split"], case["name"], layout, case["published"], unit, shown, est, 100 * err))
    for split, errs in errors.items():
        print("%s: mean |error| %.1f%%, max %.1f%% over %d cases" % (
            split, 100 * sum(errs) / len(errs), 100 * max(errs), len(errs)))


if __name__ == "__main__":
    if "--fit" in sys.argv:
        fit()
    report()
