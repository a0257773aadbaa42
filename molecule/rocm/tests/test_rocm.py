# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Role gpucluster.training.rocm on two real Debian 12 containers.

Packages come from signed TEST-DOUBLE copies of AMD's repositories served by rocm-repo; no GPU
exists here, so the driver is never loaded and GPU verification was SIMULATED in converge.
"""
import pytest

AMD_VERSIONS = {
    "rocminfo": "1.0.0.60400-47~22.04",
    "rocm-hip-sdk": "6.4.0.60400-47~22.04",
    "rocm-opencl-sdk": "6.4.0.60400-47~22.04",
    "rccl": "2.22.3.60400-47~22.04",
    "amdgpu-dkms": "1:6.12.12.60400-2147987.22.04",
}


def hostname(host):
    return host.check_output("hostname")


def test_signing_key_is_a_dearmored_keyring(host):
    keyring = host.file("/etc/apt/keyrings/rocm.gpg")
    assert keyring.exists and keyring.mode == 0o644 and keyring.user == "root"
    # binary OpenPGP (what gpg --dearmor writes), not ASCII armor
    assert "BEGIN PGP" not in host.check_output("head -c 64 /etc/apt/keyrings/rocm.gpg | od -c")
    listing = host.check_output("gpg --show-keys --with-colons /etc/apt/keyrings/rocm.gpg")
    assert "TEST DOUBLE repository key" in listing


@pytest.mark.parametrize("name,line", [
    ("amdgpu", "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] http://rocm-repo/amdgpu/6.4/ubuntu jammy main"),
    ("rocm", "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] http://rocm-repo/rocm/apt/6.4 jammy main"),
])
def test_repository_files_use_amds_format_and_the_mirror(host, name, line):
    lines = [entry for entry in host.file("/etc/apt/sources.list.d/%s.list" % name).content_string.splitlines()
             if entry and not entry.startswith("#")]
    assert lines == [line]


def test_pin_file_as_amd_documents(host):
    pin = host.file("/etc/apt/preferences.d/rocm-pin-600").content_string
    body = [entry for entry in pin.splitlines() if entry and not entry.startswith("#")]
    assert body == ["Package: *", "Pin: release o=repo.radeon.com", "Pin-Priority: 600"]


def test_apt_verifies_the_signature_and_applies_the_pin(host):
    policy = host.check_output("apt-cache policy rocminfo")
    assert "600 http://rocm-repo/rocm/apt/6.4 jammy/main" in policy, policy
    # Debian 12's own rocminfo has a higher version; only the pin makes AMD's the candidate.
    assert "Candidate: %s" % AMD_VERSIONS["rocminfo"] in policy, policy
    assert "5.2.3" in policy, policy


@pytest.mark.parametrize("pkg", sorted(AMD_VERSIONS))
def test_packages_installed_from_amds_repository(host, pkg):
    package = host.package(pkg)
    assert package.is_installed
    assert package.version == AMD_VERSIONS[pkg]


def test_headers_of_the_running_kernel_installed(host):
    assert host.package("linux-headers-%s" % host.check_output("uname -r")).is_installed


def test_trainer_in_render_and_video(host):
    groups = host.user("trainer").groups
    assert "render" in groups and "video" in groups


def test_ld_so_and_path(host):
    conf = host.file("/etc/ld.so.conf.d/rocm.conf").content_string.splitlines()
    assert "/opt/rocm/lib" in conf and "/opt/rocm/lib64" in conf
    scanned = host.run("ldconfig -v 2>/dev/null | grep '^/opt/rocm'").stdout
    assert "/opt/rocm/lib:" in scanned, scanned
    path = host.run("su - trainer -c 'echo $PATH'").stdout.strip()
    assert "/opt/rocm/bin" in path.split(":"), path
    assert host.run("su - trainer -c 'command -v rocm-smi || command -v rocminfo'").stdout.strip().startswith("/opt/rocm/bin/")


def test_numa_balancing_off_in_sysctl_file(host):
    conf = host.file("/etc/sysctl.d/61-gpucluster-rocm.conf").content_string.splitlines()
    assert "kernel.numa_balancing=0" in conf


def test_iommu_pt_on_the_grub_command_line(host):
    dropin = host.file("/etc/default/grub.d/60-gpucluster-rocm.cfg")
    if hostname(host) == "rocm-gpu2":  # rocm_iommu_pt: false there
        assert not dropin.exists
        return
    assert 'GRUB_CMDLINE_LINUX="${GRUB_CMDLINE_LINUX} iommu=pt"' in dropin.content_string.splitlines()
    # the drop-in is valid shell that grub-mkconfig can source
    out = host.check_output("sh -c 'GRUB_CMDLINE_LINUX=quiet; . /etc/default/grub.d/60-gpucluster-rocm.cfg; echo $GRUB_CMDLINE_LINUX'")
    assert out == "quiet iommu=pt"


def test_perf_determinism_unit_runs_rocm_smi_at_boot(host):
    unit = host.file("/etc/systemd/system/gpucluster-rocm-perf-determinism.service")
    if hostname(host) == "rocm-gpu2":  # rocm_perf_determinism_mhz: 0 there
        assert not unit.exists
        return
    assert "ExecStart=/opt/rocm/bin/rocm-smi --setperfdeterminism 1900" in unit.content_string
    service = host.service("gpucluster-rocm-perf-determinism")
    assert service.is_enabled
    assert service.systemd_properties["ActiveState"] == "active"
    assert "WantedBy=multi-user.target" in unit.content_string
    # the stand-in rocm-smi recorded the call the unit made
    log = host.file("/var/log/gpucluster-test-doubles/rocm-smi.log").content_string
    assert "rocm-smi --setperfdeterminism 1900" in log


def test_reboot_pending_recorded_not_performed(host):
    marker = host.file("/run/gpucluster/rocm-reboot-required")
    assert marker.exists
    reasons = marker.content_string.splitlines()
    assert "amdgpu-dkms was installed or upgraded" in reasons
    if hostname(host) == "rocm-gpu1":
        assert "kernel command line changed (iommu=pt)" in reasons
    else:
        assert "kernel command line changed (iommu=pt)" not in reasons
    # the container was not rebooted: systemd has been up since before converge
    assert host.file("/etc/apt/sources.list.d/rocm.list").exists
