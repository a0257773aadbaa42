# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Slurm hostlist expressions: ``["gpu1", "gpu2", "gpu10"]`` <-> ``"gpu[1-2,10]"``.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.
``_slurm_conf`` is their front door (``hostlist``/``expand_hostlist`` raising ``SlurmConfError``);
``error`` is the caller's error class.
"""

from __future__ import annotations

import re

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind

_NAME_NUM = re.compile(r"^(.*?)(\d+)(\D*)$")


def _split_name(name):
    match = _NAME_NUM.match(name)
    if not match:
        return name, None, ""
    return match.group(1), match.group(2), match.group(3)


def _ranges(numbers):
    """Sorted digit strings -> 'a-b,c' (zero padding kept; only same-width numbers join)."""
    out = []
    start = prev = None
    for num in numbers:
        if prev is not None and int(num) == int(prev) + 1 and len(num) == len(prev):
            prev = num
            continue
        if start is not None:
            out.append(start if start == prev else "%s-%s" % (start, prev))
        start = prev = num
    if start is not None:
        out.append(start if start == prev else "%s-%s" % (start, prev))
    return ",".join(out)


def hostlist(names, error=ValueError):
    """Compress names into a Slurm hostlist expression: ``gpu1 gpu2 gpu3 gpu10`` -> ``gpu[1-3,10]``.

    Only the last number of a name is ranged, and only where nothing follows it: names with a
    suffix after that number (``node1-ib``, ``gpu01a``) are listed one by one, since Slurm before
    23.11 cannot read a suffix after the brackets (``node[1-2]-ib``; 23.11's RELEASE_NOTES: "Allow
    for a shared suffix to be used with the hostlist format"; 22.05's _hostlist_create_bracketed in
    src/common/hostlist.c refuses a ']' followed by anything but ',' or the end), and Debian
    bookworm ships 22.05.  Names are de-duplicated and sorted by prefix, suffix and number.
    ``expand_hostlist(hostlist(x)) == sorted(set(x))`` in that order.
    """
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, (list, tuple, set)):
        raise error("hostlist expects a list of host names, got %s" % kind(names))
    groups = {}
    plain = []
    for name in names:
        if not isinstance(name, str) or not name or re.search(r"[\s,\[\]]", name):
            raise error("invalid host name %r: names must be non-empty, without spaces, commas or brackets" % (name,))
        prefix, num, suffix = _split_name(name)
        if num is None:
            plain.append(name)
        else:
            groups.setdefault((prefix, suffix), set()).add(num)
    parts = sorted(set(plain))
    for (prefix, suffix) in sorted(groups):
        nums = sorted(groups[(prefix, suffix)], key=lambda n: (int(n), len(n)))
        if len(nums) == 1 or suffix:
            parts.extend("%s%s%s" % (prefix, num, suffix) for num in nums)
        else:
            parts.append("%s[%s]" % (prefix, _ranges(nums)))
    return ",".join(parts)


def expand_hostlist(expr, error=ValueError):
    """Expand a hostlist expression with at most one bracket per name: ``gpu[1-2,5]`` -> names."""
    if not isinstance(expr, str):
        raise error("hostlist expression must be a string, got %s" % kind(expr))
    names = []
    items, depth, start = [], 0, 0
    for pos, char in enumerate(expr):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(expr[start:pos])
            start = pos + 1
        if depth not in (0, 1):
            raise error("unbalanced brackets in hostlist %r" % expr)
    if depth:
        raise error("unbalanced brackets in hostlist %r" % expr)
    items.append(expr[start:])
    for item in [i for i in items if i]:
        match = re.match(r"^([^\[\]]*)\[([^\]]*)\]([^\[\]]*)$", item)
        if not match:
            if "[" in item or "]" in item:
                raise error("invalid hostlist item %r" % item)
            names.append(item)
            continue
        prefix, body, suffix = match.groups()
        for rng in body.split(","):
            bounds = rng.split("-")
            if len(bounds) == 1 and bounds[0].isdigit():
                names.append(prefix + bounds[0] + suffix)
            elif len(bounds) == 2 and all(b.isdigit() for b in bounds) and int(bounds[0]) <= int(bounds[1]):
                width = len(bounds[0])
                for num in range(int(bounds[0]), int(bounds[1]) + 1):
                    names.append("%s%0*d%s" % (prefix, width, num, suffix))
            else:
                raise error("invalid range %r in hostlist item %r" % (rng, item))
    return names


# --- nodes ----------------------------------------------------------------------------------
