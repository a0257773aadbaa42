# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The managed_state_parts filter: one check call of several stages, split into each stage's result."""

from __future__ import annotations

import re

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.managed_items_union import FilterModule as UnionFilters
from ansible_collections.gpucluster.training.plugins.filter.managed_state_parts import FilterModule
from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import (
    drift_record, package_drift, parse_dpkg_query, service_drift)

PARTS = FilterModule().filters()["managed_state_parts"]
UNION = UnionFilters().filters()["managed_items_union"]

RDMA = {"files": [{"path": "/etc/nccl.conf", "content": "NCCL_IB_HCA=mlx5_0\n"}],
        "packages": [{"name": "rdma-core"}, {"name": "ibverbs-utils"}]}
SLURM = {"files": [{"path": "/etc/slurm/slurm.conf", "content": "x\n"}],
         "packages": [{"name": "slurmd"}],
         "services": [{"name": "slurmd", "started": True, "enabled": True}],
         "commands": [{"name": "slurmd answers", "argv": ["scontrol", "ping"]}]}


def _result(*records, found=None):
    records = [r for r in records if r is not None]
    return {"changed": False, "in_sync": not records, "drift": [line for r in records for line in r["drift"]],
            "drift_items": records, "found": found or {"groups": {}, "commands": {}}, "msg": "-"}


def _package(name, dpkg_line):
    item = {"name": name}
    seen = parse_dpkg_query(dpkg_line).get(name)
    return drift_record("packages", item, package_drift(item, seen), seen is None or seen["status"] != "i")


def test_each_part_gets_only_its_own_drift():
    # records as the module makes them: dpkg-query says slurmd is not installed, systemd does not know slurmd
    stopped = drift_record("services", SLURM["services"][0], service_drift(SLURM["services"][0], {"LoadState": "not-found"}), True)
    absent = _package("slurmd", "un \tslurmd\t\n")
    assert absent is not None and stopped is not None
    parts = PARTS(_result(absent, stopped), {"rdma": RDMA, "slurm": SLURM})
    assert parts["rdma"]["in_sync"] is True
    assert parts["rdma"]["drift"] == [] and parts["rdma"]["drift_items"] == []
    assert parts["rdma"]["checked"] == {"files": 1, "packages": 2}
    assert parts["slurm"]["in_sync"] is False
    assert [r["kind"] for r in parts["slurm"]["drift_items"]] == ["packages", "services"]
    assert parts["slurm"]["drift"] == absent["drift"] + stopped["drift"]
    assert parts["slurm"]["checked"] == {"files": 1, "packages": 1, "services": 1, "commands": 1}
    assert parts["slurm"]["msg"].startswith("2 difference(s) in 4 item(s)")


def test_in_sync_everywhere_and_found_kept():
    found = {"groups": {}, "commands": {"slurmd answers": {"rc": 0, "stdout": "UP\n"}}}
    parts = PARTS(_result(found=found), {"rdma": RDMA, "slurm": SLURM})
    assert all(part["in_sync"] for part in parts.values())
    assert parts["slurm"]["found"] == found and parts["rdma"]["found"] == found
    assert parts["rdma"]["msg"] == "in sync: 3 item(s) checked"


def test_an_item_of_two_parts_drifts_in_both():
    shared = {"packages": [{"name": "rdma-core"}]}
    record = _package("rdma-core", "un \trdma-core\t\n")
    parts = PARTS(_result(record), {"rdma": RDMA, "other": shared, "slurm": SLURM})
    assert parts["rdma"]["in_sync"] is False and parts["other"]["in_sync"] is False
    assert parts["slurm"]["in_sync"] is True


def test_a_record_no_part_names_counts_for_every_part():
    # the module names a file by the path it was given after its own expansion: a record whose name
    # no part's items carry cannot be placed, and no part is in sync on it
    stray = drift_record("files", {"path": "/root/expanded"}, ["/root/expanded: missing"], True)
    parts = PARTS(_result(stray), {"rdma": RDMA, "slurm": SLURM})
    assert not parts["rdma"]["in_sync"] and not parts["slurm"]["in_sync"]


@pytest.mark.parametrize("state, parts, message", [
    ({"skipped": True}, {"rdma": RDMA}, "not a managed_state result"),
    (None, {"rdma": RDMA}, "not a managed_state result"),
    (_result(), ["rdma"], "parts must map"),
    (_result(), {"rdma": ["x"]}, "items must map a kind"),
    (_result(), {"rdma": {"disks": []}}, "unknown kinds ['disks']"),
    (_result(), {"rdma": {"files": [{"content": "x"}]}}, "an item of files has no path"),
])
def test_malformed_input_fails_with_a_message(state, parts, message):
    with pytest.raises(AnsibleFilterError, match=re.escape(message)):
        PARTS(state, parts)


def test_union_joins_every_kind_in_the_parts_order():
    union = UNION({"rdma": RDMA, "slurm": SLURM})
    assert union["files"] == RDMA["files"] + SLURM["files"]
    assert union["packages"] == RDMA["packages"] + SLURM["packages"]
    assert union["services"] == SLURM["services"]
    assert union["users"] == [] and union["mysql_users"] == []
    assert sorted(union) == sorted(["files", "lines", "blocks", "sysctls", "groups", "users", "packages", "services",
                                    "mysql_databases", "mysql_users", "commands"])


def test_union_then_split_gives_each_part_its_own_checked_counts():
    union = UNION({"rdma": RDMA, "slurm": SLURM})
    states = PARTS(_result(), {"rdma": RDMA, "slurm": SLURM})
    assert sum(len(items) for items in union.values()) == sum(sum(s["checked"].values()) for s in states.values())
    assert states["rdma"]["msg"] == "in sync: 3 item(s) checked"


@pytest.mark.parametrize("parts, message", [
    (["x"], "parts must map a part's name"),
    ({"rdma": {"disks": []}}, "part rdma: unknown kinds ['disks']"),
    ({"slurm": {"services": [{"started": True}]}}, "part slurm: an item of services has no name"),
])
def test_union_refuses_what_is_not_items(parts, message):
    with pytest.raises(AnsibleFilterError, match=re.escape(message)):
        UNION(parts)
