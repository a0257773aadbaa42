# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Module payloads kept from one ansible-playbook run to the next.

Before a Python module runs on a host, ansible-core 2.19 builds its AnsiballZ payload: it parses
the module and, one import after another, every module_utils file it needs (recursive_finder), and
zips them. It keeps the payload for the rest of the run only (a pickle per module under the run's
local temporary directory, ``ansiballz_cache``), so every run builds every module it uses again:
0.15-0.4 s of the controller's processor per module, and the first wave of each module waits for it
(the other hosts' workers wait on the builder's lock).

This store keeps those pickles between runs, each with a record of the files in its zip: for every
entry, the controller file it came from, the SHA-1 of its content and the file's stat (inode, size,
modification and change times). At the start of a run a stored payload is given to the run only
when every entry is still the controller's current file: the file the current ansible-core and
collection search path resolve the entry to is the recorded one with the recorded stat, or else its
content has the recorded SHA-1 (the two package stubs ansible-core writes itself are fixed by its
release, which names the store's directory). A payload that passes is linked into the run's
``ansiballz_cache``, where Ansible finds it as if built earlier in the same run; any difference
(another checkout of a collection, an edited module_utils file, another ansible-core) leaves the
module to be built as always. At the end of the run the payloads the run built are stored, each
only if its files are still what it holds. What the module receives (its arguments, interpreter,
environment) is assembled per task by Ansible, untouched.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import io
import json
import os
import sys
import zipfile

from ansible_collections.gpucluster.training.plugins.plugin_utils import _ansible_release
from ansible_collections.gpucluster.training.plugins.plugin_utils._cache_files import own_file, private_dir, write_atomic

RUN_SUBDIR = "ansiballz_cache"
RECORD = ".sources.json"
# written by recursive_finder itself (a namespace stub), not read from a file: fixed by the release
STUB_ENTRIES = frozenset(("ansible/__init__.py", "ansible/module_utils/__init__.py"))


def why_not():
    """None where this ansible-core keeps payloads as this store expects, else the reason."""
    try:
        from ansible.release import __version__ as ansible_version
        from ansible.executor import module_common
    except ImportError as exc:  # pragma: no cover - ansible-core is what runs this
        return "ansible-core not importable (%s)" % exc
    # the payload cache's directory name, the pickle of _CachedModule and the zip layout
    unsupported = _ansible_release.unsupported(ansible_version)
    if unsupported:
        return unsupported
    if not hasattr(module_common, "_CachedModule"):
        return "ansible-core without the expected payload cache"
    return None


def store_dir(base):
    """The store's directory for this ansible-core release and Python under base."""
    from ansible.release import __version__ as ansible_version
    return os.path.join(os.path.expanduser(base), "ansible-%s-py%d.%d" % (ansible_version, sys.version_info[0], sys.version_info[1]))


def _payload_names(folder):
    """The payload files of a folder: Ansible's names, without its lock files, partial writes and records."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [n for n in names if not n.startswith(".") and not n.endswith((".lock", "-part", ".tmp", RECORD))]


def stat_key(info):
    """What says a file was not written since: inode, size, modification and change times."""
    return [info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


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


class Controller:
    """The controller's files as a payload builder would find them now, each looked at once."""

    def __init__(self, resolve=None):
        self.collections = {}
        self.stats = {}
        self.digests = {}
        self.resolve = resolve or (lambda entry: controller_path(entry, self.collection_path))

    def collection_path(self, name):
        if name not in self.collections:
            self.collections[name] = collection_root(name)
        return self.collections[name]

    def stat(self, path):
        if path not in self.stats:
            try:
                self.stats[path] = stat_key(os.stat(path))
            except OSError:
                self.stats[path] = None
        return self.stats[path]

    def digest(self, path):
        """SHA-1 of the file's content, or None where it cannot be read."""
        if path not in self.digests:
            try:
                with open(path, "rb") as handle:
                    self.digests[path] = hashlib.sha1(handle.read()).hexdigest()
            except OSError:
                self.digests[path] = None
        return self.digests[path]


def record_of(zip_bytes, controller):
    """The record of a payload built now: {entry: [controller path, SHA-1, stat]} (path and stat None
    for a package __init__ Ansible wrote empty), or None where an entry is not the controller's file
    (changed while the run built it, or not found): such a payload is not stored."""
    record = {}
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as archive:
        for info in archive.infolist():
            if info.filename in STUB_ENTRIES:
                continue
            data = archive.read(info)
            digest = hashlib.sha1(data).hexdigest()
            path = controller.resolve(info.filename)
            if path is None or controller.stat(path) is None:
                if data.strip():
                    return None
                record[info.filename] = [None, digest, None]
            elif controller.digest(path) != digest:
                return None
            else:
                record[info.filename] = [path, digest, controller.stat(path)]
    return record


def stale_entries(record, controller):
    """The entries of a payload's record that are not the controller's current files (empty: current)."""
    stale = []
    for entry, (path, digest, key) in sorted(record.items()):
        now = controller.resolve(entry)
        if path is None:
            if now is not None and controller.stat(now) is not None:
                stale.append(entry)  # a file now where Ansible wrote an empty __init__
            continue
        if now is None or controller.stat(now) is None:
            stale.append(entry)
        elif now == path and controller.stat(now) == key:
            continue  # the same file, not written since
        elif controller.digest(now) != digest:
            stale.append(entry)
    return stale


def payload_key(path):
    """What says a stored payload is the one its record was written for: inode, size, modification
    time (not the change time: linking it into a run, and the run's end, change that)."""
    info = os.stat(path)
    return [info.st_ino, info.st_size, info.st_mtime_ns]


def _read_record(path):
    try:
        with open(path, "r", encoding="utf-8") as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) and isinstance(data.get("entries"), dict) else None
    except (OSError, ValueError):
        return None


