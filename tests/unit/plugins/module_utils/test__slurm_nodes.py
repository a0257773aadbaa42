# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""slurm_compute's registration check from one sinfo call on the controller."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_nodes import SlurmNodesError, SlurmRecordError, node_record, node_registration

# sinfo --noheader --nodes gpu[1-6] --format %n|%t|%E as Slurm 24.11 prints it: a node in two
# partitions twice, Slurm's own reason for a node it lost, an operator's reason for one taken down.
SINFO = """gpu1|idle|none
gpu1|idle|none
gpu2|drain|validate: all_reduce 120 GB/s < 300 GB/s
gpu3|idle*|none
gpu4|down*|Not responding
gpu5|down|replacing HCA (ops-142)
gpu6|mix|none
"""


def test_each_node_judged_once():
    got = node_registration(SINFO, ["gpu1", "gpu2", "gpu3", "gpu4", "gpu5", "gpu6", "gpu7"])
    assert {n: v["registered"] for n, v in got.items()} == {
        "gpu1": True, "gpu2": True, "gpu3": False, "gpu4": False, "gpu5": True, "gpu6": True, "gpu7": False}
    assert {n for n, v in got.items() if v["out_of_service"]} == {"gpu2", "gpu5"}
    assert got["gpu2"]["reason"] == "validate: all_reduce 120 GB/s < 300 GB/s"
    assert got["gpu7"] == {"state": "unknown", "reason": "", "registered": False, "out_of_service": False}


def test_down_without_a_reason_of_someone_is_not_registered():
    got = node_registration("gpu1|down|none\ngpu2|down|Not responding [slurm@2026-12-03T10:00:00]\n", ["gpu1", "gpu2"])
    assert not got["gpu1"]["registered"] and not got["gpu2"]["registered"]


# sinfo %t prints Slurm's compact state in lower case with at most one flag character (Slurm's
# node_state_string_compact, src/common/slurm_protocol_defs.c; sinfo(1), NODE STATE CODES): the
# word decides, the flag only where it says the controller does not hear from the node.
@pytest.mark.parametrize("state, registered, out_of_service", [
    ("mix-", True, False),       # planned by the backfill scheduler
    ("alloc+", True, False),     # completing
    ("idle@", True, False),      # reboot pending
    ("boot", True, False),       # what Slurm prints for an idle node with a reboot pending
    ("mix@", True, False),
    ("drng@", True, True),       # scontrol reboot ASAP: drained until the jobs end (roles/gpu_common)
    ("drain@", True, True),
    ("alloc$", True, True),      # in a maintenance reservation, as "maint"
    ("mix$", True, True),
    ("drng$", True, True),
    ("idle!", True, False),      # pending power down: still up
    ("alloc!", True, False),
    ("idle*", False, False),     # not responding
    ("drain*", False, False),
    ("maint*", False, False),
    ("idle~", False, False),     # powered off
    ("idle#", False, False),     # powering up
    ("mix%", False, False),      # powering down
    ("boot^", False, False),     # reboot issued: the node is going away, the controller waits for it
    ("drain^", False, False),
    ("down@", False, True),      # down without a reason of someone's
    ("inval", False, False),
])
def test_state_flags(state, registered, out_of_service):
    got = node_registration("gpu1|%s|none\n" % state, ["gpu1"])["gpu1"]
    assert got == {"state": state, "reason": "none", "registered": registered, "out_of_service": out_of_service}


def test_down_with_an_operators_reason_and_a_flag():
    got = node_registration("gpu1|down$|replacing HCA\ngpu2|down*|replacing HCA\ngpu3|down~|replacing HCA\n",
                            ["gpu1", "gpu2", "gpu3"])
    assert [got[n]["registered"] for n in ("gpu1", "gpu2", "gpu3")] == [True, False, False]
    assert [got[n]["out_of_service"] for n in ("gpu1", "gpu2", "gpu3")] == [True, False, False]


@pytest.mark.parametrize("text", ["gpu1 idle none", "|idle|none", "gpu1||none"])
def test_malformed_output_is_named(text):
    with pytest.raises(SlurmNodesError, match=r"is not name\|state\|reason"):
        node_registration(text, ["gpu1"])


def test_names_must_be_a_list():
    with pytest.raises(SlurmNodesError, match="names must be a list"):
        node_registration("", "gpu1")


# The record as slurm_common writes it (to_nice_json of {facts, gpus}; the lab's gpu1, Debian 13 container).
RECORD = ('{\n    "facts": {\n        "gpu1": {\n            "memtotal_mb": 24105,\n            "processor_cores": 2,\n'
          '            "processor_count": 1,\n            "processor_threads_per_core": 1,\n            "processor_vcpus": 2,\n'
          '            "virtualization_type": "podman"\n        }\n    },\n    "gpus": {\n        "gpu1": null\n    }\n}\n')
NEW = "/etc/ansible/facts.d/gpucluster_slurm_nodes.fact"
OLD = "/var/lib/slurm/gpucluster-node-facts.json"


def test_the_first_file_found_is_the_record():
    record = node_record([(NEW, RECORD), (OLD, '{"facts": {}, "gpus": {}}')])
    assert record["facts"]["gpu1"]["memtotal_mb"] == 24105 and record["gpus"] == {"gpu1": None}
    assert node_record([(OLD, RECORD)])["facts"].keys() == {"gpu1"}
    assert node_record([]) == {"facts": {}, "gpus": {}}


@pytest.mark.parametrize("text, says", [
    ("{}", "is not a record of the compute nodes' facts"),
    ('{"facts": []}', "is not a record of the compute nodes' facts"),
    ('{"facts": {}, "gpus": "x"}', "is not a record of the compute nodes' facts"),
    (RECORD[:40], "is not JSON ("),
    ("", "is not JSON ("),
])
def test_a_damaged_record_fails_naming_the_file(text, says):
    # a damaged local fact is not taken for no record, even where the old place still has one
    with pytest.raises(SlurmRecordError) as info:
        node_record([(NEW, text), (OLD, RECORD)])
    assert str(info.value).startswith(NEW + " " + says), info.value
    assert str(info.value).endswith("restore it, or remove it: this run then writes it again, and a compute node "
                                    "unreachable in this run is left out of slurm.conf until a run reaches it")
