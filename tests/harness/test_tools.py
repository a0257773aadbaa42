# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab scripts say in one line what is missing when podman cannot run."""
import os
import subprocess

from conftest import ROOT


def _run_lab(tmp_path, podman_script):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    if podman_script is not None:
        stub = bindir / "podman"
        stub.write_text("#!/bin/sh\n" + podman_script)
        stub.chmod(0o755)
    # PATH holds only the stub folder and the basic tools: no real podman is reachable
    path = f"{bindir}:/usr/bin:/bin"
    env = dict(os.environ, PATH=path)
    if podman_script is None:
        assert subprocess.run(["sh", "-c", "command -v podman"], env=env, check=False).returncode != 0 or \
            not os.path.exists("/usr/bin/podman"), "cannot hide podman from this test"
    return subprocess.run([str(ROOT / "tools/lab.sh"), "up"], env=env, capture_output=True, text=True, check=False)


def test_lab_says_podman_cannot_run(tmp_path):
    # a podman that exists but cannot start containers, as in a sandbox without user namespaces
    result = _run_lab(tmp_path, "echo 'Error: cannot set up namespace using \"/usr/bin/newuidmap\": exit status 1' >&2\nexit 125\n")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines == ['lab: podman cannot run containers here: Error: cannot set up namespace using "/usr/bin/newuidmap": exit status 1']
    assert result.stdout == ""


def test_lab_up_is_refused_without_an_image(tmp_path):
    # podman works but the node image was never built
    result = _run_lab(tmp_path, 'case "$1 $2" in "image exists") exit 1;; esac\nexit 0\n')
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "lab: node image localhost/gpucluster-node:trixie is missing: run 'make setup' (tools/build-images.sh)"]


def test_podman_check_says_names_do_not_resolve(tmp_path):
    # podman runs containers, but a container cannot resolve another one's name (podman 4.3 CNI
    # without the dnsname plugin: what a fresh Debian 12 machine had before setup installed it)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    stub = bindir / "podman"
    stub.write_text('#!/bin/sh\ncase "$*" in *getent*) exit 2;; esac\nexit 0\n')
    stub.chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}:/usr/bin:/bin")
    result = subprocess.run([str(ROOT / "tools/podman-check.sh")], env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "podman-check: containers on a podman network cannot resolve each other's names (the test-double "
        "repository hosts are reached by name): install the CNI dnsname plugin with 'make setup' "
        "(Debian package golang-github-containernetworking-plugin-dnsname)"]
