# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Rendering of the cuda and rocm roles' pinning, holds and device access (SIMULATED Ubuntu 22.04 host facts).

The driver-branch to CUDA mapping is the role's table from NVIDIA's CUDA Toolkit release notes
("CUDA Toolkit and Corresponding Driver Versions").
"""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.training.tests.unit.plugins.filter import role_render

FACTS = {"distribution_major_version": "22", "distribution_release": "jammy", "os_family": "Debian", "distribution": "Ubuntu"}


def cuda(**variables):
    base = {"ansible_facts": FACTS, "ansible_managed": "test", "__cuda_os_id": "ubuntu-22.04"}
    base.update(variables)
    return role_render.templar("cuda", ("defaults/main.yml", "vars/main.yml", "vars/Ubuntu.yml"), base)


@pytest.mark.parametrize("branch, major", [("535", 12), ("570", 12), ("580", 13)])
def test_nccl_pinned_to_the_cuda_major_of_the_driver_branch(branch, major):
    tmpl = cuda(cuda_driver_branch=branch)
    assert int(role_render.render(tmpl, "{{ __cuda_driver_cuda_major }}")) == major
    pin = role_render.render_template(tmpl, "cuda", "cuda-pin.j2")
    assert "Package: libnccl2 libnccl-dev\nPin: version *+cuda%d.*\nPin-Priority: 1001" % major in pin
    assert "Package: libnccl2 libnccl-dev\nPin: version *\nPin-Priority: -1" in pin
    # the NCCL stanzas come before NVIDIA's catch-all (apt takes the first matching record)
    assert pin.index("libnccl2") < pin.index("Package: *")


def test_no_nccl_no_nccl_pin():
    assert "libnccl" not in role_render.render_template(cuda(cuda_install_nccl=False), "cuda", "cuda-pin.j2")
