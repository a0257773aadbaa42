# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit level (no host): the rocm role's repository files rendered for Ubuntu 22.04/24.04,
Debian 12 and RHEL/Rocky 9 with Ansible's own templar, compared with AMD's documented lines.

Run alone with `.venv/bin/pytest molecule/rocm/tests/test_rendering_rocm.py`; Molecule's
verifier runs it too. Expected lines are copied from AMD's install pages
(ROCm/rocm-install-on-linux, docs/install/install-methods/package-manager/package-manager-ubuntu.rst,
-debian.rst and -rhel.rst, ROCm 6.x; docs/conf.py: Debian 12 registers the "jammy" suite):

    deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/amdgpu/|rocm_version|/ubuntu <release> main
    deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/|rocm_version| <release> main
    Package: * / Pin: release o=repo.radeon.com / Pin-Priority: 600   (/etc/apt/preferences.d/rocm-pin-600)
    [amdgpu] baseurl=https://repo.radeon.com/amdgpu/|rocm_version|/el/<9.x>/main/x86_64/ priority=50 gpgcheck=1
    [ROCm-|rocm_version|] baseurl=https://repo.radeon.com/rocm/el9/|rocm_version|/main
"""
import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "rocm")

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


@pytest.mark.parametrize("os_name,suite", [("ubuntu2204", "jammy"), ("ubuntu2404", "noble"), ("debian12", "jammy")])
def test_apt_lines_match_amds_documented_format(os_name, suite):
    assert render(os_name, "amdgpu.list.j2") == [
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/amdgpu/6.4/ubuntu %s main" % suite]
    assert render(os_name, "rocm.list.j2") == [
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/6.4 %s main" % suite]
    assert render(os_name, "rocm-pin.j2") == ["Package: *", "Pin: release o=repo.radeon.com", "Pin-Priority: 600"]
    assert value(os_name, "__rocm_keyring") == "/etc/apt/keyrings/rocm.gpg"
    assert value(os_name, "__rocm_key_url") == "https://repo.radeon.com/rocm/rocm.gpg.key"


@pytest.mark.parametrize("os_name", ["rhel9", "rocky9"])
def test_dnf_repositories_match_amds_documented_format(os_name):
    assert render(os_name, "amdgpu.repo.j2") == [
        "[amdgpu]", "name=amdgpu", "baseurl=https://repo.radeon.com/amdgpu/6.4/el/9.4/main/x86_64/",
        "enabled=1", "priority=50", "gpgcheck=1", "gpgkey=https://repo.radeon.com/rocm/rocm.gpg.key"]
    assert render(os_name, "rocm.repo.j2") == [
        "[ROCm-6.4]", "name=ROCm6.4", "baseurl=https://repo.radeon.com/rocm/el9/6.4/main",
        "enabled=1", "priority=50", "gpgcheck=1", "gpgkey=https://repo.radeon.com/rocm/rocm.gpg.key"]
    assert value(os_name, "__rocm_kernel_header_packages") == ["kernel-headers-6.8.0-45-generic", "kernel-devel-6.8.0-45-generic"]


def test_mirror_keeps_amds_layout():
    lines = render("ubuntu2204", "rocm.list.j2", rocm_repo_base_url="http://mirror.example/amd/", rocm_version="6.3.2")
    assert lines == ["deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] http://mirror.example/amd/rocm/apt/6.3.2 jammy main"]
    assert value("rhel9", "__rocm_key_url", rocm_repo_base_url="http://mirror.example/amd") == "http://mirror.example/amd/rocm/rocm.gpg.key"


@pytest.mark.parametrize("os_name,release,supported", [
    ("ubuntu2204", "6.4", True), ("ubuntu2404", "6.1", False), ("debian12", "6.2", False),
    ("debian12", "6.4.1", True), ("rhel9", "6.3", True), ("rocky9", "7.0", False),
])
def test_support_matrix_used_by_preflight(os_name, release, supported):
    expr = "__rocm_release in __rocm_supported_releases[__rocm_os_id] | default([])"
    assert value(os_name, expr, rocm_version=release) is supported


def test_ubuntu_headers_include_modules_extra():
    assert value("ubuntu2404", "__rocm_kernel_header_packages") == [
        "linux-headers-6.8.0-45-generic", "linux-modules-extra-6.8.0-45-generic"]
