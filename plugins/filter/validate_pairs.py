# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of module_utils/_validate_bisect.plan_pairs (documentation: validate_pairs.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._validate_judge import (
    ValidateJudgeError,
    plan_pairs,
)


def validate_pairs(hosts):
    """Hosts -> the node pairs of the bad-node search (a ring)."""
    try:
        return plan_pairs(hosts)
    except ValidateJudgeError as exc:
        raise AnsibleFilterError("validate_pairs: %s" % exc) from exc


class FilterModule:
    """gpucluster.training.validate_pairs"""

    def filters(self):
        return {"validate_pairs": validate_pairs}
