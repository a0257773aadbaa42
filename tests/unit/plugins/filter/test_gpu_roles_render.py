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
    # a regular expression: apt's version globs take no leading '*' (checked with apt-cache policy
    # on a local repository: "*+cuda12.*" matched no build, "/\+cuda12\./" matched 2.26.2-1+cuda12.8)
    assert "Package: libnccl2 libnccl-dev\nPin: version /\\+cuda%d\\./\nPin-Priority: 1001" % major in pin
    assert "Package: libnccl2 libnccl-dev\nPin: version *\nPin-Priority: -1" in pin
    # the NCCL stanzas come before NVIDIA's catch-all (apt takes the first matching record)
    assert pin.index("libnccl2") < pin.index("Package: *")


def test_no_nccl_no_nccl_pin():
    assert "libnccl" not in role_render.render_template(cuda(cuda_install_nccl=False), "cuda", "cuda-pin.j2")


def rocm(**variables):
    base = {"ansible_facts": FACTS, "ansible_managed": "test", "rocm_perf_determinism_mhz": 1900}
    base.update(variables)
    return role_render.templar("rocm", ("defaults/main.yml", "vars/main.yml", "vars/Ubuntu.yml"), base)


def test_perf_determinism_waits_for_kfd_and_fails_loudly():
    unit = role_render.render_template(rocm(), "rocm", "perf-determinism.service.j2")
    assert "ConditionPathExists" not in unit  # a condition would skip the unit silently
    assert "After=systemd-modules-load.service systemd-udev-settle.service" in unit
    pre = [line for line in unit.splitlines() if line.startswith("ExecStartPre=")]
    assert len(pre) == 1 and "[ ! -e /dev/kfd ]" in pre[0] and "-gt 120" in pre[0] and "exit 1" in pre[0]
    assert "ExecStart=/opt/rocm/bin/rocm-smi --setperfdeterminism 1900" in unit and "TimeoutStartSec=180" in unit
    # switched off (the unit stopped, then removed), the clocks are given back at once, not at the next boot
    assert "ExecStop=/opt/rocm/bin/rocm-smi --resetperfdeterminism" in unit


def test_every_user_may_open_the_gpu_device_nodes():
    rules = role_render.render_template(rocm(), "rocm", "amdgpu-access.rules.j2")
    assert 'KERNEL=="kfd", GROUP="render", MODE="0666"' in rules
    assert 'SUBSYSTEM=="drm", KERNEL=="renderD*", GROUP="render", MODE="0666"' in rules


def test_hold_patterns_cover_the_driver_and_rocm():
    patterns = role_render.render(rocm(), "{{ __rocm_hold_patterns }}")
    assert "amdgpu-dkms*" in patterns and "rocm*" in patterns and "rccl*" in patterns


@pytest.mark.parametrize("branch, excluded, kept", [("570", ["11", "13"], "12"), ("580", ["11", "12"], "13")])
def test_dnf_excludes_nccl_for_other_cuda_majors(branch, excluded, kept):
    repo = role_render.render_template(cuda(cuda_driver_branch=branch, __cuda_os_id="el-9"), "cuda", "cuda.repo.j2")
    line = [text for text in repo.splitlines() if text.startswith("excludepkgs=")][0]
    assert line.split("=", 1)[1].split() == ["libnccl*+cuda%s.*" % major for major in excluded]
    assert "+cuda%s." % kept not in line
