# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The module payloads gpucluster.training.preload keeps between runs: a payload Ansible built is
stored, given to the next run only while every file in it is the controller's current file, and
refused when one differs, when it is damaged or when another user could have written it (the
whole-playbook proof is every harness run: ansible.cfg enables the callback)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
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


class Fake(store.Controller):
    """The controller's files from a dict: path -> content (stat: a key from the content and a version)."""

    def __init__(self, files, version=1, root="/c"):
        super().__init__(resolve=lambda entry: (
            store.controller_path(entry, lambda name: root + "/gpucluster/training" if name == "gpucluster.training" else None)
            if entry.startswith("ansible_collections/") else ("/a/" + entry if entry.startswith("ansible/") else None)))
        self.files, self.version = files, version

    def stat(self, path):
        return None if path not in self.files else [hash(path) & 0xffff, len(self.files[path]), self.version, self.version]

    def digest(self, path):
        return None if path not in self.files else hashlib.sha1(self.files[path]).hexdigest()


ENTRIES = {
    "ansible/__init__.py": b"from pkgutil import extend_path\n",  # Ansible's own stub
    "ansible/module_utils/basic.py": b"basic\n",
    "ansible_collections/__init__.py": b"",
    "ansible_collections/gpucluster/__init__.py": b"",
    "ansible_collections/gpucluster/training/plugins/__init__.py": b"",  # written empty by Ansible
    "ansible_collections/gpucluster/training/plugins/module_utils/_ibstat.py": b"def parse(): pass\n",
    "ansible_collections/gpucluster/training/plugins/modules/rdma_info.py": b"module\n",
}
RECORD = store.record_of(zip_of(ENTRIES), Fake(FILES))


def test_the_record_names_each_file_and_a_payload_of_the_current_files_is_current():
    assert sorted(RECORD) == sorted(set(ENTRIES) - store.STUB_ENTRIES)
    assert RECORD["ansible_collections/gpucluster/training/plugins/modules/rdma_info.py"][0] == \
        "/c/gpucluster/training/plugins/modules/rdma_info.py"
    assert RECORD["ansible_collections/__init__.py"][0] is None
    assert store.stale_entries(RECORD, Fake(FILES)) == []
    assert store.stale_entries(RECORD, Fake(FILES, version=2)) == []  # written again, the same content


def test_a_payload_of_files_changed_while_it_was_built_is_not_recorded():
    assert store.record_of(zip_of(ENTRIES), Fake(dict(FILES, **{"/a/ansible/module_utils/basic.py": b"new\n"}))) is None
    assert store.record_of(zip_of(dict(ENTRIES, **{"ansible_collections/x.py": b"code"})), Fake(FILES)) is None


@pytest.mark.parametrize("path, entry", [
    ("/a/ansible/module_utils/basic.py", "ansible/module_utils/basic.py"),
    ("/c/gpucluster/training/plugins/module_utils/_ibstat.py", "ansible_collections/gpucluster/training/plugins/module_utils/_ibstat.py"),
    ("/c/gpucluster/training/plugins/modules/rdma_info.py", "ansible_collections/gpucluster/training/plugins/modules/rdma_info.py"),
])
def test_an_edited_or_removed_file_makes_the_payload_stale(path, entry):
    edited = dict(FILES, **{path: FILES[path] + b"# edited\n"})
    assert store.stale_entries(RECORD, Fake(edited, version=2)) == [entry]
    assert store.stale_entries(RECORD, Fake({k: v for k, v in FILES.items() if k != path})) == [entry]


def test_a_file_where_ansible_wrote_an_empty_init_makes_the_payload_stale():
    files = dict(FILES, **{"/c/gpucluster/training/plugins/__init__.py": b"import os\n"})
    assert store.stale_entries(RECORD, Fake(files)) == ["ansible_collections/gpucluster/training/plugins/__init__.py"]


