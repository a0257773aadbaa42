# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of module_utils/_coerce.py: the one input coercion, on Ansible's boolean."""

from __future__ import annotations

import math

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind, sysfs_int, to_bool, to_float, to_int, to_tri


class _Err(ValueError):
    pass


@pytest.mark.parametrize("value, expected", [
    (True, True), (False, False), ("yes", True), ("No", False), (" on ", True), ("off", False), ("y", True),
    ("n", False), ("1", True), ("0", False), (1, True), (0, False), ("TRUE", True), ("f", False),
])
def test_to_bool_takes_ansible_booleans(value, expected):
    assert to_bool(value, "x", _Err) is expected


@pytest.mark.parametrize("value", ["maybe", "", 2, -1, 0.5, [], {}, "auto"])
def test_to_bool_refuses_the_rest_with_the_callers_error(value):
    with pytest.raises(_Err, match="^flag must be true or false"):
        to_bool(value, "flag", _Err)


def test_to_bool_none_is_the_default_or_an_error():
    assert to_bool(None, "x", _Err, default=False) is False
    with pytest.raises(_Err):
        to_bool(None, "x", _Err)


@pytest.mark.parametrize("value, expected", [("auto", "auto"), (" AUTO", "auto"), ("yes", True), (False, False)])
def test_to_tri(value, expected):
    assert to_tri(value, "x", _Err) == expected


def test_to_tri_names_the_three_choices():
    with pytest.raises(_Err, match="auto, true or false"):
        to_tri("maybe", "x", _Err)


@pytest.mark.parametrize("value, kwargs, expected", [
    ("1.5", {}, 1.5), (2, {}, 2.0), (None, {}, None), ("", {}, None), (0, {"minimum": 0}, 0.0), (3, {"positive": True}, 3.0),
])
def test_to_float(value, kwargs, expected):
    assert to_float(value, "x", _Err, **kwargs) == expected


@pytest.mark.parametrize("value, kwargs", [
    (True, {}), ("x", {}), (math.nan, {}), (math.inf, {}), ("1e999", {}), (None, {"allow_none": False}),
    (0, {"positive": True}), (-1, {"minimum": 0}), ([1], {}),
])
def test_to_float_refuses(value, kwargs):
    with pytest.raises(_Err):
        to_float(value, "x", _Err, **kwargs)


@pytest.mark.parametrize("value, expected", [(3, 3), (4.0, 4), (" 12 ", 12), ("-2", -2), ("+7", 7)])
def test_to_int(value, expected):
    assert to_int(value, "x", _Err) == expected


@pytest.mark.parametrize("value", [True, 1.5, "1.0", "+-5", "\u00b2", "", None, [1]])
def test_to_int_refuses(value):
    with pytest.raises(_Err):
        to_int(value, "x", _Err)
    assert to_int(None, "x", _Err, allow_none=True) is None


@pytest.mark.parametrize("text, expected", [("4\n", 4), (" 0x1b \n", 27), ("-1\n", -1)])
def test_sysfs_int(text, expected):
    assert sysfs_int(text, "/sys/x", _Err) == expected


@pytest.mark.parametrize("text", ["", "four\n", "1" * 25, "\u0661\n", None])
def test_sysfs_int_refuses_with_the_file_named(text):
    with pytest.raises(_Err, match=r"^/sys/x: .* is not a number$"):
        sysfs_int(text, "/sys/x", _Err)


def test_sysfs_int_prefix_and_bound():
    assert sysfs_int("1" * 20, "lid", _Err, prefix="ibstat: ", max_len=20) == int("1" * 20)
    with pytest.raises(_Err, match=r"^ibstat: lid: '1{21}' is not a number$"):
        sysfs_int("1" * 21, "lid", _Err, prefix="ibstat: ", max_len=20)


class _TaggedStr(str):
    """Stands for Ansible 2.19's tagged values (_AnsibleTaggedStr...): subclasses of the base types."""


@pytest.mark.parametrize("value, expected", [
    ("gpu1", "a string"), (_TaggedStr("gpu1"), "a string"), ({}, "a dict"), ([], "a list"), ((), "tuple"),
    (3, "a number"), (2.5, "a number"), (True, "a boolean"), (None, "null"), (b"x", "bytes"),
])
def test_kind_names_what_the_user_wrote(value, expected):
    assert kind(value) == expected
