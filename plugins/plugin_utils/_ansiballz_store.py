# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Module payloads kept from one ansible-playbook run to the next.

Before a Python module runs on a host, ansible-core 2.19 builds its AnsiballZ payload: it parses
the module and, one import after another, every module_utils file it needs (recursive_finder), and
zips them. It keeps the payload for the rest of the run only (a pickle per module under the run's
local temporary directory, ``ansiballz_cache``), so every run builds every module it uses again:
0.2-1.0 s of the controller's processor per module, and the first wave of each module waits for it
(the other hosts' workers wait on the builder's lock).

This store keeps those pickles between runs. At the start of a run each stored payload is checked
file by file against what the controller would put into it now: every file in the zip must be
byte-identical to the file at the place the current ansible-core and collection search path resolve
it to (the two package stubs ansible-core writes itself are fixed by its release, which names the
store's directory). Only a payload that passes is copied into the run's ``ansiballz_cache``, where
Ansible finds it as if built earlier in the same run; any difference (another checkout of a
collection, an edited module_utils file, another ansible-core) leaves the module to be built as
always. At the end of the run the payloads the run built are stored. What the module receives
(its arguments, interpreter, environment) is assembled per task by Ansible, untouched.
"""

from __future__ import annotations

import base64
import importlib
import io
import os
import shutil
import stat
import sys
import tempfile
import zipfile

# the ansible-core releases whose payload cache (directory name, pickle of _CachedModule, zip layout)
# this was checked against
SUPPORTED_ANSIBLE = ("2.19.",)
RUN_SUBDIR = "ansiballz_cache"
# written by recursive_finder itself (a namespace stub), not read from a file: fixed by the release
STUB_ENTRIES = frozenset(("ansible/__init__.py", "ansible/module_utils/__init__.py"))


def why_not():
    """None where this ansible-core keeps payloads as this store expects, else the reason."""
    try:
        from ansible.release import __version__ as ansible_version
        from ansible.executor import module_common
    except ImportError as exc:  # pragma: no cover - ansible-core is what runs this
        return "ansible-core not importable (%s)" % exc
    if not ansible_version.startswith(SUPPORTED_ANSIBLE):
        return "ansible-core %s, not one of %s" % (ansible_version, ", ".join(v + "x" for v in SUPPORTED_ANSIBLE))
    if not hasattr(module_common, "_CachedModule"):
        return "ansible-core without the expected payload cache"
    return None


def store_dir(base):
    """The store's directory for this ansible-core release and Python under base."""
    from ansible.release import __version__ as ansible_version
    return os.path.join(os.path.expanduser(base), "ansible-%s-py%d.%d" % (ansible_version, sys.version_info[0], sys.version_info[1]))


def _private_dir(path):
    """Create path (and parents) for this user only; False where it exists and is not safe to read
    pickles from (another owner, or writable by others)."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _own_file(path):
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _payload_names(folder):
    """The payload files of a folder: Ansible's names, without its lock files and partial writes."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [n for n in names if not n.startswith(".") and not n.endswith((".lock", "-part", ".tmp"))]


def controller_path(entry, collection_path):
    """Where the controller has the file a payload's zip entry came from, or None (a package
    __init__ Ansible writes empty for a collection, which has none)."""
    parts = entry.split("/")
    if parts[0] == "ansible" and len(parts) > 1:
        import ansible
        return os.path.join(os.path.dirname(ansible.__file__), *parts[1:])
    if parts[0] == "ansible_collections" and len(parts) > 3:
        root = collection_path("%s.%s" % (parts[1], parts[2]))
        return os.path.join(root, *parts[3:]) if root else None
    return None


def stale_entries(zip_bytes, resolve, read):
    """The zip entries of a payload that differ from the controller's files now (empty: current).

    resolve(entry) gives the controller path or None; read(path) the file's bytes or None."""
    stale = []
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as archive:
        for info in archive.infolist():
            if info.filename in STUB_ENTRIES:
                continue
            data = archive.read(info)
            path = resolve(info.filename)
            current = read(path) if path else None
            if current is None:
                if data.strip():
                    stale.append(info.filename)  # a file that is no longer where it was found
            elif current != data:
                stale.append(info.filename)
    return stale


class _Reader:
    """Each controller file read once per check."""

    def __init__(self):
        self.files = {}
        self.collections = {}

    def read(self, path):
        if path not in self.files:
            try:
                with open(path, "rb") as handle:
                    self.files[path] = handle.read()
            except OSError:
                self.files[path] = None
        return self.files[path]

    def collection_path(self, name):
        if name not in self.collections:
            self.collections[name] = collection_root(name)
        return self.collections[name]


def collection_root(name):
    """The folder a collection's files are read from now, as Ansible's payload builder reads them
    (pkgutil.get_data beside the package's __file__, which Ansible's collection loader sets to a
    name inside the collection's folder), or None where it is not found."""
    try:
        package = importlib.import_module("ansible_collections." + name)
    except ImportError:
        return None
    if getattr(package, "__file__", None):
        return os.path.dirname(package.__file__)
    paths = list(getattr(package, "__path__", []))  # a plain namespace package (no collection loader)
    return paths[0] if len(paths) == 1 else None


def _zip_bytes(path):
    """The zip of one stored payload (a pickled _CachedModule), or None where it cannot be read."""
    from ansible.executor.module_common import _CachedModule
    try:
        cached = _CachedModule.load(path)
        return base64.b64decode(cached.zip_data)
    except Exception:  # pylint: disable=broad-except
        return None  # damaged, or of another layout: built again


def restore(store, run_tmp):
    """Copy every stored payload that is current into the run's payload directory. Returns
    (restored names, {name: why not restored})."""
    target = os.path.join(run_tmp, RUN_SUBDIR)
    restored, skipped = [], {}
    if not os.path.isdir(store) or not _private_dir(store):
        return restored, skipped
    reader = _Reader()
    for name in _payload_names(store):
        source = os.path.join(store, name)
        if not _own_file(source):
            skipped[name] = "not a private file of this user"
            continue
        zip_bytes = _zip_bytes(source)
        if zip_bytes is None:
            skipped[name] = "unreadable"
            continue
        try:
            stale = stale_entries(zip_bytes, lambda entry: controller_path(entry, reader.collection_path), reader.read)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            skipped[name] = "unreadable (%s)" % exc
            continue
        if stale:
            skipped[name] = "changed since stored: %s" % ", ".join(stale[:3])
            continue
        os.makedirs(target, exist_ok=True)
        if not os.path.exists(os.path.join(target, name)):
            _copy_atomic(source, os.path.join(target, name))
        restored.append(name)
    return restored, skipped


def save(run_tmp, store):
    """Store the payloads this run built (or replaced). Returns the names written."""
    source_dir = os.path.join(run_tmp, RUN_SUBDIR)
    names = _payload_names(source_dir)
    if not names or not _private_dir(store):
        return []
    written = []
    for name in names:
        source, target = os.path.join(source_dir, name), os.path.join(store, name)
        if _same_file(source, target):
            continue
        _copy_atomic(source, target)
        written.append(name)
    return written


def _same_file(one, two):
    try:
        if os.path.getsize(one) != os.path.getsize(two):
            return False
        with open(one, "rb") as first, open(two, "rb") as second:
            return first.read() == second.read()
    except OSError:
        return False


def _copy_atomic(source, target):
    """Copy so that no reader sees a partial file (a temporary file in the same folder, renamed)."""
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
