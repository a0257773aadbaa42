# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time the nccl-tests and NCCL-log parsers on a large synthetic input.

Plain script, not a test: run from the repository root with
``PYTHONPATH=.tmp/collections .venv/bin/python bench/collective_perf_bench.py``.
The input is synthetic: the real 2-node H100 fixture's table repeated, interleaved with the real
NCCL INFO lines of the nccl-tests#350 fixture, to the size of a long multi-node INFO log.
"""

from __future__ import annotations

import time
from pathlib import Path

from ansible_collections.gpucluster.training.plugins.module_utils._collective_perf import (
    parse_collective_perf,
)
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_log import parse_nccl_log

ROOT = Path(__file__).resolve().parents[1] / "tests" / "fixtures"


def main(target_mb: float = 50.0) -> None:
    table = (ROOT / "nccl-tests" / "nccl_all_reduce_perf_2node_16xH100_OCI_RoCE_ocitutorials.txt"
             ).read_text(encoding="utf-8")
    log_lines = [line for line in (ROOT / "nccl-log" /
                                   "nccl_gather_perf_2node_A100_RoCE+IB_GDRDMA_nccl2.16.5_nccltests350.log"
                                   ).read_text(encoding="utf-8").splitlines() if "NCCL INFO" in line]
    head, _sep, tail = table.partition("  1073741824")
    rows = ("  1073741824" + tail).splitlines()
    data_rows, summary = rows[:5], rows[5:]
    body = []
    size = 0
    while size < target_mb * 1e6:
        for line in log_lines:
            body.append(line)
            size += len(line) + 1
        body.extend(data_rows)
        size += sum(len(r) + 1 for r in data_rows)
    text = head + "\n".join(body + summary) + "\n"
    for name, parse in (("collective_perf", parse_collective_perf), ("nccl_log", parse_nccl_log)):
        start = time.perf_counter()
        result = parse(text)
        elapsed = time.perf_counter() - start
        detail = (len(result["rows"]) if "rows" in result else len(result["channels"]))
        print("%-16s %6.1f MB  %6.2f s  %8.1f MB/s  (%d rows/channels)"
              % (name, len(text) / 1e6, elapsed, len(text) / 1e6 / elapsed, detail))


if __name__ == "__main__":
    main()
