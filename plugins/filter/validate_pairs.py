# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of module_utils/_validate_bisect.plan_pairs (documentation: validate_pairs.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._validate_judge import ValidateJudgeError, plan_pairs
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter

# Hosts -> the node pairs of the bad-node search (a ring).
validate_pairs = jinja_filter("validate_pairs", ValidateJudgeError)(plan_pairs)

FilterModule = filter_module(validate_pairs=validate_pairs)
