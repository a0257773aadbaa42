# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of module_utils/_validate_judge.py (documentation: validate_judge.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._validate_judge import (
    ValidateJudgeError,
    judge_run,
)


def validate_judge(results, hardware, policy=None, nodes=None, run=None, slurm_nodes=None, left_out=None):
    """Parsed results + hardware per node + policy -> verdicts, drain reasons and a Markdown report."""
    try:
        return judge_run(results, hardware, policy=policy, nodes=nodes, run=run, slurm_nodes=slurm_nodes, left_out=left_out)
    except ValidateJudgeError as exc:
        raise AnsibleFilterError("validate_judge: %s" % exc) from exc


class FilterModule:
    """gpucluster.training.validate_judge"""

    def filters(self):
        return {"validate_judge": validate_judge}
