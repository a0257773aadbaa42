# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of module_utils/_file_attributes.py: a file item's owner, group and mode read as
ansible's file modules read them (the one reading of managed_files and managed_state)."""

from __future__ import annotations

import os
import stat
from types import SimpleNamespace

import pytest
from ansible.module_utils.basic import AnsibleModule
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.module_utils._file_attributes import (
    FileAttributeError, file_attributes, file_mode, file_owner, symbolic_mode)


@pytest.mark.parametrize("value", [420, "0644", "644", "0o644", "0O644", " 0644 "])
def test_the_same_mode_every_way_it_is_written(value):
    # 420 is what YAML makes of an unquoted 0644: ansible's file modules take an int as the mode itself
    assert file_mode(value) == 0o644


@pytest.mark.parametrize("value,mode", [("0", 0), (0, 0), ("1777", 0o1777), ("07777", 0o7777), (0o7777, 0o7777),
                                        ("420", 0o420), ("0400", 0o400)])
def test_octal_text_and_ints(value, mode):
    assert file_mode(value) == mode


@pytest.mark.parametrize("value", [None, ""])
def test_no_mode_is_none(value):
    assert file_mode(value) is None and file_mode(value, 0o755, True) is None


@pytest.mark.parametrize("value,message", [
    ("rw-r--r--", "mode 'rw-r--r--' is not octal or symbolic (bad symbolic permission for mode: rw-r--r--)"),
    ("u+q", "mode 'u+q' is not octal or symbolic (bad symbolic permission for mode: u+q)"),
    ("0648", "mode '0648' is not octal or symbolic"),
    ("644.0", "mode '644.0' is not octal or symbolic"),
    ("100644", "mode '100644' is not a mode: only permission bits (0 to 07777) are allowed"),
    ("-1", "mode '-1' is not a mode"),
    (0o10000, "mode 4096 is not a mode"),
    (-1, "mode -1 is not a mode"),
    (True, "mode True is not a mode: give octal text"),
    (6.44, "mode 6.44 is not a mode"),
    (["0644"], "mode ['0644'] is not a mode"),
])
def test_what_is_not_a_mode(value, message):
    with pytest.raises(FileAttributeError) as info:
        file_mode(value)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("text,current,directory,mode", [
    ("u=rw,g=r,o=r", 0o600, False, 0o644),
    ("u=rw,go=r", 0o777, False, 0o644),
    ("u+x", 0o644, False, 0o744),
    ("go-w", 0o666, False, 0o644),
    ("a+X", 0o644, False, 0o644),   # X: only for a directory or an executable
    ("a+X", 0o644, True, 0o755),
    ("a+X", 0o744, False, 0o755),
    ("g=u", 0o640, False, 0o660),
    ("+w", 0o444, False, 0o644),    # no class: the umask (022) keeps group and others from w
    ("o+t", 0o777, True, 0o1777),
    ("u+s,g+s", 0o755, False, 0o6755),
    ("u=rwx,g=rx,o=", 0o000, True, 0o750),
    ("u", 0o640, False, 0o640),     # a class without an operator changes nothing (as ansible)
])
def test_symbolic_modes_apply_to_the_present_mode(text, current, directory, mode):
    assert symbolic_mode(text, current, directory, 0o022) == mode
    assert file_mode(text, current, directory, 0o022) == mode


def _ansible(text, current, directory, umask):
    """AnsibleModule's own reading of a symbolic mode (it reads the process's umask)."""
    kind = stat.S_IFDIR if directory else stat.S_IFREG
    old = os.umask(umask)
    try:
        return AnsibleModule._symbolic_mode_to_octal(SimpleNamespace(st_mode=kind | current), text)
    finally:
        os.umask(old)


CLAUSE = st.builds(lambda users, ops: users + "".join(o + p for o, p in ops),
                   st.sampled_from(["", "a", "u", "g", "o", "ug", "go", "ugo", "uo"]),
                   st.lists(st.tuples(st.sampled_from("+-="), st.text("rwxXstugo", max_size=4)), min_size=1, max_size=2))


@settings(max_examples=400)
@given(clauses=st.lists(CLAUSE, min_size=1, max_size=3), current=st.integers(0, 0o7777), directory=st.booleans(),
       umask=st.sampled_from([0o022, 0o077, 0o002, 0o000]))
def test_symbolic_modes_as_ansible_reads_them(clauses, current, directory, umask):
    text = ",".join(clauses)
    assert symbolic_mode(text, current, directory, umask) == _ansible(text, current, directory, umask), text


@pytest.mark.parametrize("value,owner", [("root", "root"), ("slurm", "slurm"), ("0", 0), (0, 0), ("1000", 1000), (64030, 64030),
                                         (None, None), ("", None)])
def test_owner_a_name_or_an_id(value, owner):
    assert file_owner(value) == owner
    assert type(file_owner(value)) is type(owner)


@pytest.mark.parametrize("value,message", [
    ("-1", "group '-1' is not a name or a numeric id (ids are 0 or more)"),
    (-1, "group -1 is not a name or a numeric id (ids are 0 or more)"),
    (True, "group True is not a name or a numeric id"),
    ([0], "group [0] is not a name or a numeric id"),
])
def test_what_is_not_an_owner(value, message):
    with pytest.raises(FileAttributeError) as info:
        file_owner(value, "group")
    assert str(info.value) == message


def test_an_item_s_attributes_in_one_call():
    assert file_attributes({"path": "/f", "owner": "0", "group": "slurm", "mode": 420}) == {"owner": 0, "group": "slurm", "mode": 0o644}
    assert file_attributes({"path": "/f"}) == {"owner": None, "group": None, "mode": None}
    assert file_attributes({"path": "/d", "mode": "a+X"}, 0o40644, True) == {"owner": None, "group": None, "mode": 0o755}
    with pytest.raises(FileAttributeError, match="^owner -5 "):
        file_attributes({"path": "/f", "owner": -5})
