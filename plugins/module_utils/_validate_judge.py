# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Judge parsed validation results: the front door of the validation judgement.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

The judgement is split by concept; this module keeps the names the filters and tests import:

* ``_validate_policy``: ``ValidateJudgeError``, ``TESTS``, ``DRAIN_PREFIX``, ``DEFAULT_POLICY``,
  ``policy_of``;
* ``_validate_refs``: the published healthy all_reduce bus bandwidths (per GPU model and
  interconnect, per inter-node fabric), each with its source;
* ``_validate_hardware``: ``hca_label`` (the one format of a selected RDMA port),
  ``node_hardware``, ``limits`` (physical ceilings and the matching references);
* ``_validate_checks``: ``judge_collective``, ``judge_nccl_log``, ``judge_perftest``,
  ``judge_health``;
* ``_validate_bisect``: ``plan_pairs``, ``find_bad_nodes`` (the bad-node search);
* ``_validate_report``: ``judge_run`` (a whole run, verdicts per node, drains), ``report_markdown``,
  ``plot_series``.

Bad input raises ``ValidateJudgeError`` (a ``ValueError``).
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._validate_bisect import (  # noqa: F401
    find_bad_nodes, plan_pairs)
from ansible_collections.gpucluster.training.plugins.module_utils._validate_checks import (  # noqa: F401
    judge_collective, judge_health, judge_nccl_log, judge_perftest)
from ansible_collections.gpucluster.training.plugins.module_utils._validate_hardware import (  # noqa: F401
    hca_label, hca_labels, limits, node_hardware)
from ansible_collections.gpucluster.training.plugins.module_utils._validate_policy import (  # noqa: F401
    DEFAULT_POLICY, DRAIN_PREFIX, TESTS, ValidateJudgeError, policy_of)
from ansible_collections.gpucluster.training.plugins.module_utils._validate_report import (  # noqa: F401
    judge_run, plot_series, report_markdown)

__all__ = [
    "ValidateJudgeError", "DEFAULT_POLICY", "DRAIN_PREFIX", "TESTS", "hca_label", "hca_labels",
    "node_hardware", "limits", "policy_of", "judge_collective", "judge_nccl_log", "judge_perftest",
    "judge_health", "judge_run", "report_markdown", "plot_series", "plan_pairs", "find_bad_nodes",
]
