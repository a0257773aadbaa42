# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The managed_checksums filter: a role's items stated with each file's content as its SHA-1."""

from __future__ import annotations

import copy
import hashlib
import re

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.managed_checksums import FilterModule
from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import file_drift

CHECKSUMS = FilterModule().filters()["managed_checksums"]

ITEMS = {
    "files": [
        {"path": "/etc/nccl.conf", "content": "NCCL_IB_HCA=mlx5_0\n# Grüße: non-ASCII text\n", "owner": "root", "mode": "0644"},
        {"path": "/etc/munge/munge.key", "checksum": "0" * 40, "owner": "munge"},
        {"path": "/etc/slurm", "state": "directory", "mode": "0755"},
    ],
    "packages": [{"name": "rdma-core"}],
    "services": [{"name": "slurmd", "started": True, "enabled": True}],
}


def test_content_becomes_the_sha1_of_its_utf8_bytes():
    before = copy.deepcopy(ITEMS)
    out = CHECKSUMS(ITEMS)
    assert ITEMS == before  # the input is not changed
    nccl = out["files"][0]
    assert "content" not in nccl
    assert nccl == {"path": "/etc/nccl.conf", "owner": "root", "mode": "0644",
                    "checksum": hashlib.sha1(ITEMS["files"][0]["content"].encode("utf-8")).hexdigest()}
    # a checksum given, a directory, and the other kinds as they were
    assert out["files"][1:] == ITEMS["files"][1:]
    assert out["packages"] == ITEMS["packages"] and out["services"] == ITEMS["services"]


def test_the_check_is_the_same(tmp_path):
    # the file as copy/template writes the text, and the module's comparison of both forms of the item
    text = ITEMS["files"][0]["content"]
    written = tmp_path / "nccl.conf"
    written.write_bytes(text.encode("utf-8"))
    seen = {"type": "file", "owner": "root", "group": "root", "uid": 0, "gid": 0, "mode": 0o644,
            "sha1": hashlib.sha1(written.read_bytes()).hexdigest()}
    by_checksum = CHECKSUMS({"files": [ITEMS["files"][0]]})["files"][0]
    assert file_drift(by_checksum, seen) == []
    changed = CHECKSUMS({"files": [dict(ITEMS["files"][0], content=text + "x")]})["files"][0]
    assert file_drift(changed, seen) == ["/etc/nccl.conf: content differs"]


@pytest.mark.parametrize("items, message", [
    (["x"], "items must map a kind to a list"),
    ({"disks": []}, "unknown kinds ['disks']"),
    ({"files": [{"content": "x"}]}, "an item of files has no path"),
])
def test_malformed_items_fail_with_a_message(items, message):
    with pytest.raises(AnsibleFilterError, match=re.escape(message)):
        CHECKSUMS(items)
