# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The managed_service_down filter: a restart handler skipped where the change steps start the daemon."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.filter.managed_service_down import FilterModule
from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import drift_record, service_drift

DOWN = FilterModule().filters()["managed_service_down"]


def _state(*records):
    records = [r for r in records if r is not None]
    return {"in_sync": not records, "drift": [line for r in records for line in r["drift"]], "drift_items": records}


def _service(name, seen, started=True, enabled=True, missing=False):
    item = {"name": name, "started": started, "enabled": enabled}
    return drift_record("services", item, service_drift(item, seen), missing)


def test_a_stopped_or_unknown_service_was_down():
    # records as managed_state makes them, from systemctl show blocks
    stopped = _state(_service("slurmd", {"LoadState": "loaded", "ActiveState": "inactive", "UnitFileState": "enabled"}))
    failed = _state(_service("slurmd", {"LoadState": "loaded", "ActiveState": "failed", "UnitFileState": "enabled"}))
    absent = _state(_service("slurmd", {"LoadState": "not-found"}, missing=True))
    assert DOWN(stopped, "slurmd") is True
    assert DOWN(failed, "slurmd") is True
    assert DOWN(absent, "slurmd") is True
    assert DOWN(stopped, "munge") is False


def test_a_running_service_was_not_down():
    # running but disabled: a restart is still needed for a changed file
    disabled = _state(_service("chrony", {"LoadState": "loaded", "ActiveState": "active", "UnitFileState": "disabled"}))
    assert disabled["drift"] == ["service chrony: disabled, expected enabled"]
    assert DOWN(disabled, "chrony") is False
    assert DOWN(_state(), "chrony") is False
    # another kind drifted, the service ran
    files = _state(drift_record("files", {"path": "/etc/chrony/chrony.conf"}, ["/etc/chrony/chrony.conf: content differs"], False))
    assert DOWN(files, "chrony") is False


def test_no_check_keeps_the_restart():
    assert DOWN({"skipped": True, "changed": False}, "slurmd") is False
    assert DOWN(None, "slurmd") is False
    assert DOWN({"in_sync": False}, "slurmd") is False
