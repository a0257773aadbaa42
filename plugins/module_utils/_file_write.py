# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writing a generated file the way copy does: only when its bytes differ, atomically, then its
mode; check mode writes nothing. The one place for the modules that write files they generate
(validate_plot, validate_report).

PRIVATE to the collection: the interface may change without notice.
"""

from __future__ import annotations

import os


def read_bytes(path):
    """The file's bytes, or None when there is no regular file at path."""
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as handle:
        return handle.read()


def write_if_different(module, path, data, mode, current, diffs=None):
    """Write data to path when it differs from current (the file's bytes, None when absent), then
    set mode. Returns whether anything changed (or would, in check mode). A mode change is added
    to diffs as a before/after dict when diffs is a list."""
    changed = current != data
    if changed and not module.check_mode:
        tmp = path + ".tmp"
        with open(tmp, "wb") as handle:
            handle.write(data)
        module.atomic_move(tmp, path)
    if not module.check_mode or not changed:
        diff = {"before": {"path": path}, "after": {"path": path}}
        changed = module.set_fs_attributes_if_different(module.load_file_common_arguments({"path": path, "mode": mode}), changed, diff)
        if diffs is not None and diff["before"] != diff["after"]:
            diffs.append(diff)
    return changed
