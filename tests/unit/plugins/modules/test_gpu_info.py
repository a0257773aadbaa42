# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the gpu_info module: main() driven with module arguments, real captures as input."""

from __future__ import annotations


import pytest
from ansible.module_utils import basic

from ansible_collections.gpucluster.training.plugins.modules import gpu_info
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.module_harness import Exit, Fail, exits, run_main  # noqa: F401  pylint: disable=unused-import

MI300X = fixture_text("rocminfo", "rocminfo_4xMI300X_gfx942_EPYC9474F_thamada.txt")
MI100 = fixture_text("rocminfo", "rocminfo_MI100_plus_RadeonGraphics_iGPU_Ryzen7900X_rocm2594.txt")
A100_MIG = fixture_text("nvidia-smi", "nvidia_smi_q_x_A100-SXM4-80GB_MIG_4instances_drv535_telegraf.xml")


def run(args, expect=Exit):
    return run_main(gpu_info.main, args, expect)


def test_mi300x_capture():
    result = run({"rocminfo_output": MI300X, "expected_count": 4})
    facts = result["ansible_facts"]["gpucluster_gpus"]
    assert (facts["count"], facts["arch"], facts["slurm_type"], facts["vendor"]) == (4, "gfx942", "mi300x", "amd")
    assert result["changed"] is False
    assert result["msg"].startswith("4 AMD GPU(s): AMD Instinct MI300X (gfx942), GRES type mi300x")


def test_integrated_gpu_not_counted():
    result = run({"rocminfo_output": MI100})
    assert result["ansible_facts"]["gpucluster_gpus"]["count"] == 1
    assert "not counted: AMD Radeon Graphics" in result["msg"]


def test_expected_count_mismatch_names_both():
    result = run({"rocminfo_output": MI300X, "expected_count": 8}, expect=Fail)
    assert result["msg"].startswith("expected 8 GPU(s) but found 4")


def test_mig_capture():
    facts = run({"nvidia_smi_output": A100_MIG})["ansible_facts"]["gpucluster_gpus"]
    assert (facts["count"], facts["physical_count"], facts["slurm_type"]) == (4, 1, "a100")


@pytest.mark.parametrize("args,message", [
    ({"rocminfo_output": MI300X[:5000]}, "incomplete"),
    ({"rocminfo_output": "ROCk module is NOT loaded, possibly no GPU devices"}, "modprobe amdgpu"),
    ({"nvidia_smi_output": A100_MIG[:3000]}, "does not parse"),
    ({"nvidia_smi_output": MI300X}, "not XML"),
    ({"vendor": "nvidia", "rocminfo_output": MI300X}, "contradicts"),
])
def test_clear_failures(args, message):
    assert message in run(args, expect=Fail)["msg"]


def test_host_without_gpu(monkeypatch, tmp_path):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: None)
    result = run({"sysfs_root": str(tmp_path)})
    facts = result["ansible_facts"]["gpucluster_gpus"]
    assert facts["count"] == 0 and facts["vendor"] == "none"
    assert result["msg"].startswith("no GPU found on this host")
    assert "expected 2 GPU(s) but found 0" in run({"sysfs_root": str(tmp_path), "expected_count": 2}, expect=Fail)["msg"]


def test_runs_rocminfo_with_lang_c_and_reads_sysfs(monkeypatch, tmp_path):
    # synthetic sysfs tree: a KFD node properties file with the values of GPU agent 3 of the real capture
    node = tmp_path / "class" / "kfd" / "kfd" / "topology" / "nodes" / "2"
    node.mkdir(parents=True)
    (node / "properties").write_text("location_id 9728\ndomain 0\ndrm_render_minor 128\n")
    pci = tmp_path / "bus" / "pci" / "devices" / "0000:26:00.0"
    pci.mkdir(parents=True)
    (pci / "numa_node").write_text("0\n")
    calls = []

    def run_command(self, args, **kwargs):
        calls.append((args, kwargs))
        return 0, MI300X, ""

    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/opt/rocm/bin/rocminfo" if name == "rocminfo" else None)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    facts = run({"sysfs_root": str(tmp_path)})["ansible_facts"]["gpucluster_gpus"]
    assert calls[0][0] == ["/opt/rocm/bin/rocminfo"]
    assert calls[0][1]["environ_update"] == {"LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}
    first = facts["devices"][0]
    assert (first["pci_bus_id"], first["numa_node"], first["render_node"]) == ("0000:26:00.0", 0, "/dev/dri/renderD128")


def test_rock_not_loaded_without_amd_hardware_is_zero(monkeypatch, tmp_path):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name if name == "rocminfo" else None)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, args, **k: (1, "ROCk module is NOT loaded, possibly no GPU devices\n", ""))
    facts = run({"sysfs_root": str(tmp_path)})["ansible_facts"]["gpucluster_gpus"]
    assert facts["count"] == 0 and facts["driver_loaded"] is False
    # with an AMD accelerator on the PCI bus the same answer is a clear failure
    pci = tmp_path / "bus" / "pci" / "devices" / "0000:26:00.0"
    pci.mkdir(parents=True)
    (pci / "vendor").write_text("0x1002\n")
    (pci / "class").write_text("0x120000\n")
    assert "AMD GPU(s) are on the PCI bus (0000:26:00.0)" in run({"sysfs_root": str(tmp_path)}, expect=Fail)["msg"]


def test_check_mode_supported():
    result = run({"rocminfo_output": MI300X, "_ansible_check_mode": True})
    assert result["ansible_facts"]["gpucluster_gpus"]["count"] == 4
