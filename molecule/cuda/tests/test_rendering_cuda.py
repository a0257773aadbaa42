# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit level (no host): the cuda role's repository files rendered for Ubuntu 22.04/24.04,
Debian 12 and RHEL/Rocky 9 with Ansible's own templar, compared with NVIDIA's documented lines.

Run alone with `.venv/bin/pytest molecule/cuda/tests/test_rendering_cuda.py`; Molecule's verifier
runs it too. Expected values follow NVIDIA's CUDA Installation Guide for Linux (network repo,
"cuda-keyring": /usr/share/keyrings/cuda-archive-keyring.gpg and
"deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://developer.download.nvidia.com/compute/cuda/repos/<distro>/x86_64/ /",
keys 3bf863cc.pub for ubuntu2204/ubuntu2404/debian12 and D42D0685.pub for rhel9, the
cuda-<distro>.pin file, "dnf module install nvidia-driver:<branch>-open|-dkms" on RHEL) and the
NVIDIA Container Toolkit install guide ("deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg]
https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /").
"""

import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "cuda")

FACTS = {
    "ubuntu2204": {"distribution": "Ubuntu", "os_family": "Debian", "distribution_version": "22.04",
                   "distribution_major_version": "22", "distribution_release": "jammy"},
    "ubuntu2404": {"distribution": "Ubuntu", "os_family": "Debian", "distribution_version": "24.04",
                   "distribution_major_version": "24", "distribution_release": "noble"},
    "debian12": {"distribution": "Debian", "os_family": "Debian", "distribution_version": "12.7",
                 "distribution_major_version": "12", "distribution_release": "bookworm"},
    "rhel9": {"distribution": "RedHat", "os_family": "RedHat", "distribution_version": "9.4",
              "distribution_major_version": "9", "distribution_release": "Plow"},
    "rocky9": {"distribution": "Rocky", "os_family": "RedHat", "distribution_version": "9.4",
               "distribution_major_version": "9", "distribution_release": "Blue Onyx"},
}


def _trust(data):
    if isinstance(data, str):
        return trust_as_template(data)
    if isinstance(data, list):
        return [_trust(item) for item in data]
    if isinstance(data, dict):
        return {key: _trust(item) for key, item in data.items()}
    return data


def _load(path):
    with open(path, encoding="utf-8") as handle:
        return _trust(yaml.safe_load(handle) or {})


def templar(os_name, **overrides):
    facts = dict(FACTS[os_name], kernel="6.8.0-45-generic", architecture="x86_64")
    names = [facts["distribution"], facts["os_family"]]
    os_file = next(os.path.join(ROLE, "vars", n + ".yml") for n in names if os.path.exists(os.path.join(ROLE, "vars", n + ".yml")))
    variables = {}
    for path in (os.path.join(ROLE, "defaults", "main.yml"), os.path.join(ROLE, "vars", "main.yml"), os_file):
        variables.update(_load(path))
    variables.update(overrides)
    variables.update(ansible_facts=facts, ansible_managed="Ansible managed", inventory_hostname="node1")
    return Templar(loader=DataLoader(), variables=variables)


def render(os_name, template, **overrides):
    with open(os.path.join(ROLE, "templates", template), encoding="utf-8") as handle:
        text = handle.read()
    out = templar(os_name, **overrides).template(trust_as_template(text))
    return [line for line in out.splitlines() if line and not line.startswith("#")]


def value(os_name, expression, **overrides):
    return templar(os_name, **overrides).template(trust_as_template("{{ %s }}" % expression))


BASE = "https://developer.download.nvidia.com/compute/cuda/repos"


@pytest.mark.parametrize("os_name,distro", [("ubuntu2204", "ubuntu2204"), ("ubuntu2404", "ubuntu2404"), ("debian12", "debian12")])
def test_apt_line_keyring_and_key_as_nvidia_documents(os_name, distro):
    assert render(os_name, "cuda.list.j2") == [
        "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] %s/%s/x86_64/ /" % (BASE, distro)]
    assert value(os_name, "__cuda_list_file") == "/etc/apt/sources.list.d/cuda-%s-x86_64.list" % distro
    assert value(os_name, "__cuda_key_url").strip() == "%s/%s/x86_64/3bf863cc.pub" % (BASE, distro)
    assert render(os_name, "cuda-pin.j2")[-3:] == ["Package: *", "Pin: release l=NVIDIA CUDA", "Pin-Priority: 600"]
    assert render(os_name, "nvidia-container-toolkit.list.j2") == [
        "deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] "
        "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /"]


@pytest.mark.parametrize("os_name", ["rhel9", "rocky9"])
def test_dnf_repository_and_module_stream(os_name):
    assert render(os_name, "cuda.repo.j2") == [
        "[cuda-rhel9-x86_64]", "name=cuda-rhel9-x86_64", "baseurl=%s/rhel9/x86_64" % BASE,
        "enabled=1", "gpgcheck=1", "gpgkey=%s/rhel9/x86_64/D42D0685.pub" % BASE]
    assert value(os_name, "__cuda_driver_packages") == ["@nvidia-driver:570-open"]
    assert value(os_name, "__cuda_driver_packages", cuda_driver_kernel_modules="proprietary") == ["@nvidia-driver:570-dkms"]
    assert value(os_name, "__cuda_nccl_packages") == ["libnccl", "libnccl-devel"]
    assert "baseurl=https://nvidia.github.io/libnvidia-container/stable/rpm/$basearch" in render(os_name, "nvidia-container-toolkit.repo.j2")


@pytest.mark.parametrize("branch,modules,expected", [
    ("570", "auto", ["nvidia-open-570"]), ("550", "auto", ["cuda-drivers-550"]),
    ("550", "open", ["nvidia-open-550"]), ("580", "proprietary", ["cuda-drivers-580"]),
])
def test_driver_branch_meta_package_on_apt(branch, modules, expected):
    assert value("ubuntu2204", "__cuda_driver_packages", cuda_driver_branch=branch, cuda_driver_kernel_modules=modules) == expected


def test_toolkit_dcgm_and_fabric_manager_names():
    assert value("debian12", "__cuda_toolkit_package") == "cuda-toolkit-12-8"
    assert value("debian12", "__cuda_dcgm_package") == "datacenter-gpu-manager-4-cuda12"
    assert value("ubuntu2404", "__cuda_fabric_manager_package") == "nvidia-fabricmanager-570"
    assert value("rhel9", "__cuda_fabric_manager_package") == "nvidia-fabric-manager"


def test_mirror_keeps_nvidias_layout():
    assert render("debian12", "cuda.list.j2", cuda_repo_base_url="http://mirror.example/cuda/") == [
        "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] http://mirror.example/cuda/debian12/x86_64/ /"]


@pytest.mark.parametrize("os_name,toolkit,ok", [
    ("ubuntu2404", "12.4", False), ("ubuntu2404", "12.8", True), ("debian12", "12.1", False), ("rhel9", "12.0", True),
])
def test_toolkit_per_os_used_by_preflight(os_name, toolkit, ok):
    assert value(os_name, "cuda_toolkit_version is version(__cuda_min_toolkit[__cuda_os_id], '>=')", cuda_toolkit_version=toolkit) is ok
