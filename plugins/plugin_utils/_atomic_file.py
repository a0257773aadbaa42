# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A file written so that no reader sees it partly written: the controller-side caches (the compile
cache's code objects, the payload store's payloads and records) are read by other processes while
they are written."""

from __future__ import annotations

import os
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
