# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading host files (sysfs, /proc, /etc) for the modules, and the locale their tools run under:
the ONE place for both (gpu_info, rdma_info, managed_state).

PRIVATE to the collection: the interface may change without notice. The only I/O in
module_utils: the parsers stay pure and take what these functions read.
"""

from __future__ import annotations

import os

# The environment every tool a module runs gets (module.run_command(environ_update=LANG_C)): the
# parsers read the C locale's words and number formats.
LANG_C = {"LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}


def read_text(path, escape=False):
    """Text of a small file, or None when it cannot be read (missing, or EINVAL as on the unused
    GID attributes of an RDMA port). Bytes that are not UTF-8 make it None too, unless `escape`:
    then they are kept as surrogates (a configuration file compared line by line, whatever an
    operator wrote into it)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except (IOError, OSError):
        return None
    try:
        return data.decode("utf-8", errors="surrogateescape" if escape else "strict")
    except UnicodeDecodeError:
        return None


def listdir(path):
    """Sorted entries of a directory, or None when it cannot be listed."""
    try:
        return sorted(os.listdir(path))
    except OSError:
        return None
