# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The validation report's plot as a PNG, in pure Python (no plotting library on the controller).

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``render_png(plot)`` takes the ``plot`` of a ``judge_run`` report (``{series: [{label, points:
[[size_bytes, busbw_gbps]], limit, reference_gbs}]}``) and returns the bytes of a PNG: bus
bandwidth against message size (log2 axis), one colour per run, its pass line dashed and the
published reference dotted in the same colour, a legend. The same data give the same bytes.
"""

from __future__ import annotations

import math
import struct
import zlib

__all__ = ["render_png", "PlotError"]


class PlotError(ValueError):
    """Plot data that cannot be drawn."""


WIDTH, HEIGHT = 960, 540
LEFT, RIGHT, TOP, BOTTOM = 80, 300, 50, 60
SCALE = 2
COLOURS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (255, 127, 14), (148, 103, 189), (140, 86, 75),
           (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)]
# A 3 x 5 pixel font, drawn: under each character its five rows ("#" set, "." clear).
_FONT = """
0   1   2   3   4   5   6   7   8   9   A   B   C   D   E   F
### .#. ### ### #.# ### ### ### ### ### .#. ##. ### ##. ### ###
#.# ##. ..# ..# #.# #.. #.. ..# #.# #.# #.# #.# #.. #.# #.. #..
#.# .#. ### .## ### ### ### .#. ### ### ### ##. #.. #.# ##. ##.
#.# .#. #.. ..# ..# ..# #.# .#. #.# ..# #.# #.# #.. #.# #.. #..
### ### ### ### ..# ### ### .#. ### ### #.# ##. ### ##. ### #..

G   H   I   J   K   L   M   N   O   P   Q   R   S   T   U   V
### #.# ### ..# #.# #.. #.# ##. ### ### ### ##. ### ### #.# #.#
#.. #.# .#. ..# #.# #.. ### #.# #.# #.# #.# #.# #.. .#. #.# #.#
#.# ### .#. ..# ##. #.. ### #.# #.# ### #.# ##. ### .#. #.# #.#
#.# #.# .#. #.# #.# #.. #.# #.# #.# #.. ### #.# ..# .#. #.# #.#
### #.# ### ### #.# ### #.# #.# ### #.. ..# #.# ### .#. ### .#.

