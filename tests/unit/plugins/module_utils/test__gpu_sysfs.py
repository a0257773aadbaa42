# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of module_utils/_gpu_sysfs.py.

SYNTHETIC sysfs: no public capture of a whole KFD topology was found, so the KFD node
``properties`` below are built by the test from the values of the real 4x MI300X rocminfo
fixture (Node, BDFID, Uuid as unique_id); the keys are those the kernel writes
(drivers/gpu/drm/amd/amdkfd/kfd_topology.c).  The render minors and NUMA nodes are invented.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.module_utils._gpu_sysfs import (
    GpuSysfsError,
    enrich_amd_devices,
    parse_kfd_properties,
    pci_gpus,
)
from ansible_collections.gpucluster.training.plugins.module_utils._rocminfo import parse_rocminfo

ROCMINFO = Path(__file__).resolve().parents[3] / "fixtures" / "rocminfo" / "rocminfo_4xMI300X_gfx942_EPYC9474F_thamada.txt"


def synthetic_tree():
    parsed = parse_rocminfo(ROCMINFO.read_text())
    files = {}
    for number, agent in enumerate(a for a in parsed["agents"] if a["device_type"] == "GPU"):
        files["class/kfd/kfd/topology/nodes/%d/properties" % agent["node"]] = (
            "cpu_cores_count 0\nsimd_count 1216\nlocation_id %d\ndomain 0\ndrm_render_minor %d\nunique_id %d\n"
            % (agent["bdfid"], 128 + 8 * number, int(agent["uuid"][4:], 16)))
        pci = "0000:%02x:%02x.%x" % ((agent["bdfid"] >> 8) & 255, (agent["bdfid"] >> 3) & 31, agent["bdfid"] & 7)
        files["bus/pci/devices/%s/numa_node" % pci] = "%d\n" % (number // 2)
        files["bus/pci/devices/%s/vendor" % pci] = "0x1002\n"
        files["bus/pci/devices/%s/class" % pci] = "0x120000\n"
    files["bus/pci/devices/0000:c1:00.0/vendor"] = "0x1a03\n"   # a BMC VGA, not a GPU we count
    files["bus/pci/devices/0000:c1:00.0/class"] = "0x030000\n"
    return parsed, files


def test_enrich_from_kfd_topology():
    parsed, files = synthetic_tree()
    devices = enrich_amd_devices(parsed["gpus"], files)
    assert [d["pci_bus_id"] for d in devices] == ["0000:26:00.0", "0000:46:00.0", "0000:65:00.0", "0000:85:00.0"]
    assert [d["render_node"] for d in devices] == ["/dev/dri/renderD128", "/dev/dri/renderD136", "/dev/dri/renderD144", "/dev/dri/renderD152"]
    assert [d["numa_node"] for d in devices] == [0, 0, 1, 1]
    assert parsed["gpus"][0]["pci_bus_id"] is None  # input not modified


def test_pci_gpus():
    files = synthetic_tree()[1]
    assert [g["pci_bus_id"] for g in pci_gpus(files)] == ["0000:26:00.0", "0000:46:00.0", "0000:65:00.0", "0000:85:00.0"]
    assert pci_gpus({}) == []


@pytest.mark.parametrize("text", ["location_id x\n", "garbage", "a b c\n"])
def test_bad_properties(text):
    with pytest.raises(GpuSysfsError):
        parse_kfd_properties(text)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_properties_text(text):
    try:
        assert isinstance(parse_kfd_properties(text), dict)
    except GpuSysfsError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["class/kfd/kfd/topology/nodes/2/properties", "bus/pci/devices/0000:26:00.0/numa_node",
                                        "bus/pci/devices/0000:26:00.0/vendor", "bus/pci/devices/0000:26:00.0/class"]),
                       st.text(max_size=30), max_size=4))
def test_garbled_tree(overrides):
    parsed, files = synthetic_tree()
    files.update(overrides)
    try:
        enrich_amd_devices(parsed["gpus"], files)
        pci_gpus(files)
    except GpuSysfsError:
        pass
