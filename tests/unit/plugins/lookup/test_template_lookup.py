# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The pure parts of gpucluster.training.template (its rendering against the builtin lookup's is
tests/harness/test_template_lookup.py, a real playbook run)."""

from __future__ import annotations

import time

from ansible_collections.gpucluster.training.plugins.lookup.template import managed_string, template_search_path


def test_managed_string_fills_file_host_uid_and_the_files_time():
    mtime = time.mktime((2026, 12, 5, 14, 30, 0, 0, 0, -1))
    assert managed_string("{file} on {host} by {uid} %Y-%m-%d", "slurm.conf.j2", mtime, "ctl1", "root") == \
        "slurm.conf.j2 on ctl1 by root 2026-12-05"


def test_the_default_setting_is_kept_as_written():
    assert managed_string("Ansible managed", "x.j2", 0, "h", 0) == "Ansible managed"


def test_includes_are_searched_next_to_the_file_then_in_each_templates_folder():
    assert template_search_path(["/r/roles/base", "/r/play"], "/r/roles/base/templates") == [
        "/r/roles/base/templates", "/r/roles/base/templates", "/r/roles/base", "/r/play/templates", "/r/play"]
