# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""cuda_driver_kernel_modules=auto takes the open modules from branch 560 on, except for GPUs they
do not support (Volta, Pascal: the open modules need Turing or later, NVIDIA/open-gpu-kernel-modules
README): before, a V100 node got nvidia-open and no GPU after the reboot."""

import json

import pytest


@pytest.mark.parametrize("settings, open_modules", [
    ({"cuda_driver_branch": "570", "cuda_verify_expected_model": "h100"}, True),
    ({"cuda_driver_branch": "570", "cuda_verify_expected_model": "V100"}, False),
    ({"cuda_driver_branch": "570", "cuda_verify_expected_model": "p100"}, False),
    ({"cuda_driver_branch": "550", "cuda_verify_expected_model": "h100"}, False),
    ({"cuda_driver_branch": "570", "cuda_verify_expected_model": "v100", "cuda_driver_kernel_modules": "open"}, True),
])
def test_auto_kernel_modules(run_playbook, settings, open_modules):
    result = run_playbook("tests/harness/playbooks/cuda_kernel_modules.yml", "-e", json.dumps(settings))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "open modules: %s" % open_modules in out, out
