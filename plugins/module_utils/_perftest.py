# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the summary of a perftest bandwidth run (ib_write_bw, ib_read_bw, ib_send_bw).

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``parse_perftest_bw(text)`` returns::

    {test, operation, bidirectional, device, link_type, transport_type, connection_type,
     gid_index, mtu_bytes, qps, unit, complete,
     rows: [{bytes, iterations, bw_peak, bw_average, msg_rate_mpps,
             bw_peak_gbps, bw_average_gbps}],
     bw_peak_max_gbps, bw_average_max_gbps}

``bw_peak`` / ``bw_average`` are the numbers as printed, in ``unit`` (``Gb/sec`` with
``--report_gbits``, else ``MiB/sec`` from perftest 24.07.0 on and ``MB/sec`` before it).
``*_gbps`` convert them to Gb/s: perftest reports Gb/sec as 1e9 bit/s and MB/sec and MiB/sec
alike as 2**20 byte/s (its ``format_factor`` is 125000000 resp. 0x100000), so 1 MB/sec =
1 MiB/sec = 0.008388608 Gb/s.  ``msg_rate_mpps`` is ``None`` when the column is absent (old
perftest).  Lines perftest interleaves with the table ("Conflicting CPU frequency values
detected ...") are skipped.  ``complete`` is true once the dashed line closing the table is
seen.  Text without the ``#bytes ... BW average`` header, or with the header but no result row,
raises ``PerftestParseError``.
"""

from __future__ import annotations

import math
import re

from ansible_collections.gpucluster.training.plugins.module_utils._parse_text import require_text

__all__ = ["PerftestParseError", "parse_perftest_bw", "MB_PER_SEC_IN_GBPS"]

# perftest divides bytes/s by its format_factor: 0x100000 (2**20) for the default unit, 125000000
# (1e9 bits / 8) for --report_gbits (linux-rdma/perftest, src/perftest_parameters.c,
# ``format_factor = (user_param->report_fmt == MBS) ? 0x100000 : 125000000``). The default unit was
# always 2**20 bytes; only its label changed, from "MB/sec" to "MiB/sec", in perftest 24.07.0
# (commit 1d202bb "Display proper unit for MiB/sec results", src/perftest_parameters.h RESULT_FMT).
# So MB/sec and MiB/sec convert with the same factor: 1 MiB/sec = 2**20 * 8 / 1e9 Gb/s.
MB_PER_SEC_IN_GBPS = 1048576 * 8 / 1e9


class PerftestParseError(ValueError):
    """The text is not a perftest bandwidth summary."""


# The three labels perftest has printed (case-sensitive: "Mb/sec", megabits, is not one of them and
# would be off by a factor of 8.4 if read as 2**20 bytes).
_UNITS = r"(?-i:Gb/sec|MiB/sec|MB/sec)"
_HEADER_RE = re.compile(
    r"^\s*#bytes\s+#iterations\s+BW peak\[(?P<unit>%s)\]\s+"
    r"BW average\[(?P<unit2>%s)\](?P<rate>\s+MsgRate\[Mpps\])?" % (_UNITS, _UNITS),
    re.IGNORECASE,
)
_NUM = r"(?:\d{1,12}(?:\.\d{0,12})?|\.\d{1,12}|inf|nan|-nan)"
_ROW_RE = re.compile(
    r"^\s*(?P<bytes>\d{1,18})\s+(?P<iters>\d{1,18})\s+(?P<peak>%s)\s+(?P<avg>%s)(?:\s+(?P<rate>%s))?\s*$"
    % (_NUM, _NUM, _NUM)
)
_FIELD_KEY_RE = re.compile(r"^[A-Za-z][\w .*/-]*$")
# A perftest run prints a few KiB.
MAX_TEXT_CHARS = 4 * 1024 * 1024
_TITLE_RE = re.compile(r"^\s*(?P<title>(?:RDMA_Write|RDMA_Read|Send|Atomic\w*)\b.*BW Test)\s*$")
_DASHES_RE = re.compile(r"^\s*-{20,}\s*$")


def _float(token: str) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return value


def _fields(line: str):
    """``Key : value`` pairs of a perftest header line (several per line), split on ':' (linear).

    ``" Number of qps   : 1\t\tTransport type : IB"`` -> [("Number of qps", "1"), ("Transport type", "IB")].
    """
    parts = line.split(":")
    out = []
    for index in range(1, len(parts)):
        before = parts[index - 1]
        if index > 1:
            words = before.split(None, 1)
            before = words[1] if len(words) > 1 else ""
        key = " ".join(before.split())
        value = parts[index].split(None, 1)
        if key and value and _FIELD_KEY_RE.match(key):
            out.append((key, value[0]))
    return out


def parse_perftest_bw(text: str) -> dict:
    """Parse one perftest bandwidth run; see the module docstring."""
    require_text(text, MAX_TEXT_CHARS, PerftestParseError, "expected the text of a perftest run, got %s",
                 "the text is %d characters, more than the %d a perftest run prints: pass one run")
    fields = {}
    title = None
    unit = None
    rows = []
    complete = False
    in_table = False
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.rstrip()
        if not line.strip():
            continue
        if in_table:
            match = _ROW_RE.match(line)
            if match:
                factor = 1.0 if unit == "Gb/sec" else MB_PER_SEC_IN_GBPS
                peak, avg = _float(match.group("peak")), _float(match.group("avg"))
                rows.append({
                    "bytes": int(match.group("bytes")),
                    "iterations": int(match.group("iters")),
                    "bw_peak": peak,
                    "bw_average": avg,
                    "msg_rate_mpps": _float(match.group("rate")) if match.group("rate") else None,
                    "bw_peak_gbps": None if peak is None else round(peak * factor, 6),
                    "bw_average_gbps": None if avg is None else round(avg * factor, 6),
                })
                continue
            if _DASHES_RE.match(line):
                if rows:
                    complete = True
                    in_table = False
                continue
            continue  # interleaved warnings ("Conflicting CPU frequency ...")
        match = _HEADER_RE.match(line)
        if match:
            if unit is not None:
                raise PerftestParseError(
                    "the text holds more than one perftest result table: pass one run at a time"
                )
            unit = match.group("unit2")
            in_table = True
            continue
        match = _TITLE_RE.match(line)
        if match and title is None:
            title = " ".join(match.group("title").split())
            continue
        if ":" in line and unit is None:
            for key, value in _fields(line):
                fields.setdefault(key, value)

    if unit is None:
        raise PerftestParseError(
            "no perftest bandwidth table found (expected a '#bytes #iterations BW peak[...] "
            "BW average[...]' header)"
        )
    if not rows:
        raise PerftestParseError("the perftest table has a header but no result row")

    operation = None
    if title:
        lowered = title.lower()
        for key, name in (("rdma_write", "write"), ("rdma_read", "read"),
                          ("send", "send"), ("atomic", "atomic")):
            if lowered.startswith(key):
                operation = name
                break

    def _int(key):
        value = fields.get(key)
        if value is None:
            return None
        match = re.match(r"^(\d{1,9})(?!\d)", value)
        return int(match.group(1)) if match else None

    averages = [r["bw_average_gbps"] for r in rows if r["bw_average_gbps"] is not None]
    peaks = [r["bw_peak_gbps"] for r in rows if r["bw_peak_gbps"] is not None]
    return {
        "test": title,
        "operation": operation,
        "bidirectional": bool(title and "bidirectional" in title.lower()),
        "device": fields.get("Device"),
        "link_type": fields.get("Link type"),
        "transport_type": fields.get("Transport type"),
        "connection_type": fields.get("Connection type"),
        "gid_index": _int("GID index"),
        "mtu_bytes": _int("Mtu"),
        "qps": _int("Number of qps"),
        "unit": unit,
        "complete": complete,
        "rows": rows,
        "bw_peak_max_gbps": max(peaks) if peaks else None,
        "bw_average_max_gbps": max(averages) if averages else None,
    }
