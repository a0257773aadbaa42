# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The managed_drift filter: the roles' gate of a change step on its own kind of drift."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.managed_drift import FilterModule

DRIFT = FilterModule().filters()["managed_drift"]
# a compute node whose slurmd was stopped by hand: packages and files in sync
STATE = {"in_sync": False, "drift": ["service slurmd: inactive, expected started"],
         "drift_items": [{"kind": "services", "name": "slurmd", "missing": False,
                          "drift": ["service slurmd: inactive, expected started"]}]}


def test_gates_by_kind_and_name():
    assert DRIFT(STATE, ["packages"]) is False
    assert DRIFT(STATE, ["services"]) is True
    assert DRIFT(STATE, ["services"], ["munge"]) is False


def test_no_check_runs_the_step():
    assert DRIFT({"skipped": True, "changed": False, "skip_reason": "Conditional result was False"}, ["packages"]) is True


def test_a_misspelt_kind_is_a_filter_error():
    with pytest.raises(AnsibleFilterError, match="^managed_drift: kinds must name"):
        DRIFT(STATE, ["service"])
