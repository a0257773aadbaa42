# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests of the Slurm filters: thin faces over _slurm_conf, errors as AnsibleFilterError."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.slurm_conf_lines import FilterModule as ConfLines
from ansible_collections.gpucluster.training.plugins.filter.slurm_gres_lines import FilterModule as GresLines
from ansible_collections.gpucluster.training.plugins.filter.slurm_hostlist import FilterModule as Hostlist
from ansible_collections.gpucluster.training.plugins.filter.slurm_node_lines import FilterModule as NodeLines
from ansible_collections.gpucluster.training.plugins.filter.slurm_partition_lines import FilterModule as PartitionLines
from ansible_collections.gpucluster.training.plugins.filter.slurm_version_features import FilterModule as Features

hostlist = Hostlist().filters()["slurm_hostlist"]
node_lines = NodeLines().filters()["slurm_node_lines"]
gres_lines = GresLines().filters()["slurm_gres_lines"]
partition_lines = PartitionLines().filters()["slurm_partition_lines"]
conf_lines = ConfLines().filters()["slurm_conf_lines"]
features = Features().filters()["slurm_version_features"]

# Facts of a 2-core container of the Molecule scenario (slurmd -C there: CPUs=2 Boards=1
# SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105).
CONTAINER = {"processor_vcpus": 2, "processor_count": 1, "processor_cores": 2, "processor_threads_per_core": 1, "memtotal_mb": 24105}
# SIMULATED GPU fact: 8 MI300X as gpu_info reports them, with test stand-in render nodes.
GPUS = {"vendor": "amd", "count": 8, "slurm_type": "mi300x",
        "devices": [{"index": i, "slurm_type": "mi300x", "render_node": "/dev/dri/renderD%d" % (128 + i)} for i in range(8)]}


def test_hostlist_filter():
    assert hostlist(["slurm-gpu2", "slurm-gpu1"]) == "slurm-gpu[1-2]"
    with pytest.raises(AnsibleFilterError, match="slurm_hostlist"):
        hostlist(["a b"])


def test_node_lines_filter():
    facts = {"slurm-gpu1": CONTAINER, "slurm-gpu2": CONTAINER}
    gpus = {"slurm-gpu1": GPUS, "slurm-gpu2": GPUS}
    assert node_lines(facts, gpus, None, 1024, 0, {"State": "UNKNOWN"}) == [
        "NodeName=slurm-gpu[1-2] CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=22528 Gres=gpu:mi300x:8 State=UNKNOWN"]


def test_node_lines_filter_names_the_node_and_fact():
    with pytest.raises(AnsibleFilterError, match="node slurm-gpu2: fact memtotal_mb is missing"):
        node_lines({"slurm-gpu2": {k: v for k, v in CONTAINER.items() if k != "memtotal_mb"}})
    with pytest.raises(AnsibleFilterError):
        node_lines(["x"])


def test_gres_lines_filter():
    assert gres_lines({"slurm-gpu1": GPUS, "slurm-gpu2": GPUS}) == [
        "NodeName=slurm-gpu[1-2] Name=gpu Type=mi300x File=/dev/dri/renderD[128-135]"]
    with pytest.raises(AnsibleFilterError, match="greater than"):
        gres_lines({"g": GPUS}, gpu_counts={"g": 9})


def test_conf_lines_filter():
    assert conf_lines({"A": 1, "B": 2}, {"B": "omit"}) == ["A=1"]
    with pytest.raises(AnsibleFilterError, match="removed in 23.11"):
        conf_lines({"SelectType": "select/cons_res"}, None, "24.11.5-4+deb13u1")


def test_partition_lines_filter():
    groups = {"slurm_compute": ["slurm-gpu1", "slurm-gpu2"], "big": ["slurm-gpu2"], "slurm_controller": ["slurm-ctl1"]}
    parts = [{"name": "gpu", "groups": ["slurm_compute"], "default": True},
             {"name": "big", "groups": ["big", "slurm_controller"], "options": {"MaxTime": "omit", "DefMemPerGPU": 8192}}]
    assert partition_lines(parts, groups, groups["slurm_compute"]) == [
        "PartitionName=gpu Nodes=slurm-gpu[1-2] Default=YES MaxTime=INFINITE State=UP",
        "PartitionName=big Nodes=slurm-gpu2 Default=NO State=UP DefMemPerGPU=8192"]
    with pytest.raises(AnsibleFilterError, match="partition gpu names node group gpu_nodes, which is not an inventory group"):
        partition_lines([{"name": "gpu", "groups": ["gpu_nodes"]}], groups, groups["slurm_compute"])
    with pytest.raises(AnsibleFilterError, match="partition ctl holds no compute node"):
        partition_lines([{"name": "ctl", "groups": ["slurm_controller"]}], groups, groups["slurm_compute"])
    with pytest.raises(AnsibleFilterError, match="only one"):
        partition_lines([{"name": "a", "groups": ["big"], "default": True}, {"name": "b", "groups": ["big"], "default": True}],
                        groups, groups["slurm_compute"])
    with pytest.raises(AnsibleFilterError, match="declared twice"):
        partition_lines([{"name": "a", "groups": ["big"]}, {"name": "a", "groups": ["big"]}], groups, groups["slurm_compute"])


def test_version_features_filter():
    assert features("22.05.8-4+deb12u3")["cgroup_automount"] is True
    with pytest.raises(AnsibleFilterError):
        features("")
