# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests of the Slurm configuration derivations (_slurm_conf)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    autodetect_choice,
    config_lines,
    expand_hostlist,
    gpu_devices,
    gres_counts,
    gres_lines,
    hostlist,
    node_attributes,
    node_lines,
    parse_version,
    version_features,
)

# Hardware facts of a 2-socket EPYC 9474F node (48 cores/socket, SMT on) as Ansible reports them,
# with the 8 x MI300X of the captured rocminfo (tests/fixtures/rocminfo/rocminfo_4xMI300X_...,
# extended to 8 devices): SYNTHETIC combination built for these tests.
EPYC_FACTS = {
    "processor_vcpus": 192,
    "processor_count": 2,
    "processor_cores": 48,
    "processor_threads_per_core": 2,
    "memtotal_mb": 2321000,
}


def mi300x(count=8, first_minor=128):
    return {
        "vendor": "amd",
        "count": count,
        "model": "AMD Instinct MI300X",
        "slurm_type": "mi300x",
        "devices": [
            {"index": i, "slurm_type": "mi300x", "render_node": "/dev/dri/renderD%d" % (first_minor + i), "counted": True}
            for i in range(count)
        ],
    }


def a100(count=4):
    return {
        "vendor": "nvidia",
        "count": count,
        "slurm_type": "a100",
        "devices": [{"index": i, "slurm_type": "a100", "device_file": "/dev/nvidia%d" % i} for i in range(count)],
    }


# --- versions

@pytest.mark.parametrize("text, expected", [
    ("22.05.8-4+deb12u3", (22, 5, 8)),      # dpkg-query of Debian 12's slurm-client
    ("24.11.5-4+deb13u1", (24, 11, 5)),     # Debian 13
    ("slurm-wlm 22.05.8", (22, 5, 8)),      # slurmd -V on Debian
    ("slurm 23.11.10", (23, 11, 10)),
    ("24.05", (24, 5, 0)),
    ((25, 5), (25, 5, 0)),
])
def test_parse_version(text, expected):
    assert parse_version(text) == expected


@pytest.mark.parametrize("text", ["", "   ", None, "slurm", "2.6", 22.05, "(none)"])
def test_parse_version_rejects(text):
    with pytest.raises(SlurmConfError):
        parse_version(text)


def test_version_features_debian12_and_13():
    old = version_features("22.05.8-4+deb12u3")
    new = version_features("24.11.5-4+deb13u1")
    assert old["major_minor"] == "22.05" and new["major_minor"] == "24.11"
    assert old["cgroup_automount"] and not new["cgroup_automount"]
    assert old["cons_res"] and not new["cons_res"]
    assert not old["reconfigure_applies_node_changes"] and new["reconfigure_applies_node_changes"]
    assert version_features("23.11.0")["cons_res"] is False
    assert version_features("24.05.0")["cgroup_automount"] is False
    assert version_features("23.02.7")["cgroup_automount"] is True


@given(st.text(max_size=40))
def test_parse_version_raises_only_slurmconferror(text):
    try:
        parse_version(text)
    except SlurmConfError:
        pass


# --- hostlists

