# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of module_utils/_nvidia_smi.py over the real nvidia-smi -q -x captures in tests/fixtures/nvidia-smi."""

from __future__ import annotations


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.module_utils._gpu_models import gpu_facts
from ansible_collections.gpucluster.training.plugins.module_utils._nvidia_smi import NvidiaSmiError, parse_nvidia_smi_xml
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.fuzz_inputs import property_tests

MIG = "nvidia_smi_q_x_A100-SXM4-80GB_MIG_4instances_drv535_telegraf.xml"
T4 = "nvidia_smi_q_x_Tesla-T4_passthrough_drv515_telegraf.xml"


@pytest.mark.parametrize("name,count,physical,slug,memory,driver,warnings", [
    (MIG, 4, 1, "a100", 19968, "535.54.03", 1),
    (T4, 1, 1, "t4", 15360, "515.105.01", 0),
])
def test_fixture(name, count, physical, slug, memory, driver, warnings):
    parsed = parse_nvidia_smi_xml(fixture_text("nvidia-smi", name))
    facts = gpu_facts("nvidia", parsed["gpus"], driver_version=parsed["driver_version"], warnings=parsed["warnings"])
    assert facts["count"] == count
    assert facts["physical_count"] == physical
    assert facts["slurm_type"] == slug
    assert facts["memory_mib"] == memory
    assert facts["driver_version"] == driver
    assert len(facts["warnings"]) == warnings


def test_mig_instances_are_the_devices():
    gpus = parse_nvidia_smi_xml(fixture_text("nvidia-smi", MIG))["gpus"]
    assert [dev["mig"]["gpu_instance_id"] for dev in gpus] == [3, 4, 5, 6]
    assert {dev["mig"]["parent_uuid"] for dev in gpus} == {"GPU-513536b6-7d19-9063-b049-1e69664bb298"}
    assert all(dev["mig"]["multiprocessor_count"] == 14 for dev in gpus)
    assert gpus[0]["pci_bus_id"] == "0000:01:00.0"
    assert gpus[0]["device_file"] == "/dev/nvidia1"
    assert gpus[0]["arch"] == "Ampere"


def test_t4():
    gpu = parse_nvidia_smi_xml(fixture_text("nvidia-smi", T4))["gpus"][0]
    assert gpu["model"] == "Tesla T4"
    assert gpu["pci_bus_id"] == "0000:00:1e.0"
    assert gpu["virtualization_mode"] == "Pass-Through"
    assert gpu["mig"] is None


def test_driver_not_loaded():
    # synthetic: the message nvidia-smi prints when the kernel driver does not answer
    text = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            "Make sure that the latest NVIDIA driver is installed and running.\n")
    with pytest.raises(NvidiaSmiError, match="modprobe nvidia"):
        parse_nvidia_smi_xml(text)


@pytest.mark.parametrize("value", [None, 1, "", "   ", "not xml", "<a/>", "<nvidia_smi_log><gpu/></nvidia_smi_log>",
                                   '<!DOCTYPE x [<!ENTITY e "x">]><nvidia_smi_log/>'])
def test_not_nvidia_smi(value):
    with pytest.raises(NvidiaSmiError):
        parse_nvidia_smi_xml(value)


TEXTS = [fixture_text("nvidia-smi", MIG), fixture_text("nvidia-smi", T4)]


def _checked(text):
    try:
        result = parse_nvidia_smi_xml(text)
    except NvidiaSmiError:
        return None
    assert isinstance(result["gpus"], list)
    return result


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(range(len(TEXTS))), st.floats(min_value=0.0, max_value=0.98))
def test_truncated_outputs_give_own_error(which, fraction):
    text = TEXTS[which]
    assert _checked(text[:int(len(text) * fraction)]) is None


test_property_garbled_fixture, test_property_arbitrary_text, test_property_reordered_lines = property_tests(_checked, TEXTS)


def test_unknown_xml_encoding_declaration_gives_own_error():
    # found by the hypothesis garble test: ElementTree raises LookupError for an unknown encoding
    with pytest.raises(NvidiaSmiError, match="does not parse"):
        parse_nvidia_smi_xml('<?xml version="1.0" encoding="U0F-8"?><nvidia_smi_log></nvidia_smi_log>')
