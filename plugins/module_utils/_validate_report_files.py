# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The files of the validation report, as bytes: the pure part of the validate_report module.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

A ``judge_run`` report (the validate_judge filter's result) gives three files:

- ``report.json``: the report without its Markdown (and without ``resume``: Slurm's state at this
  run, which the run itself changes), as Ansible's ``to_nice_json(sort_keys=true)``
  writes it (4-space indent, sorted keys, ASCII), and a final newline;
- ``report.png``: its plot (``render_png``);
- ``report.md``: its Markdown, as is (it embeds report.png).

The report has no clock time in it: the same results give the same bytes.
"""

from __future__ import annotations

import json

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind
from ansible_collections.gpucluster.training.plugins.module_utils._validate_plot import render_png

__all__ = ["REPORT_FILES", "ReportFilesError", "report_files", "report_json"]

REPORT_FILES = ("report.json", "report.png", "report.md")


class ReportFilesError(ValueError):
    """A report the files cannot be written from."""


def report_json(report):
    """report.json's text: every key but markdown and resume (Slurm's state at this run, which the
    run itself changes), with the separators and indent of to_nice_json."""
    data = dict((key, value) for key, value in report.items() if key not in ("markdown", "resume"))
    try:
        return json.dumps(data, indent=4, sort_keys=True, separators=(",", ": ")) + "\n"
    except (TypeError, ValueError) as exc:
        raise ReportFilesError("the report cannot be written as JSON: %s" % exc)


def report_files(report):
    """[(name, bytes)] of report.json, report.png and report.md, in that order."""
    if not isinstance(report, dict):
        raise ReportFilesError("the report must be a dict (the validate_judge filter's result), got %s" % kind(report))
    missing = [key for key in ("markdown", "plot") if key not in report]
    if missing:
        raise ReportFilesError("the report has no %s (is it the validate_judge filter's result?)" % " and no ".join(missing))
    if not isinstance(report["markdown"], str):
        raise ReportFilesError("the report's markdown must be a string, got %s" % kind(report["markdown"]))
    return [("report.json", report_json(report).encode("utf-8")),
            ("report.png", render_png(report["plot"])),
            ("report.md", report["markdown"].encode("utf-8"))]
