#!/usr/bin/python
# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: validate_report
short_description: Write the validation report (report.json, report.png, report.md) into a directory, in one call
version_added: 0.1.0
description:
  - Writes the three files of a C(gpucluster.training.validate_judge) report into O(dest) - C(report.json) (the
    report without its Markdown and without C(resume), Slurm's state at the run, as C(to_nice_json(sort_keys=true))
    writes it, and a final newline), C(report.png)
    (its plot, as M(gpucluster.training.validate_plot) draws it) and C(report.md) (its Markdown, which embeds the
    picture). The directory is created, with its parents, when it is missing.
  - One round trip for what four tasks did (M(ansible.builtin.file), two M(ansible.builtin.copy) and
    M(gpucluster.training.validate_plot)), with the same files and modes.
  - A file is written only when its content differs (atomically); its mode is set when it differs. The report has no
    clock time in it, so a second run with the same results reports no change.
  - The validate role runs it on its C(validate_report_host) (the Ansible
    controller by default).
options:
  report:
    description: The C(gpucluster.training.validate_judge) filter's result (it holds C(markdown) and C(plot)).
    type: dict
    required: true
  dest:
    description: The directory the files are written into.
    type: path
    required: true
  mode:
    description: File mode of the three files.
    type: str
    default: "0644"
  directory_mode:
    description: File mode of O(dest).
    type: str
    default: "0755"
attributes:
  check_mode:
    description: Reports what would change, without writing anything.
    support: full
  diff_mode:
    description: Text diff of report.json and report.md, mode changes; report.png is binary (no text diff).
    support: full
  platform:
    description: Any POSIX host with Python.
    support: full
    platforms: posix
seealso:
  - plugin: gpucluster.training.validate_judge
    plugin_type: filter
  - module: gpucluster.training.validate_plot
author:
  - gpucluster.training maintainers (@gpucluster)
"""

EXAMPLES = r"""
- name: The validation report (report.json, report.png, report.md)
  gpucluster.training.validate_report:
    report: "{{ validate_report }}"
    dest: "{{ playbook_dir }}/validate-report"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
dest:
  description: The directory.
  type: str
  returned: always
  sample: /srv/ansible/validate-report
files:
  description: Each file written or checked, in the order report.json, report.png, report.md.
  type: list
  elements: dict
  returned: always
  contains:
    path:
      description: The file.
      type: str
    changed:
      description: Its content or mode changed (or would, in check mode).
      type: bool
    bytes:
      description: Its size.
      type: int
  sample:
    - {path: /srv/ansible/validate-report/report.json, changed: false, bytes: 10240}
    - {path: /srv/ansible/validate-report/report.png, changed: false, bytes: 6727}
    - {path: /srv/ansible/validate-report/report.md, changed: true, bytes: 2048}
series:
  description: Number of runs drawn in report.png.
  type: int
  returned: always
  sample: 3
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpucluster.training.plugins.module_utils._file_write import (
    FileWriteError, ensure_directory, read_bytes, write_if_different)
from ansible_collections.gpucluster.training.plugins.module_utils._validate_plot import PlotError
from ansible_collections.gpucluster.training.plugins.module_utils._validate_report_files import ReportFilesError, report_files


def text_diff(path, before, after):
    """The diff of one file: its text, or a binary marker (the callback then skips the content)."""
    diff = {"before_header": path, "after_header": path}
    if path.endswith(".png"):
        diff["src_binary"] = True
        if before is not None:
            diff["dst_binary"] = True
        return diff
    diff["before"] = "" if before is None else to_text(before, errors="surrogate_or_replace")
    diff["after"] = to_text(after, errors="surrogate_or_replace")
    return diff


def write_file(module, path, data, mode, diffs, directory_missing):
    current = None if directory_missing else read_bytes(path)
    if current != data:
        diffs.append(text_diff(path, current, data))
    return write_if_different(module, path, data, mode, current, diffs)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            report=dict(type="dict", required=True),
            dest=dict(type="path", required=True),
            mode=dict(type="str", default="0644"),
            directory_mode=dict(type="str", default="0755"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    try:
        files = report_files(params["report"])
    except (ReportFilesError, PlotError) as exc:
        module.fail_json(msg="validate_report: %s" % exc)
    dest = params["dest"]
    diffs = []
    directory_missing = not os.path.isdir(dest)
    try:
        changed = ensure_directory(module, {"path": dest, "mode": params["directory_mode"]}, diffs)
    except FileWriteError as exc:
        module.fail_json(msg="validate_report: %s" % exc)
    written = []
    for name, data in files:
        path = os.path.join(dest, name)
        file_changed = write_file(module, path, data, params["mode"], diffs, directory_missing and module.check_mode)
        written.append({"path": path, "changed": file_changed, "bytes": len(data)})
        changed = changed or file_changed
    result = dict(changed=changed, dest=dest, files=written, series=len(params["report"]["plot"].get("series") or []))
    if module._diff:
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
