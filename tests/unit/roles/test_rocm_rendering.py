# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit level (no host): the rocm role's repository files rendered for Ubuntu 22.04/24.04,
Debian 12 and RHEL/Rocky 9 with Ansible's own templar, compared with AMD's documented lines.

The fixture ``templates`` (tests/unit/roles/conftest.py) renders. Expected lines are copied
from AMD's install pages
(ROCm/rocm-install-on-linux, docs/install/install-methods/package-manager/package-manager-ubuntu.rst,
-debian.rst and -rhel.rst, ROCm 6.x; docs/conf.py: Debian 12 registers the "jammy" suite):

    deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/amdgpu/|rocm_version|/ubuntu <release> main
    deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/|rocm_version| <release> main
    Package: * / Pin: release o=repo.radeon.com / Pin-Priority: 600   (/etc/apt/preferences.d/rocm-pin-600)
    [amdgpu] baseurl=https://repo.radeon.com/amdgpu/|rocm_version|/el/<9.x>/main/x86_64/ priority=50 gpgcheck=1
    [ROCm-|rocm_version|] baseurl=https://repo.radeon.com/rocm/el9/|rocm_version|/main
"""

import pytest

ROLE = "rocm"


@pytest.mark.parametrize("os_name,suite", [("ubuntu2204", "jammy"), ("ubuntu2404", "noble"), ("debian12", "jammy")])
def test_apt_lines_match_amds_documented_format(templates, os_name, suite):
    assert templates.render(os_name, "amdgpu.list.j2") == [
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/amdgpu/6.4/ubuntu %s main" % suite]
    assert templates.render(os_name, "rocm.list.j2") == [
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/6.4 %s main" % suite]
    assert templates.render(os_name, "rocm-pin.j2") == ["Package: *", "Pin: release o=repo.radeon.com", "Pin-Priority: 600"]
    assert templates.value(os_name, "__rocm_keyring") == "/etc/apt/keyrings/rocm.gpg"
    assert templates.value(os_name, "__rocm_key_url") == "https://repo.radeon.com/rocm/rocm.gpg.key"


@pytest.mark.parametrize("os_name", ["rhel9", "rocky9"])
def test_dnf_repositories_match_amds_documented_format(templates, os_name):
    assert templates.render(os_name, "amdgpu.repo.j2") == [
        "[amdgpu]", "name=amdgpu", "baseurl=https://repo.radeon.com/amdgpu/6.4/el/9.4/main/x86_64/",
        "enabled=1", "priority=50", "gpgcheck=1", "gpgkey=https://repo.radeon.com/rocm/rocm.gpg.key"]
    assert templates.render(os_name, "rocm.repo.j2") == [
        "[ROCm-6.4]", "name=ROCm6.4", "baseurl=https://repo.radeon.com/rocm/el9/6.4/main",
        "enabled=1", "priority=50", "gpgcheck=1", "gpgkey=https://repo.radeon.com/rocm/rocm.gpg.key"]
    assert templates.value(os_name, "__rocm_kernel_header_packages") == ["kernel-headers-6.8.0-45-generic", "kernel-devel-6.8.0-45-generic"]


def test_mirror_keeps_amds_layout(templates):
    lines = templates.render("ubuntu2204", "rocm.list.j2", rocm_repo_base_url="http://mirror.example/amd/", rocm_version="6.3.2")
    assert lines == ["deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] http://mirror.example/amd/rocm/apt/6.3.2 jammy main"]
    assert templates.value("rhel9", "__rocm_key_url", rocm_repo_base_url="http://mirror.example/amd") == "http://mirror.example/amd/rocm/rocm.gpg.key"


@pytest.mark.parametrize("os_name,release,supported", [
    ("ubuntu2204", "6.4", True), ("ubuntu2404", "6.1", False), ("debian12", "6.2", False),
    ("debian12", "6.4.1", True), ("rhel9", "6.3", True), ("rocky9", "7.0", False),
])
def test_support_matrix_used_by_preflight(templates, os_name, release, supported):
    expr = "__rocm_release in __rocm_supported_releases[__rocm_os_id] | default([])"
    assert templates.value(os_name, expr, rocm_version=release) is supported


def test_ubuntu_headers_include_modules_extra(templates):
    assert templates.value("ubuntu2404", "__rocm_kernel_header_packages") == [
        "linux-headers-6.8.0-45-generic", "linux-modules-extra-6.8.0-45-generic"]
