# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Jinja face of the parallel-layout planner: the job templates take their layout from
here, so a template never recomputes what the planner decided, and rendering fails on an
invalid layout."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind
from ansible_collections.gpucluster.training.plugins.module_utils import _planner


def parallel_plan(spec, strict=True, search=False, max_suggestions=5):
    """Plan (or, with search, find the best) layout for ``spec``: the same keys as the
    parallel_plan module's options. With strict (default) an invalid layout raises; without it,
    an invalid layout's result has ``failure``, the text the module fails with."""
    if not isinstance(spec, dict):
        raise AnsibleFilterError(
            "parallel_plan: input must be a dict of planner options, got %s" % kind(spec)
        )
    try:
        if search:
            result = _planner.plan_search(spec, max(int(max_suggestions), 1))
        else:
            result = _planner.plan(spec, int(max_suggestions))
    except (_planner.PlannerError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("parallel_plan: %s" % exc)
    if not result["valid"]:
        if strict:
            raise AnsibleFilterError("parallel_plan: " + _planner.format_failure(result))
        # what the strict filter and the module fail with, for a task that fails on it itself
        result["failure"] = _planner.format_failure(result)
    return result


class FilterModule(object):
    """gpucluster.training planner filters."""

    def filters(self):
        return {"parallel_plan": parallel_plan}
