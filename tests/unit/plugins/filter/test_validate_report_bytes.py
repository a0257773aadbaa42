# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""validate_report writes the same bytes the role's copy and validate_plot tasks wrote before it:
report.json as `content: "{{ report minus markdown (and resume) | to_nice_json(sort_keys=true) }}\\n"`, report.png
as validate_plot, report.md as the markdown. Here (controller side) Ansible's own to_nice_json
filter can be imported; the module's other tests are in tests/unit/plugins/modules/test_validate_report.py."""

from __future__ import annotations

import pytest
from ansible.plugins.filter.core import to_nice_json

from ansible_collections.gpucluster.training.plugins.module_utils._validate_plot import render_png
from ansible_collections.gpucluster.training.plugins.module_utils._validate_report_files import report_files
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.test_validate_report import _reports


@pytest.mark.parametrize("index", [0, 1])
def test_same_bytes_as_the_copy_and_plot_tasks(index):
    report = _reports()[index]
    files = dict(report_files(report))
    assert list(files) == ["report.json", "report.png", "report.md"]
    want_json = to_nice_json(dict((k, v) for k, v in report.items() if k not in ("markdown", "resume")), sort_keys=True) + "\n"
    assert files["report.json"] == want_json.encode("utf-8")
    assert files["report.png"] == render_png(report["plot"])
    assert files["report.md"] == report["markdown"].encode("utf-8")
