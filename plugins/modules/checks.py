# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: checks
short_description: Evaluate a list of checks in one task and fail naming every check that failed
version_added: 0.1.0
description:
  - Evaluates each check of O(checks) on the controller, in order. A check passes when all of its conditions (the
    same expressions C(when) and M(ansible.builtin.assert) take) are true.
  - Fails when any check failed, with the message of B(every) failed check (M(ansible.builtin.assert) stops at its
    first failed condition with one message). A check's message is templated only when the check failed, so it may
    name values that exist only then.
  - One task for what took one M(ansible.builtin.assert) per check; the roles' preflights use it for the checks that
    read only the inventory, as each task costs the controller time even on a run that changes nothing.
  - An action that runs on the controller only; it never connects to the host.
options:
  checks:
    description:
      - The checks, in order. Each is a mapping of C(that) (a condition, or a list of conditions that must all be
        true) and C(msg) (what is wrong and how to fix it).
      - Give the list itself, not a template that makes one.
    type: list
    elements: dict
    required: true
attributes:
  check_mode:
    description: Reads nothing from the host and changes nothing; the same in check mode.
    support: full
  diff_mode:
    description: Nothing to diff.
    support: none
  platform:
    description: Runs on the controller.
    platforms: all
    support: full
seealso:
  - module: ansible.builtin.assert
author:
  - gpucluster.training maintainers (@gpucluster)
"""

EXAMPLES = r"""
- name: Slurm settings of the inventory are valid
  gpucluster.training.checks:
    checks:
      - that: slurm_common_cluster_name is regex('^[a-z0-9_][a-z0-9_-]{0,39}$')
        msg: "slurm_common_cluster_name={{ slurm_common_cluster_name | to_json }} is not a Slurm cluster name"
      - that:
          - groups['slurm_compute'] | default([]) | length >= 1
        msg: inventory group slurm_compute has no host
  run_once: true
"""

RETURN = r"""
failures:
  description: The checks that failed, in order (empty when all passed).
  returned: always
  type: list
  elements: dict
  contains:
    check:
      description: The check's position in O(checks), from 1.
      type: int
    condition:
      description: Its first condition that was false.
      type: str
    msg:
      description: Its message, templated.
      type: str
  sample: [{check: 2, condition: "groups['slurm_compute'] | default([]) | length >= 1", msg: inventory group slurm_compute has no host}]
msg:
  description: V(all N checks passed), or the failed checks' messages.
  returned: always
  type: str
  sample: all 6 checks passed
"""
