# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Natural order of device names (``mlx5_2`` before ``mlx5_10``): the ONE sort key for it.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.
"""

from __future__ import annotations

import re

_DIGITS = re.compile(r"([0-9]+)")


def natural_key(name):
    """Sort key: runs of ASCII digits compare as numbers, the rest as text (any value as str)."""
    return [(0, int(part), "") if index % 2 else (1, 0, part)
            for index, part in enumerate(_DIGITS.split(str(name)))]
