# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of module_utils/_rocminfo.py over the real rocminfo captures in tests/fixtures/rocminfo."""

from __future__ import annotations


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.module_utils._gpu_models import gpu_facts
from ansible_collections.gpucluster.training.plugins.module_utils._rocminfo import RocminfoError, parse_rocminfo
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text


# fixture, partial, agents, counted GPUs, physical packages, arch, slug, memory_mib, partition mode
CASES = [
    ("rocminfo_4xMI300X_gfx942_EPYC9474F_thamada.txt", False, 6, 4, 4, "gfx942", "mi300x", 196592, "SPX"),
    ("rocminfo_MI300X_CPX_NPS1_2partitions_excerpt_rocm4750.txt", True, 2, 2, 1, "gfx942", "mi300x", 24574, "CPX"),
    ("rocminfo_1xMI300X_VF_sriov_XeonPlatinum8568Y_rocm5265.txt", False, 2, 1, 1, "gfx942", "mi300x", 196288, "SPX"),
    ("rocminfo_MI100_plus_RadeonGraphics_iGPU_Ryzen7900X_rocm2594.txt", False, 3, 1, 1, "gfx908", "mi100", 32752, None),
    ("rocminfo_1xMI250X_GCD_LUMI_EPYC7A53_cpu_agents_2-4_removed_rocm2587.txt", False, 2, 1, 1, "gfx90a", "mi250x", 65520, None),
]


@pytest.mark.parametrize("name,partial,agents,count,physical,arch,slug,memory,mode", CASES)
def test_fixture(name, partial, agents, count, physical, arch, slug, memory, mode):
    parsed = parse_rocminfo(fixture_text("rocminfo", name), partial=partial)
    assert len(parsed["agents"]) == agents
    facts = gpu_facts("amd", parsed["gpus"])
    assert facts["count"] == count
    assert facts["physical_count"] == physical
    assert facts["arch"] == arch
    assert facts["slurm_type"] == slug
    assert facts["memory_mib"] == memory
    assert facts["partition_mode"] == mode
    assert all(agent["device_type"] in ("CPU", "GPU") for agent in parsed["agents"])


def test_mi300x_devices_are_complete():
    parsed = parse_rocminfo(fixture_text("rocminfo", "rocminfo_4xMI300X_gfx942_EPYC9474F_thamada.txt"))
    assert parsed["driver_loaded"] is True
    assert [dev["uuid"] for dev in parsed["gpus"]] == [
        "GPU-8d1457e2c20f59d2", "GPU-b4fa34630e85d42a", "GPU-e8986800e182538a", "GPU-eff71edc82169115"]
    assert [dev["bdf"] for dev in parsed["gpus"]] == ["26:00.0", "46:00.0", "65:00.0", "85:00.0"]
    assert [dev["kfd_node"] for dev in parsed["gpus"]] == [2, 3, 4, 5]
    # rocminfo does not print the PCI domain: no guessed pci_bus_id
    assert all(dev["pci_bus_id"] is None for dev in parsed["gpus"])
    assert parsed["gpus"][0]["model"] == "AMD Instinct MI300X"


def test_cpx_partitions_share_the_package_uuid():
    parsed = parse_rocminfo(fixture_text("rocminfo", "rocminfo_MI300X_CPX_NPS1_2partitions_excerpt_rocm4750.txt"), partial=True)
    gpus = parsed["gpus"]
    assert [dev["compute_units"] for dev in gpus] == [38, 38]
    assert [dev["partitions_per_device"] for dev in gpus] == [8, 8]
    assert gpus[0]["physical_id"] == gpus[1]["physical_id"] == "GPU-dc91284879207f2b"
    assert [dev["bdf"] for dev in gpus] == ["05:00.0", "05:00.1"]


def test_excerpt_needs_partial():
    with pytest.raises(RocminfoError, match="incomplete"):
        parse_rocminfo(fixture_text("rocminfo", "rocminfo_MI300X_CPX_NPS1_2partitions_excerpt_rocm4750.txt"))


def test_sriov_virtual_function():
    gpu = parse_rocminfo(fixture_text("rocminfo", "rocminfo_1xMI300X_VF_sriov_XeonPlatinum8568Y_rocm5265.txt"))["gpus"][0]
    assert gpu["virtual_function"] is True
    assert gpu["chip_id"] == "0x74b5"
    assert gpu["counted"] is True


def test_integrated_graphics_listed_not_counted():
    parsed = parse_rocminfo(fixture_text("rocminfo", "rocminfo_MI100_plus_RadeonGraphics_iGPU_Ryzen7900X_rocm2594.txt"))
    assert [dev["model"] for dev in parsed["gpus"]] == ["AMD Instinct MI100", "AMD Radeon Graphics"]
    igpu = parsed["gpus"][1]
    assert igpu["counted"] is False and "integrated" in igpu["not_counted_reason"]
    assert igpu["uuid"] is None


def test_mi250x_gcd_is_one_gpu_of_a_two_gcd_card():
    gpu = parse_rocminfo(fixture_text("rocminfo", "rocminfo_1xMI250X_GCD_LUMI_EPYC7A53_cpu_agents_2-4_removed_rocm2587.txt"))["gpus"][0]
    assert gpu["gcds_per_card"] == 2
    assert gpu["compute_units"] == 110


def test_rock_not_loaded_says_what_to_do():
    # synthetic: the first line rocminfo prints when the amdgpu/KFD driver is absent
    with pytest.raises(RocminfoError, match="modprobe amdgpu"):
        parse_rocminfo("ROCk module is NOT loaded, possibly no GPU devices\n")


def test_hsa_failure_says_what_to_do():
    # synthetic: the shape of rocminfo's HSA initialisation failure message
    text = "ROCk module is loaded\nhsa api call failure at: rocminfo.cc:1306\nCall returned HSA_STATUS_ERROR_OUT_OF_RESOURCES\n"
    with pytest.raises(RocminfoError, match="/dev/kfd"):
        parse_rocminfo(text)


@pytest.mark.parametrize("value", [None, 3, b"bytes", "", "hello", "x\x00y"])
def test_not_rocminfo(value):
    with pytest.raises(RocminfoError):
        parse_rocminfo(value)


ALL_TEXTS = [fixture_text("rocminfo", case[0]) for case in CASES]


def _checked(text, partial):
    try:
        result = parse_rocminfo(text, partial=partial)
    except RocminfoError:
        return None
    assert isinstance(result["gpus"], list)
    return result


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(range(len(ALL_TEXTS))), st.floats(min_value=0.0, max_value=1.0), st.booleans())
def test_truncated_outputs_give_own_error(which, fraction, partial):
    text = ALL_TEXTS[which]
    cut = text[:int(len(text) * fraction)]
    result = _checked(cut, partial)
    if not partial and fraction < 0.99:
        assert result is None


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(range(len(ALL_TEXTS))), st.randoms(use_true_random=False), st.booleans())
def test_reordered_lines_give_own_error(which, rnd, partial):
    lines = ALL_TEXTS[which].splitlines()
    rnd.shuffle(lines)
    _checked("\n".join(lines), partial)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(range(len(ALL_TEXTS))), st.lists(st.tuples(st.floats(0, 1), st.text(max_size=5)), max_size=8), st.booleans())
def test_garbled_outputs_give_own_error(which, edits, partial):
    text = ALL_TEXTS[which]
    for where, junk in edits:
        pos = int(len(text) * where)
        text = text[:pos] + junk + text[pos + len(junk):]
    _checked(text, partial)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.booleans())
def test_any_text_gives_result_or_own_error(text, partial):
    _checked(text, partial)