def restore(store, run_tmp, controller=None):
    """Give the run every stored payload whose files are current (linked, else copied, into its
    payload directory). Returns (restored names, {name: why not})."""
    restored, skipped = [], {}
    if not private_dir(store, create=False):
        return restored, skipped
    controller = controller or Controller()
    target = os.path.join(run_tmp, RUN_SUBDIR)
    for name in _payload_names(store):
        source = os.path.join(store, name)
        record = _read_record(source + RECORD) if own_file(source + RECORD) else None
        if not own_file(source):
            skipped[name] = "not a private file of this user"
        elif record is None:
            skipped[name] = "no record of its files"
        elif record.get("payload") != payload_key(source):
            skipped[name] = "its record is of another payload"
        else:
            try:
                stale = stale_entries(record["entries"], controller)
            except (TypeError, ValueError):
                stale = ["(damaged record)"]
            if stale:
                skipped[name] = "changed since stored: %s" % ", ".join(stale[:3])
                continue
            os.makedirs(target, exist_ok=True)
            if not os.path.exists(os.path.join(target, name)):
                _link_or_copy(source, os.path.join(target, name))
            restored.append(name)
    return restored, skipped


def _zip_bytes(path):
    """The zip of one payload (a pickled _CachedModule), or None where it cannot be read."""
    from ansible.executor.module_common import _CachedModule
    try:
        return base64.b64decode(_CachedModule.load(path).zip_data)
    except Exception:  # pylint: disable=broad-except
        return None  # damaged, or of another layout: not stored


def save(run_tmp, store, controller=None):
    """Store the payloads this run built, each with the record of its files. Returns the names written."""
    source_dir = os.path.join(run_tmp, RUN_SUBDIR)
    names = _payload_names(source_dir)
    if not names or not private_dir(store):
        return []
    controller = controller or Controller()
    written = []
    for name in names:
        source, target = os.path.join(source_dir, name), os.path.join(store, name)
        if _same_inode(source, target):
            continue  # given to this run by the store
        zip_bytes = _zip_bytes(source)
        record = record_of(zip_bytes, controller) if zip_bytes is not None else None
        if record is None:
            continue
        _copy_atomic(source, target)
        write_atomic(target + RECORD, json.dumps({"payload": payload_key(target), "entries": record}, sort_keys=True).encode("utf-8"))
        written.append(name)
    return written


def _same_inode(one, two):
    try:
        return os.path.samefile(one, two)
    except OSError:
        return False


def _link_or_copy(source, target):
    try:
        os.link(source, target)
    except OSError:
        _copy_atomic(source, target)


def _copy_atomic(source, target):
    with open(source, "rb") as src:
        write_atomic(target, src.read())
