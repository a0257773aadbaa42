# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Timings of the parallel-layout planner: one plan, the nearest-layout search behind a
failure, and the full throughput search, for clusters from 16 to 4096 GPUs.

Run from the repository root:
    PYTHONPATH=.tmp/collections .venv/bin/python bench/planner_bench.py
Prints timings only; nothing here is asserted.
"""

from __future__ import annotations

import time

from ansible_collections.gpucluster.training.plugins.module_utils import _planner

CASES = [
    # (model, nodes, gpus per node, gpu, global batch, sequence, invalid layout)
    ("llama2-70b", 2, 8, "mi300x", 64, 4096, dict(tp=8, pp=4, micro_batch_size=4)),
    ("llama2-70b", 16, 8, "mi300x", 512, 4096, dict(tp=8, pp=3, micro_batch_size=2)),
    ("llama3-70b", 128, 8, "h100", 2048, 8192, dict(tp=16, pp=4, micro_batch_size=1)),
    # 126 layers: PP must divide 126 and the GPU count, hence 448 nodes (PP 7 or 14).
    ("llama3-405b", 448, 8, "h100", 3584, 8192, dict(tp=8, pp=16, micro_batch_size=1)),
]


def _time(fn, repeat):
    best = float("inf")
    out = None
    for _round in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main():
    header = ("model", "GPUs", "plan ms", "nearest ms", "search ms", "ranked", "best layout")
    print("%-12s %6s %10s %14s %14s %8s  %s" % header)
    for model, nodes, gpn, gpu, gbs, seq, bad in CASES:
        base = dict(model=model, nodes=nodes, gpus_per_node=gpn, gpu=gpu,
                    global_batch_size=gbs, seq_length=seq, precision="bf16")
        spec_bad = dict(base, **bad)
        t_plan, _unused = _time(lambda: _planner.plan(spec_bad, max_suggestions=0), 5)
        t_near, res = _time(lambda: _planner.plan(spec_bad, max_suggestions=5), 3)
        t_search, best = _time(lambda: _planner.plan_search(base, 10), 3)
        layouts = best.get("layouts") or []
        print("%-12s %6d %10.2f %14.1f %14.1f %8d  %s" % (
            model, nodes * gpn, 1000 * t_plan, 1000 * t_near, 1000 * t_search, len(layouts),
            layouts[0]["summary"] if layouts else "-"))
        if res["suggestions"]:
            print("%-12s %6s   nearest to the invalid %s: %s" % (
                "", "", " ".join("%s=%s" % kv for kv in sorted(bad.items())),
                res["suggestions"][0]["summary"]))


if __name__ == "__main__":
    main()
