# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The managed_service_stale filter: a restart that did not happen is done where the check found a service
running since before a file it reads was written (munge with an older key in memory)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.filter.managed_service_down import FilterModule as DownFilters
from ansible_collections.gpucluster.training.plugins.filter.managed_service_stale import FilterModule
from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import drift_record, service_drift

STALE = FilterModule().filters()["managed_service_stale"]
DOWN = DownFilters().filters()["managed_service_down"]
KEY = "/etc/munge/munge.key"
# wall and monotonic clocks read together; the service became active at monotonic 100 s, wall 1_000_000 s
CLOCKS = (1_000_900.0, 1000.0)
RUNNING = {"LoadState": "loaded", "ActiveState": "active", "UnitFileState": "enabled", "ActiveEnterTimestampMonotonic": "100000000"}


def _state(seen, mtime):
    item = {"name": "munge", "started": True, "enabled": True, "restart_after": [KEY]}
    records = [drift_record("services", item, drift, False) for drift in [service_drift(item, seen, {KEY: mtime}, CLOCKS)] if drift]
    return {"in_sync": not records, "drift": [line for r in records for line in r["drift"]], "drift_items": records}


def test_a_service_running_with_an_older_file_is_stale_not_down():
    stale = _state(RUNNING, 1_000_060.0)
    assert stale["drift"] == ["service munge: running since before /etc/munge/munge.key changed, expected restarted"]
    assert STALE(stale, "munge") is True
    assert DOWN(stale, "munge") is False          # it runs: the restart handlers still restart it
    assert STALE(stale, "slurmd") is False


def test_a_service_started_after_its_file_or_stopped_or_unchecked_is_not_stale():
    assert STALE(_state(RUNNING, 999_000.0), "munge") is False
    stopped = dict(RUNNING, ActiveState="inactive", ActiveEnterTimestampMonotonic="0")
    assert STALE(_state(stopped, 1_000_060.0), "munge") is False
    assert STALE(None, "munge") is False
    assert STALE({"skipped": True}, "munge") is False
