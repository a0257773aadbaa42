# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The files of the controller-side caches (the compile cache's code objects, the payload store's
payloads and records): written so that no reader sees one partly written (other processes read them
while they are written), and read only from a directory that no one but the running user can write
(what they hold is code the controller runs)."""

from __future__ import annotations

import os
import stat
import tempfile


def write_atomic(target, data):
    """Write bytes to target through a temporary file in the same folder, renamed into place; the
    temporary file is removed when anything fails."""
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _safe(info, kind):
    return kind(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def private_dir(path, create=True):
    """path as a directory of this user only (created so, mode 0700); False where it is not safe to
    read from (not a directory, another owner, or writable by others)."""
    if create:
        os.makedirs(path, mode=0o700, exist_ok=True)
    try:
        return _safe(os.lstat(path), stat.S_ISDIR)
    except OSError:
        return False


def own_file(path):
    """path is a regular file of this user that no one else can write."""
    try:
        return _safe(os.lstat(path), stat.S_ISREG)
    except OSError:
        return False
