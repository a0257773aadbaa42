# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Role gpucluster.training.slurm_common with a site Slurm repository, on Debian 12 containers.

The packages are TEST DOUBLES under SchedMD's names (no Slurm inside), served signed by
slurmrepo-repo; slurmrepo-node1 installed them (controller and compute node), slurmrepo-jammy
was refused in the preflight (its Slurm 21.08 test double on a SIMULATED cgroup v2 host).
"""
import pytest

REPO = "http://slurmrepo-repo"
PINNED = "23.11.10-1"
HELD = ["slurm-smd-client", "slurm-smd-slurmctld", "slurm-smd-slurmd", "slurm-smd-slurmdbd", "slurm-smd-libpam-slurm-adopt"]
KEYRING = "/etc/apt/keyrings/gpucluster-slurm.asc"
LIST = "deb [signed-by=%s] %s/slurm bookworm main" % (KEYRING, REPO)


@pytest.fixture
def node(host):
    if host.check_output("hostname") != "slurmrepo-node1":
        pytest.skip("site repository node only")
    return host


def body(text):
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("pkg", ["slurm-smd"] + HELD)
def test_pinned_version_installed(node, pkg):
    package = node.package(pkg)
    assert package.is_installed and package.version == PINNED, (pkg, package.version)
    note = node.file("/usr/share/doc/%s/TEST-DOUBLE" % pkg).content_string
    assert "TEST DOUBLE" in note


def test_repository_file_uses_signed_by_and_only_this_key(node):
    assert body(node.file("/etc/apt/sources.list.d/gpucluster-slurm.list").content_string) == [LIST]
    keyring = node.file(KEYRING)
    assert keyring.exists and keyring.user == "root" and keyring.mode == 0o644
    published = node.check_output("python3 -c \"import urllib.request; print(urllib.request.urlopen('%s/keys/slurm.asc').read().decode())\"" % REPO)
    assert keyring.content_string.strip() == published.strip() and "BEGIN PGP PUBLIC KEY BLOCK" in published
    # the key is trusted for this repository only, never globally
    trusted = node.run("ls /etc/apt/trusted.gpg.d/ /etc/apt/trusted.gpg 2>/dev/null").stdout
    assert "slurm" not in trusted, trusted


def test_pin_file(node):
    pref = body(node.file("/etc/apt/preferences.d/gpucluster-slurm").content_string)
    globs = "slurm* libslurm* libpam-slurm* libpmi*-slurm*"
    assert pref == ["Package: %s" % globs, "Pin: version %s" % PINNED, "Pin-Priority: 1001",
                    "Package: %s" % globs, "Pin: release *", "Pin-Priority: -1"], pref


def test_apt_policy_shows_the_pin(node):
    policy = node.check_output("apt-cache policy slurm-smd-client")
    print(policy)
    lines = [line.strip() for line in policy.splitlines()]
    assert "Installed: %s" % PINNED in lines and "Candidate: %s" % PINNED in lines, policy
    assert "*** %s 1001" % PINNED in lines, policy
    # the newer and the older build are in the index, and never taken
    assert "24.05.1-1 -1" in lines and "23.11.9-1 -1" in lines, policy
    assert "500 %s/slurm bookworm/main amd64 Packages" % REPO in lines, policy


def test_distribution_slurm_is_never_a_candidate(node):
    # Debian 12's own slurm-client (22.05.8) is in the package index: the pin refuses it
    policy = node.check_output("apt-cache policy slurm-client")
    print(policy)
    assert "Candidate: (none)" in policy and "22.05.8" in policy, policy


def test_packages_held(node):
    held = node.check_output("apt-mark showhold").split()
    print("apt-mark showhold:", " ".join(held))
    assert sorted(set(HELD) & set(held)) == sorted(HELD), held


def test_pam_slurm_adopt_from_the_site_repository(node):
    """slurm_common_packages.pam_adopt names SchedMD's package; sshd's account stack ends with it."""
    account = [line.split() for line in body(node.file("/etc/pam.d/sshd").content_string) if line.lstrip("-").startswith("account")]
    print(account)
    assert account[-1] == ["-account", "required", "pam_slurm_adopt.so", "action_no_jobs=deny"], account


def test_upgrade_moves_no_slurm_package(node):
    for cmd in ("apt-get -s upgrade", "apt-get -s dist-upgrade"):
        out = node.check_output(cmd)
        moved = [line for line in out.splitlines() if line.startswith(("Inst ", "Remv ")) and "slurm" in line]
        print(cmd, "->", [line for line in out.splitlines() if "upgraded" in line or "held back" in line])
        assert moved == [], out


# apt on its own source list, lists and cache (the node's own state is not touched): the role's
# line is accepted; a repository without signature, the right repository under another key, and
# the repository without signed-by (the key is not trusted globally) are refused.
APT_CASES = [
    ("role's line", LIST, True, ""),
    ("unsigned repository", "deb [signed-by=%s] %s/slurm-unsigned bookworm main" % (KEYRING, REPO), False, "is not signed"),
    ("wrong key", "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s/slurm bookworm main" % REPO, False, "NO_PUBKEY"),
    ("no signed-by", "deb %s/slurm bookworm main" % REPO, False, "NO_PUBKEY"),
]


@pytest.mark.parametrize("case,line,accepted,message", APT_CASES, ids=[c[0] for c in APT_CASES])
def test_apt_accepts_only_the_signed_repository(node, case, line, accepted, message):
    tmp = node.check_output("mktemp -d /tmp/slurm-apt-XXXX")
    node.check_output("mkdir -p %s/lists/partial %s/parts && echo '%s' > %s/sources.list && chmod -R go+rX %s"
                      % (tmp, tmp, line, tmp, tmp))
    result = node.run("apt-get update -o Dir::Etc::SourceList=%s/sources.list -o Dir::Etc::SourceParts=%s/parts "
                      "-o Dir::State::Lists=%s/lists -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=" % ((tmp,) * 3))
    node.run("rm -rf %s" % tmp)
    out = result.stdout + result.stderr
    print(case, "->", out.strip().splitlines()[-2:])
    if accepted:
        assert result.rc == 0 and "W:" not in out and "E:" not in out, out
    else:
        assert result.rc != 0 and message in out, out


def test_refused_host_was_not_changed(host):
    if host.check_output("hostname") != "slurmrepo-jammy":
        pytest.skip("refused node only")
    # the preflight failed before users, repository and packages
    assert not host.file("/etc/apt/sources.list.d/gpucluster-slurm.list").exists
    assert not host.file("/etc/apt/preferences.d/gpucluster-slurm").exists
    assert host.run("getent passwd slurm").rc != 0
    assert host.package("slurm-client").version == "21.08.5-2ubuntu1"


def test_first_install_held_daemon_starts_and_left_no_policy_behind(node):
    # converge took site.yml's path for a new host (slurm_common tasks/first_install.yml): every
    # package in one transaction with daemon starts held. munge (Debian's own package, which
    # starts munged when installed) is installed but was never started, and the hold is gone.
    assert node.package("munge").is_installed
    assert node.run("systemctl is-active munge").stdout.strip() != "active"
    assert not node.file("/usr/sbin/policy-rc.d").exists


def test_first_install_took_the_accounting_database_in_the_same_transaction(node):
    # slurmrepo-node1 is a controller with accounting on (the default): MariaDB and its Python
    # driver came in the first transaction (Debian's real packages), held like the others, and
    # one apt history entry installed them with the Slurm packages
    for pkg in ("mariadb-server", "python3-pymysql"):
        assert node.package(pkg).is_installed, pkg
    assert node.run("systemctl is-active mariadb").stdout.strip() != "active"
    history = node.file("/var/log/apt/history.log").content_string.split("Start-Date:")
    together = [entry for entry in history if "slurm-smd-client:" in entry and "mariadb-server:" in entry]
    assert len(together) == 1, history