@pytest.mark.parametrize("names, expected", [
    (["gpu1", "gpu2"], "gpu[1-2]"),
    (["gpu2", "gpu1", "gpu3", "gpu10"], "gpu[1-3,10]"),
    (["slurm-gpu1", "slurm-gpu2"], "slurm-gpu[1-2]"),
    (["node01", "node02", "node03"], "node[01-03]"),
    (["node09", "node10"], "node[09-10]"),
    (["n1", "n1"], "n1"),
    (["login", "gpu1"], "login,gpu1"),
    (["rack1-n1", "rack1-n2", "rack2-n1"], "rack1-n[1-2],rack2-n1"),
    # a suffix after the number is never bracketed: Slurm before 23.11 (Debian bookworm's 22.05)
    # cannot read node[1-2]-ib (23.11 RELEASE_NOTES, "Allow for a shared suffix")
    (["a1b", "a2b"], "a1b,a2b"),
    (["node2-ib", "node1-ib"], "node1-ib,node2-ib"),
    (["gpu01a", "gpu02a", "gpu03a"], "gpu01a,gpu02a,gpu03a"),
    (["node10-ib", "node9-ib"], "node9-ib,node10-ib"),
    (["gpu1", "gpu2", "gpu2-ib", "gpu1-ib"], "gpu[1-2],gpu1-ib,gpu2-ib"),
    (["n1.lab", "n2.lab"], "n1.lab,n2.lab"),
    (["/dev/dri/renderD128", "/dev/dri/renderD129", "/dev/dri/renderD135"], "/dev/dri/renderD[128-129,135]"),
    ([], ""),
])
def test_hostlist(names, expected):
    assert hostlist(names) == expected


@pytest.mark.parametrize("bad", [["a b"], ["x,y"], [""], [None], 3, ["g[1]"]])
def test_hostlist_rejects(bad):
    with pytest.raises(SlurmConfError):
        hostlist(bad)


@given(st.lists(st.tuples(st.sampled_from(["gpu", "node", "c-"]), st.integers(0, 300)), max_size=30))
def test_hostlist_round_trip(parts):
    names = ["%s%d" % (p, n) for p, n in parts]
    assert sorted(expand_hostlist(hostlist(names))) == sorted(set(names))


@given(st.lists(st.tuples(st.sampled_from(["gpu", "node", "c-"]), st.integers(0, 300),
                          st.sampled_from(["", "-ib", "a", ".lab"])), max_size=30))
def test_hostlist_brackets_only_what_slurm_22_05_reads(parts):
    names = ["%s%d%s" % (p, n, suffix) for p, n, suffix in parts]
    expr = hostlist(names)
    # Slurm 22.05's hostlist parser: a ']' is followed by ',' or the end of the expression
    assert all(expr[i + 1:i + 2] in ("", ",") for i, char in enumerate(expr) if char == "]"), expr
    assert sorted(expand_hostlist(expr)) == sorted(set(names))


def test_expand_hostlist_rejects_bad_ranges():
    for bad in ["gpu[3-1]", "gpu[a-b]", "gpu[1"]:
        with pytest.raises(SlurmConfError):
            expand_hostlist(bad)


# --- node lines

