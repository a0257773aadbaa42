# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The driver roles verify the installed driver and ROCm release against what the inventory asks:
they install one on a new node but do not move an installed, held one, and before nothing noticed
a changed cuda_driver_branch or rocm_version. nvidia-smi is a test double printing a real capture
(tests/fixtures/SOURCES.md: driver 535.54.03); the ROCm release file is written here."""

import json

import pytest

from conftest import ROOT

A100 = ROOT / "tests/fixtures/nvidia-smi/nvidia_smi_q_x_A100-SXM4-80GB_MIG_4instances_drv535_telegraf.xml"
MI300X = ROOT / "tests/fixtures/rocminfo/rocminfo_4xMI300X_gfx942_EPYC9474F_thamada.txt"


@pytest.mark.parametrize("branch, passes", [("535", True), ("570", False), ("53", False)])
def test_nvidia_driver_branch(run_playbook, tmp_path, branch, passes):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/bin/sh\ncat %s\n" % A100)
    (fake / "nvidia-smi").chmod(0o755)
    result = run_playbook("tests/harness/playbooks/gpu_driver_version.yml",
                          "-e", json.dumps({"what": "cuda", "fake_bin": str(fake), "branch": branch}))
    out = result.stdout + result.stderr
    assert (result.returncode == 0) is passes, out
    if not passes:
        assert "the NVIDIA driver is 535.54.03, %s was asked (cuda_driver_branch)" % branch in " ".join(out.split()), out


@pytest.mark.parametrize("installed, asked, passes", [
    ("6.4.0-47", "6.4", True), ("6.4.1-12", "6.4.1", True), ("6.3.1-48", "6.4", False), (None, "6.4", False)])
def test_rocm_release(run_playbook, tmp_path, installed, asked, passes):
    rocm = tmp_path / "rocm"
    (rocm / ".info").mkdir(parents=True)
    if installed:
        (rocm / ".info" / "version").write_text(installed + "\n")
    result = run_playbook("tests/harness/playbooks/gpu_driver_version.yml",
                          "-e", json.dumps({"what": "rocm", "rocm_dir": str(rocm), "asked": asked, "rocminfo": str(MI300X)}))
    out = " ".join((result.stdout + result.stderr).split())
    assert (result.returncode == 0) is passes, out
    if installed and not passes:
        assert "ROCm 6.3.1-48 is installed at %s, rocm_version 6.4 was asked" % rocm in out, out
    if not installed:
        assert "no ROCm release is installed at %s" % rocm in out, out
