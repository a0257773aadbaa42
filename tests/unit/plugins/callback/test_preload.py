# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpucluster.training.preload finds the collection's own Jinja plugins (each playbook run of the
harness loads them through it: ansible.cfg enables it)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.callback.preload import plugin_files


def test_the_collections_filters_and_lookups_are_found():
    filters = plugin_files("filter")
    assert "managed_checksums" in filters and "parallel_plan" in filters
    assert plugin_files("lookup") == ["template", "variable_errors"]


def test_a_missing_kind_is_empty(tmp_path):
    assert not plugin_files("test", root=str(tmp_path))


def test_private_files_are_not_plugins(tmp_path):
    (tmp_path / "filter").mkdir()
    for name in ("__init__.py", "_helper.py", "a.py", "b.yml"):
        (tmp_path / "filter" / name).write_text("")
    assert plugin_files("filter", root=str(tmp_path)) == ["a"]