def test_node_attributes_from_real_topology_and_gpus():
    attrs = node_attributes(EPYC_FACTS, mi300x(), mem_reserve_mib=4096)
    assert attrs == [
        ("CPUs", 192), ("Sockets", 2), ("CoresPerSocket", 48), ("ThreadsPerCore", 2),
        ("RealMemory", (2321000 - 4096) // 1024 * 1024), ("Gres", "gpu:mi300x:8"),
    ]


def test_node_attributes_reserve_percent_wins_when_larger():
    attrs = dict(node_attributes(EPYC_FACTS, None, mem_reserve_mib=1024, mem_reserve_percent=2))
    assert attrs["RealMemory"] == (2321000 - int(2321000 * 0.02)) // 1024 * 1024
    assert "Gres" not in attrs


def test_node_attributes_inconsistent_topology_falls_back_to_flat_cpus():
    facts = dict(EPYC_FACTS, processor_vcpus=2, processor_count=1, processor_cores=4, processor_threads_per_core=1)
    attrs = dict(node_attributes(facts))
    assert (attrs["CPUs"], attrs["Sockets"], attrs["CoresPerSocket"], attrs["ThreadsPerCore"]) == (2, 1, 2, 1)


@pytest.mark.parametrize("missing", ["processor_vcpus", "processor_count", "processor_cores", "processor_threads_per_core", "memtotal_mb"])
def test_node_attributes_names_the_missing_fact(missing):
    facts = dict(EPYC_FACTS)
    del facts[missing]
    with pytest.raises(SlurmConfError, match=missing):
        node_attributes(facts)


def test_node_attributes_rejects_reserve_eating_all_memory():
    with pytest.raises(SlurmConfError, match="leaves nothing"):
        node_attributes(dict(EPYC_FACTS, memtotal_mb=1000), mem_reserve_mib=1000)


def test_gres_count_limit_and_excess():
    assert gres_counts(mi300x(), 4) == [("mi300x", 4)]
    with pytest.raises(SlurmConfError, match="greater than the 8 GPUs probed"):
        gres_counts(mi300x(), 9)


def test_gres_counts_mixed_types_and_summary_only_fact():
    gpus = mi300x(2)
    gpus["devices"][1]["slurm_type"] = "mi325x"
    assert gres_counts(gpus) == [("mi300x", 1), ("mi325x", 1)]
    assert gres_counts({"vendor": "amd", "count": 4, "slurm_type": "mi300x"}) == [("mi300x", 4)]


def test_gpu_devices_counts_hand_written_devices_without_counted():
    # a100() is written as an inventory would (no counted key): every device counts, in index order
    gpus = a100(3)
    gpus["devices"].reverse()
    assert [d["index"] for d in gpu_devices(gpus)] == [0, 1, 2]
    gpus["devices"][0]["counted"] = False  # index 2, e.g. integrated graphics as gpu_info marks it
    assert [d["index"] for d in gpu_devices(gpus)] == [0, 1]
    assert gpu_devices(None) == [] and gpu_devices({}) == []


def test_gpu_devices_without_index_stand_at_their_position():
    gpus = {"devices": [{"index": 3, "name": "d3"}, {"name": "p1"}, {"index": 0, "name": "d0"}]}
    assert [d["name"] for d in gpu_devices(gpus)] == ["d0", "p1", "d3"]


@pytest.mark.parametrize("gpus, message", [
    ("mi300x", "gpucluster_gpus must be a dict"),
    ({"devices": "0,1"}, "gpucluster_gpus.devices must be a list of devices, got a string"),
    ({"devices": [0, 1]}, r"gpucluster_gpus.devices\[0\] must be a dict \(index, slurm_type"),
    ({"devices": [{"index": 0, "counted": "yes"}]}, r"devices\[0\].counted must be true or false, got 'yes'"),
    ({"devices": [{"index": "0"}]}, r"devices\[0\].index must be a whole number >= 0, got '0'"),
])
def test_gpu_devices_names_what_is_malformed(gpus, message):
    with pytest.raises(SlurmConfError, match=message):
        gpu_devices(gpus)


def test_gres_rejects_bad_slurm_type():
    gpus = mi300x(1)
    gpus["devices"][0]["slurm_type"] = "MI300X OAM"
    gpus["slurm_type"] = None
    with pytest.raises(SlurmConfError, match="slurm_type"):
        gres_counts(gpus)


def test_node_lines_compress_identical_nodes():
    attrs = node_attributes(EPYC_FACTS, mi300x())
    other = node_attributes(dict(EPYC_FACTS, memtotal_mb=1160000))
    lines = node_lines({"gpu2": attrs, "gpu1": attrs, "gpu3": other}, extra={"State": "UNKNOWN"})
    assert lines == [
        "NodeName=gpu[1-2] CPUs=192 Sockets=2 CoresPerSocket=48 ThreadsPerCore=2 RealMemory=2319360 Gres=gpu:mi300x:8 State=UNKNOWN",
        "NodeName=gpu3 CPUs=192 Sockets=2 CoresPerSocket=48 ThreadsPerCore=2 RealMemory=1158144 State=UNKNOWN",
    ]


# --- gres.conf

def test_gres_lines_amd_render_nodes():
    assert gres_lines({"gpu1": mi300x(), "gpu2": mi300x(), "cpu1": None}) == [
        "NodeName=gpu[1-2] Name=gpu Type=mi300x File=/dev/dri/renderD[128-135]",
    ]


def test_gres_lines_nvidia_device_files_and_index_fallback():
    gpus = a100(2)
    del gpus["devices"][1]["device_file"]
    assert gres_lines({"dgx1": gpus}) == ["NodeName=dgx1 Name=gpu Type=a100 File=/dev/nvidia[0-1]"]


def test_gres_lines_autodetect_only_when_plugin_installed():
    # Debian 12 and 13 ship neither gpu_rsmi.so nor gpu_nvml.so: explicit lines stay.
    debian13 = ["gpu_generic.so", "gpu_nrt.so", "gpu_nvidia.so", "gres_gpu.so"]
    assert gres_lines({"g1": mi300x()}, debian13, autodetect=True) == [
        "NodeName=g1 Name=gpu Type=mi300x File=/dev/dri/renderD[128-135]"]
    assert gres_lines({"g1": a100()}, debian13, autodetect=True) == ["NodeName=g1 AutoDetect=nvidia"]
    assert gres_lines({"g1": a100()}, debian13 + ["gpu_nvml.so"], autodetect=True) == ["NodeName=g1 AutoDetect=nvml"]
    assert gres_lines({"g1": a100()}, debian13, autodetect=False)[0].endswith("File=/dev/nvidia[0-3]")
    assert autodetect_choice("amd", ["gpu_rsmi.so"]) == "rsmi"
    assert autodetect_choice("intel", ["gpu_rsmi.so"]) is None


def test_gres_lines_amd_without_render_node_is_an_error():
    gpus = mi300x(1)
    del gpus["devices"][0]["render_node"]
    with pytest.raises(SlurmConfError, match="render_node"):
        gres_lines({"g1": gpus})


def test_gres_lines_count_limit():
    assert gres_lines({"g1": mi300x()}, gpu_counts={"g1": 2}) == ["NodeName=g1 Name=gpu Type=mi300x File=/dev/dri/renderD[128-129]"]
    with pytest.raises(SlurmConfError):
        gres_lines({"g1": mi300x()}, gpu_counts={"g1": 9})


# --- settings files

def test_config_lines_override_and_omit():
    defaults = {"SelectType": "select/cons_tres", "MpiDefault": "none", "ReturnToService": 2}
    overrides = {"mpidefault": "__omit_place_holder__0123abcd", "ReturnToService": "omit", "PriorityType": "priority/multifactor"}
    assert config_lines(defaults, overrides) == ["SelectType=select/cons_tres", "PriorityType=priority/multifactor"]


def test_config_lines_formats_values():
    assert config_lines({"ConstrainDevices": True, "ConstrainSwapSpace": False, "SlurmctldParameters": ["enable_configless", "idle_on_node_suspend"]}) == [
        "ConstrainDevices=YES", "ConstrainSwapSpace=NO", "SlurmctldParameters=enable_configless,idle_on_node_suspend"]


@pytest.mark.parametrize("conf, key, value, version, ok", [
    ("slurm.conf", "SelectType", "select/cons_res", "22.05.8", True),
    ("slurm.conf", "SelectType", "select/cons_res", "23.11.0", False),
    ("slurm.conf", "SelectType", "select/cons_tres", "24.11.5", True),
    ("cgroup.conf", "CgroupAutomount", "yes", "22.05.8", True),
    ("cgroup.conf", "CgroupAutomount", "yes", "24.11.5", False),
    ("slurm.conf", "ControlMachine", "ctl1", "24.11.5", False),
])
def test_config_lines_version_checks(conf, key, value, version, ok):
    if ok:
        assert config_lines({key: value}, version=version, conf=conf) == ["%s=%s" % (key, value)]
    else:
        with pytest.raises(SlurmConfError, match=key):
            config_lines({key: value}, version=version, conf=conf)


@pytest.mark.parametrize("bad", [{"Bad Key": 1}, {"Key": "a\nb"}, {1: 2}])
def test_config_lines_rejects(bad):
    with pytest.raises(SlurmConfError):
        config_lines(bad)