W   X   Y   Z   .       :   -   +   /   (   )   %   _   =   [   ]
#.# #.# #.# ### ... ... ... ... ... ..# .#. .#. #.# ... ... ##. .##
#.# #.# #.# ..# ... ... .#. ... .#. ..# #.. ..# ..# ... ### #.. ..#
### .#. .#. .#. ... ... ... ### ### .#. #.. ..# .#. ... ... #.. ..#
### #.# .#. #.. ... ... .#. ... .#. #.. #.. ..# #.. ... ### #.. ..#
#.# #.# .#. ### .#. ... ... ... ... #.. .#. .#. #.# ### ... ##. .##
"""


def _font(text):
    """``_FONT`` -> {character: "row,row,row,row,row"} (each glyph 3 columns, one space between)."""
    glyphs = {}
    for block in text.strip("\n").split("\n\n"):
        header, *rows = block.split("\n")
        for column in range(0, len(header), 4):
            glyphs[header[column]] = ",".join(row[column:column + 3] for row in rows)
    return glyphs


_GLYPHS = _font(_FONT)


class _Canvas:
    def __init__(self, width, height):
        self.width, self.height = width, height
        self.rows = [bytearray(b"\xff" * (width * 3)) for _row in range(height)]

    def dot(self, x, y, colour):
        if 0 <= x < self.width and 0 <= y < self.height:
            self.rows[y][x * 3:x * 3 + 3] = bytes(colour)

    def line(self, x0, y0, x1, y1, colour, dash=0, width=1):
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(steps + 1):
            if dash and (i // dash) % 2:
                continue
            x = int(round(x0 + (x1 - x0) * i / float(steps)))
            y = int(round(y0 + (y1 - y0) * i / float(steps)))
            for dy in range(width):
                self.dot(x, y + dy, colour)

    def box(self, x0, y0, x1, y1, colour):
        for y in range(y0, y1):
            for x in range(x0, x1):
                self.dot(x, y, colour)

    def text(self, x, y, text, colour=(0, 0, 0)):
        for char in str(text).upper():
            glyph = _GLYPHS.get(char, _GLYPHS["-"])
            for row, bits in enumerate(glyph.split(",")):
                for col, bit in enumerate(bits):
                    if bit == "#":
                        self.box(x + col * SCALE, y + row * SCALE, x + (col + 1) * SCALE, y + (row + 1) * SCALE, colour)
            x += 4 * SCALE
        return x

    def frame(self, box, title, empty=None):
        """Title and the two axes of a plot whose area is box = (x0, x1, y0, y1), y0 at the bottom;
        with `empty` (no data), that message in the middle instead of data."""
        x0, x1, y0, y1 = box
        self.text(x0, 16, title)
        self.line(x0, y0, x1, y0, (0, 0, 0))
        self.line(x0, y0, x0, y1, (0, 0, 0))
        if empty:
            self.text(x0 + 20, (y0 + y1) // 2, empty)

    def png(self):
        raw = b"".join(b"\x00" + bytes(row) for row in self.rows)

        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
                + chunk(b"IEND", b""))


def _size_label(size):
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= factor:
            return "%d%s" % (size // factor, unit)
    return "%d" % size


def _figure(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise PlotError("%s must be a finite number >= 0, got %r" % (what, value))
    return float(value)


def render_png(plot):
    """PNG bytes of the report plot (see the module docstring)."""
    if not isinstance(plot, dict) or not isinstance(plot.get("series"), list):
        raise PlotError("render_png: expected the 'plot' of a validate_judge report")
    series = []
    for index, item in enumerate(plot["series"][:len(COLOURS)]):
        points = [(_figure(p[0], "size"), _figure(p[1], "busbw")) for p in item.get("points") or []
                  if isinstance(p, (list, tuple)) and len(p) == 2]
        points = [p for p in points if p[0] > 0]
        if points:
            label = str(item.get("label") or "run %d" % (index + 1))[:24]
            if item.get("verdict") in ("pass", "fail"):
                label += " " + item["verdict"].upper()
            series.append((COLOURS[index], label, sorted(points), item.get("limit"), item.get("reference_gbs")))
    canvas = _Canvas(WIDTH, HEIGHT)
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP
    canvas.frame((x0, x1, y0, y1), "ALL_REDUCE BUS BANDWIDTH (GB/S) VS MESSAGE SIZE (BYTES)",
                 empty=None if series else "NO BUS BANDWIDTH TO PLOT")
    if not series:
        return canvas.png()
    sizes = [p[0] for s in series for p in s[2]]
    lo, hi = math.log2(min(sizes)), math.log2(max(sizes))
    if hi - lo < 1:
        lo, hi = lo - 1, hi + 1
    top = max([p[1] for s in series for p in s[2]]
              + [_figure(s[3], "limit") for s in series if s[3] is not None]
              + [_figure(s[4], "reference") for s in series if s[4] is not None] + [1.0]) * 1.1

    def px(size):
        return int(x0 + (math.log2(size) - lo) / (hi - lo) * (x1 - x0))

    def py(value):
        return int(y0 - value / top * (y0 - y1))

    raw_step = top / 5.0
    magnitude = 10 ** math.floor(math.log10(raw_step))
    tick = min((m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw_step), default=raw_step)
    for step in range(int(top // tick) + 1):
        value = tick * step
        y = py(value)
        canvas.line(x0 - 4, y, x0, y, (0, 0, 0))
        canvas.line(x0 + 1, y, x1, y, (225, 225, 225), dash=2)
        canvas.text(8, y - 5, "%d" % round(value))
    exp = int(math.ceil(lo))
    stride = max(1, int((hi - lo) // 8) + 1)
    while exp <= hi:
        x = px(2 ** exp)
        canvas.line(x, y0, x, y0 + 4, (0, 0, 0))
        canvas.text(x - 10, y0 + 10, _size_label(2 ** exp))
        exp += stride
    for colour, label, points, limit, reference in series:
        for (sa, ba), (sb, bb) in zip(points, points[1:]):
            canvas.line(px(sa), py(ba), px(sb), py(bb), colour, width=2)
        for size, busbw in points:
            canvas.box(px(size) - 2, py(busbw) - 2, px(size) + 3, py(busbw) + 3, colour)
        if limit is not None:
            canvas.line(x0, py(limit), x1, py(limit), colour, dash=8)
        if reference is not None:
            canvas.line(x0, py(reference), x1, py(reference), colour, dash=2)
    y = TOP
    canvas.text(x1 + 16, y, "RUN / PASS LINE / REFERENCE")
    for colour, label, points, limit, reference in series:
        y += 24
        canvas.box(x1 + 16, y, x1 + 30, y + 10, colour)
        canvas.text(x1 + 36, y, label)
        detail = []
        if limit is not None:
            detail.append("PASS %d" % round(limit))
        if reference is not None:
            detail.append("REF %d" % round(reference))
        if detail:
            y += 14
            canvas.text(x1 + 36, y, " ".join(detail) + " GB/S")
    canvas.text(x1 + 16, y0 - 14, "--  PASS LINE   ..  REFERENCE")
    return canvas.png()
