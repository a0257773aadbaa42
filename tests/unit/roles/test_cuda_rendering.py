# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit level (no host): the cuda role's repository files rendered for Ubuntu 22.04/24.04,
Debian 12 and RHEL/Rocky 9 with Ansible's own templar, compared with NVIDIA's documented lines.

The fixture ``templates`` (tests/unit/roles/conftest.py) renders. Expected values follow NVIDIA's
CUDA Installation Guide for Linux (network repo,
"cuda-keyring": /usr/share/keyrings/cuda-archive-keyring.gpg and
"deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://developer.download.nvidia.com/compute/cuda/repos/<distro>/x86_64/ /",
keys 3bf863cc.pub for ubuntu2204/ubuntu2404/debian12 and D42D0685.pub for rhel9, the
cuda-<distro>.pin file, "dnf module install nvidia-driver:<branch>-open|-dkms" on RHEL) and the
NVIDIA Container Toolkit install guide ("deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg]
https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /").
"""

import pytest

ROLE = "cuda"

BASE = "https://developer.download.nvidia.com/compute/cuda/repos"


@pytest.mark.parametrize("os_name,distro", [("ubuntu2204", "ubuntu2204"), ("ubuntu2404", "ubuntu2404"), ("debian12", "debian12")])
def test_apt_line_keyring_and_key_as_nvidia_documents(templates, os_name, distro):
    assert templates.render(os_name, "cuda.list.j2") == [
        "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] %s/%s/x86_64/ /" % (BASE, distro)]
    assert templates.value(os_name, "__cuda_list_file") == "/etc/apt/sources.list.d/cuda-%s-x86_64.list" % distro
    assert templates.value(os_name, "__cuda_key_url").strip() == "%s/%s/x86_64/3bf863cc.pub" % (BASE, distro)
    assert templates.render(os_name, "cuda-pin.j2")[-3:] == ["Package: *", "Pin: release l=NVIDIA CUDA", "Pin-Priority: 600"]
    assert templates.render(os_name, "nvidia-container-toolkit.list.j2") == [
        "deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] "
        "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /"]


@pytest.mark.parametrize("os_name", ["rhel9", "rocky9"])
def test_dnf_repository_and_module_stream(templates, os_name):
    assert templates.render(os_name, "cuda.repo.j2") == [
        "[cuda-rhel9-x86_64]", "name=cuda-rhel9-x86_64", "baseurl=%s/rhel9/x86_64" % BASE,
        "enabled=1", "gpgcheck=1", "gpgkey=%s/rhel9/x86_64/D42D0685.pub" % BASE,
        # driver branch 570 is a CUDA 12 driver: NCCL builds for other CUDA majors are excluded
        "excludepkgs=libnccl*+cuda11.* libnccl*+cuda13.*"]
    assert templates.value(os_name, "__cuda_driver_packages") == ["@nvidia-driver:570-open"]
    assert templates.value(os_name, "__cuda_driver_packages", cuda_driver_kernel_modules="proprietary") == ["@nvidia-driver:570-dkms"]
    assert templates.value(os_name, "__cuda_nccl_packages") == ["libnccl", "libnccl-devel"]
    assert "baseurl=https://nvidia.github.io/libnvidia-container/stable/rpm/$basearch" in templates.render(os_name, "nvidia-container-toolkit.repo.j2")


@pytest.mark.parametrize("branch,modules,expected", [
    ("570", "auto", ["nvidia-open-570"]), ("550", "auto", ["cuda-drivers-550"]),
    ("550", "open", ["nvidia-open-550"]), ("580", "proprietary", ["cuda-drivers-580"]),
])
def test_driver_branch_meta_package_on_apt(templates, branch, modules, expected):
    assert templates.value("ubuntu2204", "__cuda_driver_packages", cuda_driver_branch=branch, cuda_driver_kernel_modules=modules) == expected


def test_toolkit_dcgm_and_fabric_manager_names(templates):
    assert templates.value("debian12", "__cuda_toolkit_package") == "cuda-toolkit-12-8"
    assert templates.value("debian12", "__cuda_dcgm_package") == "datacenter-gpu-manager-4-cuda12"
    assert templates.value("ubuntu2404", "__cuda_fabric_manager_package") == "nvidia-fabricmanager-570"
    assert templates.value("rhel9", "__cuda_fabric_manager_package") == "nvidia-fabric-manager"


def test_mirror_keeps_nvidias_layout(templates):
    assert templates.render("debian12", "cuda.list.j2", cuda_repo_base_url="http://mirror.example/cuda/") == [
        "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] http://mirror.example/cuda/debian12/x86_64/ /"]


@pytest.mark.parametrize("os_name,toolkit,ok", [
    ("ubuntu2404", "12.4", False), ("ubuntu2404", "12.8", True), ("debian12", "12.1", False), ("rhel9", "12.0", True),
])
def test_toolkit_per_os_used_by_preflight(templates, os_name, toolkit, ok):
    assert templates.value(os_name, "cuda_toolkit_version is version(__cuda_min_toolkit[__cuda_os_id], '>=')", cuda_toolkit_version=toolkit) is ok
