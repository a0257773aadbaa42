# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Role gpucluster.training.cuda on two real Debian 12 containers.

Packages come from signed TEST-DOUBLE copies of NVIDIA's repositories served by cuda-repo; no GPU
exists here, so the driver is never loaded and GPU verification was SIMULATED in converge.
cuda-gpu1: open modules (auto, branch 570), Fabric Manager forced on, podman/CDI, DCGM.
cuda-gpu2: proprietary modules, Fabric Manager auto (no NVSwitch here), no container runtime.
"""
import re

import pytest

REPO_LINE = ("deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] "
             "http://cuda-repo/compute/cuda/repos/debian12/x86_64/ /")


def gpu1(host):
    return host.check_output("hostname") == "cuda-gpu1"


def body(content):
    return [line for line in content.splitlines() if line and not line.startswith("#")]


def test_keyring_is_dearmored_at_nvidias_path(host):
    keyring = host.file("/usr/share/keyrings/cuda-archive-keyring.gpg")
    assert keyring.exists and keyring.mode == 0o644
    assert "TEST DOUBLE repository key" in host.check_output(
        "gpg --show-keys --with-colons /usr/share/keyrings/cuda-archive-keyring.gpg")


def test_repository_line_as_cuda_keyring_writes_it(host):
    assert body(host.file("/etc/apt/sources.list.d/cuda-debian12-x86_64.list").content_string) == [REPO_LINE]


def test_pin_as_nvidias_pin_file(host):
    pin = body(host.file("/etc/apt/preferences.d/cuda-repository-pin-600").content_string)
    assert pin[-3:] == ["Package: *", "Pin: release l=NVIDIA CUDA", "Pin-Priority: 600"]
    policy = host.check_output("apt-cache policy libnccl2")
    assert "600 http://cuda-repo/compute/cuda/repos/debian12/x86_64  Packages" in policy, policy


def test_nccl_pinned_to_the_driver_branchs_cuda_major(host):
    # branch 570 is a CUDA 12 driver: the CUDA 12 NCCL build gets the pin's priority 1001, and
    # apt's candidate is that build (the test-double repository serves it under its real name)
    policy = host.check_output("apt-cache policy libnccl2")
    assert "Candidate: 2.26.2-1+cuda12.8" in policy, policy
    assert re.search(r"2\.26\.2-1\+cuda12\.8 1001", policy), policy


def test_driver_and_nccl_held_container_toolkit_not(host):
    held = host.check_output("apt-mark showhold").split()
    assert {"libnccl2", "libnccl-dev", "nvidia-persistenced"} <= set(held), held
    assert any(name.startswith(("nvidia-open-", "cuda-drivers-")) for name in held), held
    assert not any(name.startswith("nvidia-container-") for name in held), held


@pytest.mark.parametrize("pkg,version", [
    ("cuda-toolkit-12-8", "12.8.1-1"),
    ("libnccl2", "2.26.2-1+cuda12.8"),
    ("libnccl-dev", "2.26.2-1+cuda12.8"),
    ("nvidia-persistenced", "570.172.08-1"),
])
def test_toolkit_nccl_and_persistenced_installed(host, pkg, version):
    assert host.package(pkg).is_installed
    assert host.package(pkg).version == version


def test_driver_branch_and_kernel_module_flavour(host):
    open_meta, proprietary_meta = host.package("nvidia-open-570"), host.package("cuda-drivers-570")
    if gpu1(host):  # auto on branch 570: open kernel modules
        assert open_meta.is_installed and not proprietary_meta.is_installed
    else:           # cuda_driver_kernel_modules: proprietary
        assert proprietary_meta.is_installed and not open_meta.is_installed
    assert host.package("linux-headers-%s" % host.check_output("uname -r")).is_installed


def test_persistenced_enabled_for_boot_not_started_without_driver(host):
    service = host.service("nvidia-persistenced")
    assert service.is_enabled
    assert not service.is_running  # /proc/driver/nvidia does not exist in a container


def test_fabric_manager_only_where_asked_or_nvswitch_found(host):
    if gpu1(host):  # cuda_fabric_manager: always
        assert host.package("nvidia-fabricmanager-570").is_installed
        assert host.service("nvidia-fabricmanager").is_enabled
    else:           # auto, and this machine has no NVSwitch on its PCI bus
        assert not host.package("nvidia-fabricmanager-570").is_installed


def test_nouveau_blacklisted(host):
    conf = body(host.file("/etc/modprobe.d/blacklist-nouveau.conf").content_string)
    assert conf == ["blacklist nouveau", "options nouveau modeset=0"]


def test_ld_so_and_path(host):
    assert "/usr/local/cuda/lib64" in host.file("/etc/ld.so.conf.d/cuda.conf").content_string.splitlines()
    assert "/usr/local/cuda/lib64:" in host.run("ldconfig -v 2>/dev/null | grep '^/usr/local/cuda'").stdout
    assert host.run("bash -lc 'command -v nvcc'").stdout.strip() == "/usr/local/cuda/bin/nvcc"


def test_container_toolkit_for_podman_via_cdi(host):
    if not gpu1(host):
        assert not host.package("nvidia-container-toolkit").is_installed
        return
    assert host.package("nvidia-container-toolkit").is_installed
    line = body(host.file("/etc/apt/sources.list.d/nvidia-container-toolkit.list").content_string)
    assert line == ["deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] "
                    "http://cuda-repo/libnvidia-container/stable/deb/$(ARCH) /"]
    unit = host.file("/etc/systemd/system/gpucluster-nvidia-cdi.service").content_string
    assert "ExecStart=/usr/bin/nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml" in unit
    assert "ConditionPathExists=/proc/driver/nvidia/version" in unit
    assert host.service("gpucluster-nvidia-cdi").is_enabled


def test_dcgm_optional(host):
    if gpu1(host):
        assert host.package("datacenter-gpu-manager-4-cuda12").is_installed
        assert host.service("nvidia-dcgm").is_enabled
    else:
        assert not host.package("datacenter-gpu-manager-4-cuda12").is_installed


def test_reboot_pending_recorded_not_performed(host):
    reasons = host.file("/run/gpucluster/cuda-reboot-required").content_string.splitlines()
    assert "the NVIDIA driver was installed or upgraded" in reasons
    assert "nouveau blacklisted (initramfs)" in reasons
