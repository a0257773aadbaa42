# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the text of an nccl-tests / rccl-tests run (all_reduce_perf and friends).

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``parse_collective_perf(text)`` turns what ``all_reduce_perf`` (or any ``*_perf`` binary of
nccl-tests / rccl-tests) printed into::

    {complete, nodes, ranks, gpu_model,
     rows: [{size_bytes, count, type, redop, root,
             out_of_place: {time_us, algbw_gbps, busbw_gbps, wrong},
             in_place: {time_us, algbw_gbps, busbw_gbps, wrong}}],
     avg_busbw_gbps, max_busbw_gbps, wrong_total}

Formats handled (all seen in published runs, see tests/fixtures/SOURCES.md):

* the current layout with a ``root`` column and ``#wrong`` counts, and the older layout without
  ``root`` whose last column is ``error`` (the largest numeric error, e.g. ``7e-07``);
* rank prefixes added by launchers: ``srun --label`` (`` 0: ``), Open MPI ``--tag-output``
  (``[1,0]<stdout>:``) and Horovod (``[0]<stdout>:``);
* CRLF or CR line ends, NCCL INFO lines interleaved with the table, a header cut off above the
  column titles (the layout is then taken from the width of the data rows);
* ``# Rank`` lines with or without the ``Group`` field (rccl-tests prints both forms).

