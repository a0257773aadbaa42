# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writing a generated file the way copy does: only when its bytes differ, atomically, then its
owner, group and mode; a directory the way file does; check mode writes nothing. The one place for the modules that write files they generate
(validate_plot, validate_report, managed_files). Owner, group and mode are read by
_file_attributes, as managed_state reads them.

PRIVATE to the collection: the interface may change without notice.
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
import tempfile

from ansible_collections.gpucluster.training.plugins.module_utils._file_attributes import FileAttributeError, file_attributes


def process_umask():
    """This process's umask (read by setting it and setting it back, as ansible's file modules read
    it): what a symbolic mode without a user class (+x, =rw) leaves alone."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


def read_bytes(path):
    """The file's bytes, or None when there is no regular file at path."""
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as handle:
        return handle.read()


def write_if_different(module, path, data, mode, current, diffs=None):
    """Write data to path when it differs from current (the file's bytes, None when absent), then
    set mode: write_file for a caller with one file and a mode. Returns whether anything changed
    (or would, in check mode). A mode change is added to diffs as a before/after dict when diffs is
    a list."""
    return write_file(module, {"path": path, "mode": mode}, data, current, [] if diffs is None else diffs, {})


class FileWriteError(ValueError):
    """An item managed_files cannot write, or a new file its validation command refused."""


def check_items(items):
    """Refuse items that cannot mean anything before any of them is written: content on a
    directory or absent item, a file without content, a validation command without %s, an
    owner, group or mode that _file_attributes cannot read."""
    for index, item in enumerate(items):
        label = "files[%d] (%s)" % (index, item.get("path"))
        if not str(item.get("path") or "").startswith("/"):
            raise FileWriteError("%s: path must be absolute" % label)
        state = item.get("state") or "file"
        given = [key for key in ("content", "content_base64") if item.get(key) is not None]
        if state == "file" and len(given) != 1:
            raise FileWriteError("%s: state=file needs content or content_base64 (one of them)" % label)
        if state != "file" and (given or item.get("validate") or item.get("backup")):
            raise FileWriteError("%s: content, content_base64, validate and backup are for state=file only" % label)
        if given == ["content_base64"]:
            try:
                base64.b64decode(item["content_base64"], validate=True)
            except (binascii.Error, ValueError):
                # the value itself is not repeated: content_base64 is for keys
                raise FileWriteError("%s: content_base64 is not base64" % label) from None
        if item.get("validate") and "%s" not in item["validate"]:
            raise FileWriteError("%s: validate must contain %%s (the new file's path): %r" % (label, item["validate"]))
        try:
            file_attributes(item)
        except FileAttributeError as exc:
            raise FileWriteError("%s: %s" % (label, exc)) from None


def write_file(module, item, data, current, diffs, backups):
    """Write data to item['path'] when it differs from current (its bytes, None when absent):
    through a temporary file in the same directory, checked by item['validate'] when given, the old
    file backed up when item['backup'] (its backup path put in backups), moved into place; then
    owner, group and mode as the item says. Returns whether anything changed (or would, in check
    mode); attribute changes are added to diffs as before/after dicts."""
    path = item["path"]
    changed = current != data
    if changed and not module.check_mode:
        directory = os.path.dirname(path)
        if not os.path.isdir(directory):
            raise FileWriteError("%s: its directory %s does not exist" % (path, directory))
        handle, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            if item.get("validate"):
                command = item["validate"] % tmp
                rc, out_text, err_text = module.run_command(command)
                if rc != 0:
                    raise FileWriteError("%s: the new file was refused by %r (exit status %d): %s; the old file is left in place"
                                         % (path, item["validate"], rc, (err_text or out_text).strip()))
            if item.get("backup") and current is not None:
                backups[path] = module.backup_local(path)
            # A file that did not exist is given 0666 less the umask by atomic_move, then the item's
            # mode below: with a mode to come (0600 for a password, 0400 for a key) it is created
            # readable by the writer only meanwhile, not by everyone for that moment.
            saved = os.umask(0o077) if item.get("mode") is not None else None
            try:
                module.atomic_move(tmp, path)
            finally:
                if saved is not None:
                    os.umask(saved)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    if not module.check_mode or not changed:
        changed = set_attributes(module, item, changed, diffs)
    return changed


def set_attributes(module, item, changed, diffs):
    """Owner, group and mode of an existing path set as the item says, where they differ (none
    given: left as they are), read by _file_attributes (a symbolic mode applied to the path's
    present mode, as managed_state applies it). Returns changed or'ed with whether they did; a
    before/after dict of what differed is added to diffs."""
    path = item["path"]
    try:
        info = os.lstat(path)
    except OSError:
        info = None  # check mode, nothing written: AnsibleModule reports the change without reading the mode
    try:
        wanted = file_attributes(item, info.st_mode if info else 0, info is not None and stat.S_ISDIR(info.st_mode), process_umask())
    except FileAttributeError as exc:
        module.fail_json(path=path, msg="%s: %s" % (path, exc))
    diff = {"before": {"path": path}, "after": {"path": path}}
    args = module.load_file_common_arguments({"path": path, "owner": wanted["owner"], "group": wanted["group"],
                                              "mode": wanted["mode"]})
    changed = module.set_fs_attributes_if_different(args, changed, diff)
    if diff["before"] != diff["after"]:
        diffs.append(diff)
    return changed


def ensure_directory(module, item, diffs):
    """A directory at item['path'] (its parents made too) with the item's owner, group and mode.
    Returns whether anything changed (or would, in check mode); a new directory and attribute
    changes are added to diffs. A path that exists and is not a directory, or a directory that
    cannot be made, raises FileWriteError."""
    path = item["path"]
    changed = False
    if not os.path.isdir(path):
        if os.path.exists(path):
            raise FileWriteError("%s exists and is not a directory" % path)
        changed = True
        diffs.append({"before": {"path": path, "state": "absent"}, "after": {"path": path, "state": "directory"}})
        if module.check_mode:
            return True
        try:
            os.makedirs(path)
        except OSError as exc:
            raise FileWriteError("cannot create %s: %s" % (path, exc)) from None
    return set_attributes(module, item, changed, diffs)
