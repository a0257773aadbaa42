# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One item, both modules: what managed_files writes, managed_state finds in sync (and what
differs from it, drift), on files under tmp_path owned by the user running the tests (no root)."""

from __future__ import annotations

import grp
import os
import pwd

import pytest

from ansible_collections.gpucluster.training.plugins.modules import managed_files, managed_state
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.module_harness import Exit, Fail, exits, run_main  # noqa: F401  pylint: disable=unused-import

ME = pwd.getpwuid(os.getuid())[0]
MY_GROUP = grp.getgrgid(os.getgid())[0]
NO_USER = "no-such-user-gpucluster"


# the directory's 0755 written as its file's 0644 is (493: an unquoted YAML 0755)
DIRECTORY_MODE = {420: 493, "0644": "0755", "0o644": "0o755", "u=rw,g=r,o=r": "u=rwx,g=rx,o=rx"}


def _items(tmp_path, **attributes):
    """A directory (mode 0755) and a file in it (mode 0644), with the same owner and group keys."""
    directory = dict({"path": str(tmp_path / "etc"), "state": "directory"}, **attributes)
    directory["mode"] = DIRECTORY_MODE[attributes["mode"]]
    conf = dict({"path": str(tmp_path / "etc" / "app.conf"), "content": "a = 1\n"}, **attributes)
    return [directory, conf]


def _mode(path):
    return os.stat(path).st_mode & 0o7777


def _write_then_compare(items):
    written = run_main(managed_files.main, {"files": items})
    state = run_main(managed_state.main, {"files": items})
    return written, state


@pytest.mark.parametrize("attributes", [
    # the review's case: an unquoted YAML 0644 (the int 420) and numeric ids, as int and as text
    {"mode": 420, "owner": os.getuid(), "group": str(os.getgid())},
    {"mode": 420, "owner": str(os.getuid()), "group": os.getgid()},
    {"mode": "0644", "owner": ME, "group": MY_GROUP},
    {"mode": "u=rw,g=r,o=r", "owner": ME},
    {"mode": "0o644"},
])
def test_what_managed_files_writes_managed_state_finds_in_sync(tmp_path, attributes):
    items = _items(tmp_path, **attributes)
    written, state = _write_then_compare(items)
    assert written["changed_paths"] == [str(tmp_path / "etc"), str(tmp_path / "etc" / "app.conf")]
    assert _mode(tmp_path / "etc" / "app.conf") == 0o644 and _mode(tmp_path / "etc") == 0o755
    assert state["in_sync"] is True and state["drift"] == [] and state["drift_items"] == [], state
    # and a second write changes nothing: both modules agree the item is as it asks
    assert run_main(managed_files.main, {"files": items})["changed"] is False


def test_a_different_mode_is_drift_in_the_same_words(tmp_path):
    items = _items(tmp_path, mode=420, owner=os.getuid(), group=os.getgid())
    _write_then_compare(items)
    conf = tmp_path / "etc" / "app.conf"
    os.chmod(conf, 0o600)
    os.chmod(tmp_path / "etc", 0o1777)
    state = run_main(managed_state.main, {"files": items})
    assert state["in_sync"] is False
    assert state["drift"] == ["%s: mode 1777, expected 0755" % (tmp_path / "etc"), "%s: mode 0600, expected 0644" % conf]
    assert [(r["name"], r["missing"]) for r in state["drift_items"]] == [(str(tmp_path / "etc"), False), (str(conf), False)]
    # managed_files puts it back, then there is no drift
    assert run_main(managed_files.main, {"files": items})["changed_paths"] == [str(tmp_path / "etc"), str(conf)]
    assert run_main(managed_state.main, {"files": items})["in_sync"] is True


def test_another_owner_id_is_drift_naming_the_owner(tmp_path):
    items = _items(tmp_path, mode="0644")
    _write_then_compare(items)
    conf = str(tmp_path / "etc" / "app.conf")
    other = os.getuid() + 1
    state = run_main(managed_state.main, {"files": [dict(items[1], owner=str(other), group=other)]})
    assert state["drift"] == ["%s: owner %s, expected %d" % (conf, ME, other), "%s: group %s, expected %d" % (conf, MY_GROUP, other)]


def test_an_unknown_owner_name_is_drift_here_and_fails_the_write(tmp_path):
    items = _items(tmp_path, mode="0644")
    _write_then_compare(items)
    item = dict(items[1], owner=NO_USER)
    state = run_main(managed_state.main, {"files": [item]})
    assert state["drift"] == ["%s: owner %s, expected %s" % (item["path"], ME, NO_USER)]
    failed = run_main(managed_files.main, {"files": [item]}, expect=Fail)
    assert "failed to look up user %s" % NO_USER in failed["msg"]


@pytest.mark.parametrize("mode,message", [
    ("rw-r--r--", "mode 'rw-r--r--' is not octal or symbolic (bad symbolic permission for mode: rw-r--r--)"),
    ("100644", "mode '100644' is not a mode: only permission bits (0 to 07777) are allowed"),
    (0o10000, "mode 4096 is not a mode: only permission bits (0 to 07777) are allowed"),
])
def test_a_mode_neither_reads_fails_both_before_anything(tmp_path, mode, message):
    items = _items(tmp_path, mode="0644")
    items[1]["mode"] = mode
    state = run_main(managed_state.main, {"files": items}, expect=Fail)
    assert state["msg"] == "files: %s: %s" % (items[1]["path"], message)
    written = run_main(managed_files.main, {"files": items}, expect=Fail)
    assert written["msg"] == "files[1] (%s): %s" % (items[1]["path"], message)
    assert not (tmp_path / "etc").exists()
