# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The module payloads gpucluster.training.preload keeps between runs: a payload Ansible built is
stored, given to the next run only while every file in it is the controller's current file, and
refused when one differs, when it is damaged or when another user could have written it (the
whole-playbook proof is every harness run: ansible.cfg enables the callback)."""

from __future__ import annotations

import base64
import io
import os
import zipfile

import ansible.modules
import pytest
from ansible.executor import module_common
from ansible_collections.gpucluster.training.plugins.plugin_utils import _ansiballz_store as store

pytestmark = pytest.mark.skipif(store.why_not() is not None, reason="payload store not applied on this ansible-core")


def zip_of(entries):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


FILES = {
    "/a/ansible/module_utils/basic.py": b"basic\n",
    "/c/gpucluster/training/plugins/module_utils/_ibstat.py": b"def parse(): pass\n",
    "/c/gpucluster/training/plugins/modules/rdma_info.py": b"module\n",
}


def resolve(entry):
    return store.controller_path(entry, lambda name: "/c/gpucluster/training" if name == "gpucluster.training" else None) \
        if entry.startswith("ansible_collections/") else ("/a/" + entry if entry.startswith("ansible/") else None)


ENTRIES = {
    "ansible/__init__.py": b"from pkgutil import extend_path\n",  # Ansible's own stub
    "ansible/module_utils/basic.py": b"basic\n",
    "ansible_collections/__init__.py": b"",
    "ansible_collections/gpucluster/__init__.py": b"",
    "ansible_collections/gpucluster/training/plugins/__init__.py": b"",  # written empty by Ansible
    "ansible_collections/gpucluster/training/plugins/module_utils/_ibstat.py": b"def parse(): pass\n",
    "ansible_collections/gpucluster/training/plugins/modules/rdma_info.py": b"module\n",
}


def test_a_payload_of_the_current_files_is_current():
    assert store.stale_entries(zip_of(ENTRIES), resolve, FILES.get) == []


@pytest.mark.parametrize("path, entry", [
    ("/a/ansible/module_utils/basic.py", "ansible/module_utils/basic.py"),
    ("/c/gpucluster/training/plugins/module_utils/_ibstat.py", "ansible_collections/gpucluster/training/plugins/module_utils/_ibstat.py"),
    ("/c/gpucluster/training/plugins/modules/rdma_info.py", "ansible_collections/gpucluster/training/plugins/modules/rdma_info.py"),
])
def test_an_edited_or_removed_file_makes_the_payload_stale(path, entry):
    edited = dict(FILES, **{path: FILES[path] + b"# edited\n"})
    assert store.stale_entries(zip_of(ENTRIES), resolve, edited.get) == [entry]
    removed = {k: v for k, v in FILES.items() if k != path}
    assert store.stale_entries(zip_of(ENTRIES), resolve, removed.get) == [entry]


def test_a_collection_found_elsewhere_now_is_compared_there():
    # another checkout of the collection first in the search path: its files, not the stored ones
    def elsewhere(entry):
        return store.controller_path(entry, lambda name: "/other/gpucluster/training")
    other = {k.replace("/c/", "/other/"): v for k, v in FILES.items()}
    other["/other/gpucluster/training/plugins/module_utils/_ibstat.py"] = b"def parse(): return 1\n"
    assert store.stale_entries(zip_of(ENTRIES), lambda e: elsewhere(e) if e.startswith("ansible_collections/") else resolve(e),
                               other.get) == ["ansible_collections/gpucluster/training/plugins/module_utils/_ibstat.py"]


COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
ANSIBLE = os.path.dirname(os.path.dirname(ansible.modules.__file__))
PAYLOAD_FILES = {
    # zip entry: the controller file Ansible read it from
    "ansible/module_utils/basic.py": os.path.join(ANSIBLE, "module_utils", "basic.py"),
    "ansible_collections/gpucluster/training/plugins/module_utils/_ibstat.py": os.path.join(COLLECTION, "plugins", "module_utils", "_ibstat.py"),
    "ansible_collections/gpucluster/training/plugins/modules/rdma_info.py": os.path.join(COLLECTION, "plugins", "modules", "rdma_info.py"),
}


def payload(run, name="ansible_collections.gpucluster.training.plugins.modules.rdma_info-ZIP_DEFLATED-none"):
    """A payload as Ansible keeps it in a run's directory (a pickled _CachedModule), of the real files."""
    entries = {"ansible/__init__.py": b"from pkgutil import extend_path\n", "ansible_collections/__init__.py": b"",
               "ansible_collections/gpucluster/training/plugins/__init__.py": b""}
    for entry, path in PAYLOAD_FILES.items():
        with open(path, "rb") as handle:
            entries[entry] = handle.read()
    folder = os.path.join(str(run), store.RUN_SUBDIR)
    os.makedirs(folder, exist_ok=True)
    cached = module_common._CachedModule(zip_data=base64.b64encode(zip_of(entries)),
                                         metadata=module_common.ModuleMetadataV1(serialization_profile="legacy"), source_mapping={})
    cached.dump(os.path.join(folder, name))
    return name


