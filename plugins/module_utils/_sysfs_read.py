# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading sysfs for the probe modules (gpu_info, rdma_info): the ONE place for it.

PRIVATE to the collection: the interface may change without notice. The only I/O in
module_utils: the parsers stay pure and take what these functions read.
"""

from __future__ import annotations

import os


def read_text(path):
    """Text of a small sysfs file, or None when it cannot be read (missing, or EINVAL as on the
    unused GID attributes of an RDMA port)."""
    try:
        with open(path, "r") as handle:
            return handle.read()
    except (IOError, OSError, UnicodeDecodeError):
        return None


def listdir(path):
    """Sorted entries of a directory, or None when it cannot be listed."""
    try:
        return sorted(os.listdir(path))
    except OSError:
        return None