``complete`` is true only when the ``# Avg bus bandwidth`` line was printed: a run that printed
its header and rows but never finished (crash, timeout, cut log) gives ``complete: false``.
``nodes`` counts the distinct hosts of the ``# Rank`` lines and is ``None`` when none were
printed; ``ranks`` likewise.  Bandwidths are GB/s exactly as printed (nccl-tests' GB is 1e9 B).
``wrong`` is the ``#wrong`` count (int) or, in the old layout, the ``error`` value (float);
``N/A`` gives ``None``.  ``wrong_total`` sums the ``#wrong`` counts; for the old layout it is
the ``Out of bounds values`` count when printed, else ``None``.
"""

from __future__ import annotations

import math
import re

from ansible_collections.gpucluster.training.plugins.module_utils._parse_text import require_text

__all__ = ["CollectivePerfParseError", "parse_collective_perf"]


class CollectivePerfParseError(ValueError):
    """The text is not the output of an nccl-tests / rccl-tests run."""


# Launcher prefixes, removed before anything else is looked at.
_PREFIX_RE = re.compile(
    r"^(?:"
    r"\s*\d+:\s?"                                  # srun --label: " 0: "
    r"|\[\d+(?:,\d+)?\]<std(?:out|err)>:"          # mpirun --tag-output / horovodrun
    r")"
)
# Linear by construction: tokens are separated by \s+ and cannot hold spaces; the model is the
# rest of the line (stripped in code, no lazy group before a trailing \s*).
_RANK_RE = re.compile(
    r"^#\s*Rank\s+(?P<rank>\d{1,9})\s+(?:Group\s+\d{1,9}\s+)?Pid\s+\d{1,12}\s+on\s+(?P<host>\S+)"
    r"\s+device\s+\d{1,9}\s+\[[^\]]*\](?P<model>.*)$"
)
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>\S+)")
_OOB_RE = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<count>\d{1,18})(?!\d)")
# Texts larger than this are refused (all_reduce_perf with NCCL_DEBUG=INFO of a large job).
MAX_TEXT_CHARS = 256 * 1024 * 1024
# No bus bandwidth reaches this (GB/s): a figure above it is a garbled or invented number.
MAX_GBPS = 1.0e6
_NUM = r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|N/A)"
_WRONG = r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\*?|N/A)"
_HALF = r"\s+(%s)\s+(%s)\s+(%s)\s+(%s)" % (_NUM, _NUM, _NUM, _WRONG)
_ROW_ROOT_RE = re.compile(
    r"^\s*(\d+)\s+(\d+)\s+([A-Za-z_][\w]*)\s+([A-Za-z_][\w]*)\s+(-?\d+)" + _HALF + _HALF + r"\s*$"
)
_ROW_NOROOT_RE = re.compile(
    r"^\s*(\d+)\s+(\d+)\s+([A-Za-z_][\w]*)\s+([A-Za-z_][\w]*)" + _HALF + _HALF + r"\s*$"
)
_HEADER_RE = re.compile(r"^#\s*size\s+count\s+type\s+redop\b(?P<rest>.*)$")


def _number(token: str) -> float | None:
    if token == "N/A":
        return None
    value = float(token)
    if not math.isfinite(value) or value < 0 or value > MAX_GBPS * 1e6:
        raise CollectivePerfParseError("impossible figure %r (not a finite number >= 0)" % token[:40])
    return value


def _wrong(token: str, counts: bool) -> int | float | None:
    token = token.rstrip("*")
    if token == "N/A":
        return None
    value = _number(token)
    if counts:
        return int(value) if value.is_integer() else value
    return value


def _half(groups: tuple, counts: bool) -> dict:
    time_us, algbw, busbw, wrong = groups
    out = {
        "time_us": _number(time_us),
        "algbw_gbps": _number(algbw),
        "busbw_gbps": _number(busbw),
        "wrong": _wrong(wrong, counts),
    }
    for key in ("algbw_gbps", "busbw_gbps"):
        if out[key] is not None and out[key] > MAX_GBPS:
            raise CollectivePerfParseError("impossible bandwidth %s GB/s" % out[key])
    return out


def _lines(text: str):
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        yield _PREFIX_RE.sub("", raw, count=1)


def parse_collective_perf(text: str) -> dict:
    """Parse the output of one nccl-tests / rccl-tests run; see the module docstring."""
    require_text(text, MAX_TEXT_CHARS, CollectivePerfParseError, "expected the text of an nccl-tests run, got %s",
                 "the text is %d characters, more than the %d this parser reads: pass the output of one run")

    hosts = []           # distinct hosts, in order of the # Rank lines
    rank_ids = set()
    models = []
    layout_root = None   # True/False once the column header (or the first row) tells
    counts = None        # True for #wrong counts, False for the old 'error' column
    header_seen = False
    rows = []
    avg = None
    avg_lines = 0
    out_of_bounds = None

    for line in _lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            match = _RANK_RE.match(stripped)
            if match:
                rank_ids.add(int(match.group("rank")))
                host = match.group("host")
                if host not in hosts:
                    hosts.append(host)
                model = match.group("model").strip()
                if model and model not in models:
                    models.append(model)
                continue
            match = _HEADER_RE.match(stripped)
            if match:
                rest = match.group("rest").split()
                header_seen = True
                layout_root = bool(rest) and rest[0] == "root"
                if "#wrong" in rest:
                    counts = True
                elif "error" in rest:
                    counts = False
                continue
            match = _AVG_RE.match(stripped)
            if match:
                avg_lines += 1
                try:
                    avg = float(match.group("value"))
                except ValueError:
                    raise CollectivePerfParseError(
                        "unreadable average bus bandwidth: %r" % stripped[:120]
                    )
                if not math.isfinite(avg) or avg < 0 or avg > MAX_GBPS:
                    raise CollectivePerfParseError(
                        "impossible average bus bandwidth: %r" % stripped[:120]
                    )
                continue
            match = _OOB_RE.match(stripped)
            if match:
                out_of_bounds = int(match.group("count"))
            continue
        if not stripped[0].isdigit():
            continue
        row = _parse_row(stripped, layout_root, counts)
        if row is None:
            continue
        parsed, with_root, row_counts = row
        if layout_root is None:
            layout_root = with_root
        if counts is None:
            counts = row_counts
        rows.append(parsed)

    if avg_lines > 1:
        raise CollectivePerfParseError(
            "the text holds %d 'Avg bus bandwidth' lines: pass one run at a time" % avg_lines
        )
    if not rows and not header_seen and avg is None and not hosts:
        raise CollectivePerfParseError(
            "no nccl-tests output found (no column header, result rows, '# Rank' lines "
            "or 'Avg bus bandwidth' line)"
        )

    busbws = [
        half["busbw_gbps"]
        for row in rows
        for half in (row["out_of_place"], row["in_place"])
        if half["busbw_gbps"] is not None
    ]
    if counts:
        wrong_total = sum(
            half["wrong"]
            for row in rows
            for half in (row["out_of_place"], row["in_place"])
            if isinstance(half["wrong"], int)
        )
    else:
        wrong_total = out_of_bounds

    return {
        "complete": avg is not None,
        "nodes": len(hosts) if hosts else None,
        "ranks": len(rank_ids) if rank_ids else None,
        "gpu_model": ", ".join(models) if models else None,
        "rows": rows,
        "avg_busbw_gbps": avg,
        "max_busbw_gbps": max(busbws) if busbws else None,
        "wrong_total": wrong_total,
    }


def _parse_row(line: str, layout_root, counts):
    """One result row, or None when the line is not one (or is garbled)."""
    candidates = []
    if layout_root is not False:
        candidates.append((_ROW_ROOT_RE, True))
    if layout_root is not True:
        candidates.append((_ROW_NOROOT_RE, False))
    for regex, with_root in candidates:
        match = regex.match(line)
        if not match:
            continue
        groups = match.groups()
        offset = 5 if with_root else 4
        oop, inp = groups[offset:offset + 4], groups[offset + 4:offset + 8]
        if counts is None:
            # Without a header: '#wrong' counts are integers, the old 'error' is a float.
            row_counts = all(
                re.match(r"^(?:\d+\*?|N/A)$", token) for token in (oop[3], inp[3])
            )
        else:
            row_counts = counts
        try:
            parsed = {
                "size_bytes": int(groups[0]),
                "count": int(groups[1]),
                "type": groups[2],
                "redop": groups[3],
                "root": int(groups[4]) if with_root else None,
                "out_of_place": _half(oop, row_counts),
                "in_place": _half(inp, row_counts),
            }
        except CollectivePerfParseError as exc:
            raise CollectivePerfParseError("result row %r: %s" % (" ".join(line.split())[:160], exc))
        except (ValueError, OverflowError):
            return None
        return parsed, with_root, row_counts
    return None
