# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""slurm_compute's registration check from one sinfo call on the controller."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_nodes import SlurmNodesError, node_registration

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


@pytest.mark.parametrize("text", ["gpu1 idle none", "|idle|none", "gpu1||none"])
def test_malformed_output_is_named(text):
    with pytest.raises(SlurmNodesError, match=r"is not name\|state\|reason"):
        node_registration(text, ["gpu1"])


def test_names_must_be_a_list():
    with pytest.raises(SlurmNodesError, match="names must be a list"):
        node_registration("", "gpu1")