def test_a_stored_payload_is_given_to_the_next_run(tmp_path):
    name = payload(tmp_path / "first")
    keep = str(tmp_path / "store")
    assert store.save(str(tmp_path / "first"), keep) == [name]
    assert oct(os.stat(keep).st_mode & 0o777) == "0o700"
    assert store.save(str(tmp_path / "first"), keep) == []  # nothing new
    second = tmp_path / "second"
    second.mkdir()
    assert store.restore(keep, str(second)) == ([name], {})
    restored = second / store.RUN_SUBDIR / name
    assert restored.read_bytes() == (tmp_path / "first" / store.RUN_SUBDIR / name).read_bytes()
    assert module_common._CachedModule.load(str(restored)).metadata.serialization_profile == "legacy"


@pytest.mark.parametrize("entry", sorted(PAYLOAD_FILES))
def test_a_payload_with_a_changed_file_is_not_used(tmp_path, monkeypatch, entry):
    keep = str(tmp_path / "store")
    name = payload(tmp_path / "first")
    store.save(str(tmp_path / "first"), keep)
    real_read = store._Reader.read

    def read(self, path):
        data = real_read(self, path)
        return data + b"# upgraded\n" if os.path.realpath(path) == os.path.realpath(PAYLOAD_FILES[entry]) else data

    monkeypatch.setattr(store._Reader, "read", read)
    target = tmp_path / "next"
    target.mkdir()
    assert store.restore(keep, str(target)) == ([], {name: "changed since stored: %s" % entry})
    assert not (target / store.RUN_SUBDIR).exists()


def test_damaged_or_foreign_payloads_are_not_used(tmp_path):
    keep = tmp_path / "store"
    name = payload(tmp_path / "first")
    store.save(str(tmp_path / "first"), str(keep))
    (keep / "damaged-ZIP_DEFLATED-none").write_bytes(b"not a pickle")
    os.chmod(keep / "damaged-ZIP_DEFLATED-none", 0o600)
    os.chmod(keep / name, 0o666)  # writable by anyone: not read
    target = tmp_path / "next"
    target.mkdir()
    assert store.restore(str(keep), str(target)) == ([], {name: "not a private file of this user", "damaged-ZIP_DEFLATED-none": "unreadable"})


def test_a_store_directory_others_can_write_is_neither_read_nor_written(tmp_path):
    keep = tmp_path / "store"
    payload(tmp_path / "first")
    store.save(str(tmp_path / "first"), str(keep))
    os.chmod(keep, 0o777)
    target = tmp_path / "next"
    target.mkdir()
    assert store.restore(str(keep), str(target)) == ([], {})
    assert store.save(str(tmp_path / "first"), str(keep)) == []


def test_the_store_is_per_release_and_python(tmp_path):
    folder = store.store_dir(str(tmp_path))
    assert os.path.dirname(folder) == str(tmp_path)
    assert os.path.basename(folder).startswith("ansible-2.") and "-py3." in os.path.basename(folder)