def test_a_collection_found_elsewhere_now_is_compared_there():
    # another checkout of the collection first in the search path: its files, not the recorded ones
    other = {k.replace("/c/", "/other/"): v for k, v in FILES.items()}
    assert store.stale_entries(RECORD, Fake(other, root="/other")) == []
    other["/other/gpucluster/training/plugins/module_utils/_ibstat.py"] = b"def parse(): return 1\n"
    assert store.stale_entries(RECORD, Fake(other, root="/other")) == [
        "ansible_collections/gpucluster/training/plugins/module_utils/_ibstat.py"]


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
    record = json.loads((tmp_path / "store" / (name + store.RECORD)).read_text())
    written_empty = {"ansible_collections/__init__.py", "ansible_collections/gpucluster/training/plugins/__init__.py"}
    assert sorted(record["entries"]) == sorted(set(PAYLOAD_FILES) | written_empty)
    second = tmp_path / "second"
    second.mkdir()
    assert store.restore(keep, str(second)) == ([name], {})
    restored = second / store.RUN_SUBDIR / name
    assert restored.read_bytes() == (tmp_path / "first" / store.RUN_SUBDIR / name).read_bytes()
    assert module_common._CachedModule.load(str(restored)).metadata.serialization_profile == "legacy"
    assert store.save(str(second), keep) == []  # the run had it from the store: nothing to write
    shutil.rmtree(second)  # the run's end
    third = tmp_path / "third"
    third.mkdir()
    assert store.restore(keep, str(third)) == ([name], {})


@pytest.mark.parametrize("entry", sorted(PAYLOAD_FILES))
def test_a_payload_with_a_changed_file_is_not_used(tmp_path, monkeypatch, entry):
    keep = str(tmp_path / "store")
    name = payload(tmp_path / "first")
    store.save(str(tmp_path / "first"), keep)
    real_stat, real_digest = store.Controller.stat, store.Controller.digest

    def changed(path):
        return os.path.realpath(path) == os.path.realpath(PAYLOAD_FILES[entry])

    # written again (another stat), the same content: still current
    monkeypatch.setattr(store.Controller, "stat", lambda self, path: [0, 0, 0, 0] if changed(path) else real_stat(self, path))
    assert store.restore(keep, str(tmp_path / "touched")) == ([name], {})
    # another content
    monkeypatch.setattr(store.Controller, "digest", lambda self, path: "0" * 40 if changed(path) else real_digest(self, path))
    target = tmp_path / "next"
    assert store.restore(keep, str(target)) == ([], {name: "changed since stored: %s" % entry})
    assert not target.exists()


def test_damaged_or_foreign_payloads_are_neither_stored_nor_used(tmp_path):
    keep = tmp_path / "store"
    name = payload(tmp_path / "first")
    (tmp_path / "first" / store.RUN_SUBDIR / "damaged-ZIP_DEFLATED-none").write_bytes(b"not a pickle")
    assert store.save(str(tmp_path / "first"), str(keep)) == [name]  # the damaged one is not stored
    (keep / "norecord-ZIP_DEFLATED-none").write_bytes(b"x")
    os.chmod(keep / "norecord-ZIP_DEFLATED-none", 0o600)
    assert store.restore(str(keep), str(tmp_path / "next")) == ([name], {"norecord-ZIP_DEFLATED-none": "no record of its files"})
    os.chmod(keep / name, 0o666)  # writable by anyone: not read
    assert store.restore(str(keep), str(tmp_path / "next2"))[1][name] == "not a private file of this user"
    os.chmod(keep / name, 0o600)
    payload(tmp_path / "other", name="x")
    shutil.copy(tmp_path / "other" / store.RUN_SUBDIR / "x", keep / name)  # replaced, the record is not its own
    assert store.restore(str(keep), str(tmp_path / "next3"))[1][name] == "its record is of another payload"


def test_a_store_directory_others_can_write_is_neither_read_nor_written(tmp_path):
    keep = tmp_path / "store"
    payload(tmp_path / "first")
    store.save(str(tmp_path / "first"), str(keep))
    os.chmod(keep, 0o777)
    assert store.restore(str(keep), str(tmp_path / "next")) == ([], {})
    assert store.save(str(tmp_path / "first"), str(keep)) == []


def test_the_store_is_per_release_and_python(tmp_path):
    folder = store.store_dir(str(tmp_path))
    assert os.path.dirname(folder) == str(tmp_path)
    assert os.path.basename(folder).startswith("ansible-2.") and "-py3." in os.path.basename(folder)
