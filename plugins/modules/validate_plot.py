#!/usr/bin/python
# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: validate_plot
short_description: Write the validation report's plot (PNG) from the data of a validate_judge report
version_added: 0.1.0
description:
  - Draws bus bandwidth against message size for every C(all_reduce_perf) run of a validation report,
    one colour per node or run, with each run's pass line (the published reference x the policy
    margin, dashed) and the published reference (dotted), and writes it as a PNG.
  - Pure Python (zlib); no plotting library is needed where it runs. The validate role runs it on the
    Ansible controller, next to report.md and report.json; report.md embeds the picture.
  - The same data give the same bytes, so a second run reports no change.
options:
  plot:
    description: The C(plot) of the C(gpucluster.training.validate_judge) filter's result (C({series})).
    type: dict
    required: true
  dest:
    description: Path of the PNG file.
    type: path
    required: true
  mode:
    description: File mode of the PNG.
    type: str
    default: "0644"
attributes:
  check_mode:
    description: Reports whether the file would change, without writing it.
    support: full
  diff_mode:
    description: A PNG has no text diff.
    support: none
  platform:
    description: Any POSIX host with Python.
    support: full
    platforms: posix
seealso:
  - plugin: gpucluster.training.validate_judge
    plugin_type: filter
author:
  - gpucluster.training maintainers (@gpucluster)
"""

EXAMPLES = r"""
- name: Plot of the validation report
  gpucluster.training.validate_plot:
    plot: "{{ validate_report.plot }}"
    dest: "{{ playbook_dir }}/validate-report/report.png"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
dest:
  description: The PNG written.
  type: str
  returned: always
  sample: /srv/ansible/validate-report/report.png
series:
  description: Number of runs drawn.
  type: int
  returned: always
  sample: 3
bytes:
  description: Size of the PNG.
  type: int
  returned: always
  sample: 6727
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucluster.training.plugins.module_utils._file_write import read_bytes, write_if_different
from ansible_collections.gpucluster.training.plugins.module_utils._validate_plot import PlotError, render_png


def main():
    module = AnsibleModule(
        argument_spec=dict(
            plot=dict(type="dict", required=True),
            dest=dict(type="path", required=True),
            mode=dict(type="str", default="0644"),
        ),
        supports_check_mode=True,
    )
    dest = module.params["dest"]
    try:
        data = render_png(module.params["plot"])
    except PlotError as exc:
        module.fail_json(msg="validate_plot: %s" % exc)
    changed = write_if_different(module, dest, data, module.params["mode"], read_bytes(dest))
    module.exit_json(changed=changed, dest=dest, series=len(module.params["plot"].get("series") or []), bytes=len(data))


if __name__ == "__main__":
    main()
