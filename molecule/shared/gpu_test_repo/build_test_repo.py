# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the signed TEST-DOUBLE apt repositories the rocm, cuda and slurm-repo Molecule scenarios install from.

Runs inside the scenario's repository container (Debian, with dpkg-deb, apt-ftparchive and gpg):

    python3 build_test_repo.py spec.json

The spec (rendered by molecule/shared/gpu_test_repo.yml) names the web root, the files the
public key is exported to, and the repositories with their packages. Every package is a stand-in
with a real package name and a Description that says it is a test double; it ships only the small
files the spec lists. The signing key is generated here, once per container, and never leaves
the test. A repository with ``signed: false`` gets no InRelease/Release.gpg: apt must refuse it
(the slurm-repo scenario checks that).
"""

import json
import os
import shutil
import subprocess
import sys

NOTE = "TEST DOUBLE built by gpucluster.training Molecule tests; not the real package"


def run(argv, **kwargs):
    subprocess.run(argv, check=True, **kwargs)


def gpg(home, *args, **kwargs):
    run(["gpg", "--homedir", home, "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", ""] + list(args), **kwargs)


def ensure_key(home, uid):
    os.makedirs(home, mode=0o700, exist_ok=True)
    listed = subprocess.run(["gpg", "--homedir", home, "--batch", "--list-secret-keys", "--with-colons"],
                            capture_output=True, text=True, check=False)
    if "sec:" not in listed.stdout:
        gpg(home, "--quick-gen-key", uid, "ed25519", "sign", "never")


def build_package(pkg, pool):
    name, version = pkg["name"], pkg["version"]
    arch = pkg.get("arch", "amd64")
    tree = os.path.join(pool, ".build", name)
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(os.path.join(tree, "DEBIAN"))
    control = [
        "Package: %s" % name,
        "Version: %s" % version,
        "Architecture: %s" % arch,
        "Maintainer: gpucluster.training tests <tests@invalid>",
        "Section: misc",
        "Priority: optional",
    ]
    if pkg.get("depends"):
        control.append("Depends: %s" % pkg["depends"])
    control.append("Description: %s" % pkg.get("summary", name + " stand-in"))
    control.append(" " + NOTE + ".")
    with open(os.path.join(tree, "DEBIAN", "control"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(control) + "\n")
    for script in ("postinst", "prerm"):
        if pkg.get(script):
            path = os.path.join(tree, "DEBIAN", script)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("#!/bin/sh\nset -e\n" + pkg[script] + "\n")
            os.chmod(path, 0o755)
    for path, spec in pkg.get("files", {}).items():
        dest = os.path.join(tree, path.lstrip("/"))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as handle:
            handle.write(spec["content"])
        os.chmod(dest, int(spec.get("mode", "0644"), 8))
    for path, target in pkg.get("links", {}).items():
        dest = os.path.join(tree, path.lstrip("/"))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        os.symlink(target, dest)
    deb = os.path.join(pool, "%s_%s_%s.deb" % (name, version.split(":")[-1], arch))
    run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, deb], stdout=subprocess.DEVNULL)
    shutil.rmtree(tree)


def release(directory, repo, extra):
    options = []
    fields = {"Origin": repo["origin"], "Label": repo["label"], "Description": "%s: %s" % (NOTE, repo["path"])}
    fields.update(extra)
    for key, value in fields.items():
        options += ["-o", "APT::FTPArchive::Release::%s=%s" % (key, value)]
    result = subprocess.run(["apt-ftparchive"] + options + ["release", "."], cwd=directory,
                            capture_output=True, text=True, check=True)
    with open(os.path.join(directory, "Release"), "w", encoding="utf-8") as handle:
        handle.write(result.stdout)


def sign(home, directory):
    for name in ("InRelease", "Release.gpg"):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            os.unlink(path)
    gpg(home, "--clearsign", "--output", os.path.join(directory, "InRelease"), os.path.join(directory, "Release"))
    gpg(home, "--armor", "--detach-sign", "--output", os.path.join(directory, "Release.gpg"), os.path.join(directory, "Release"))


def build_repo(home, root, repo):
    base = os.path.join(root, repo["path"])
    shutil.rmtree(base, ignore_errors=True)
    if repo.get("layout", "dists") == "flat":
        os.makedirs(base)
        for pkg in repo["packages"]:
            build_package(pkg, base)
        packages = subprocess.run(["apt-ftparchive", "packages", "."], cwd=base, capture_output=True, text=True, check=True)
        with open(os.path.join(base, "Packages"), "w", encoding="utf-8") as handle:
            handle.write(packages.stdout)
        release(base, repo, {})
        if repo.get("signed", True):
            sign(home, base)
        return
    suite, component = repo["suite"], repo.get("component", "main")
    pool = os.path.join(base, "pool", component)
    os.makedirs(pool)
    for pkg in repo["packages"]:
        build_package(pkg, pool)
    binary = os.path.join(base, "dists", suite, component, "binary-amd64")
    os.makedirs(binary)
    packages = subprocess.run(["apt-ftparchive", "packages", os.path.join("pool", component)], cwd=base,
                              capture_output=True, text=True, check=True)
    with open(os.path.join(binary, "Packages"), "w", encoding="utf-8") as handle:
        handle.write(packages.stdout)
    release(os.path.join(base, "dists", suite), repo,
            {"Suite": suite, "Codename": suite, "Components": component, "Architectures": "amd64"})
    if repo.get("signed", True):
        sign(home, os.path.join(base, "dists", suite))


def main(argv):
    with open(argv[1], encoding="utf-8") as handle:
        spec = json.load(handle)
    root = spec["root"]
    home = spec.get("gnupghome", "/var/lib/gpu-test-repo/gnupg")
    ensure_key(home, spec["key_uid"])
    os.makedirs(root, exist_ok=True)
    for repo in spec["repos"]:
        build_repo(home, root, repo)
    armored = subprocess.run(["gpg", "--homedir", home, "--batch", "--armor", "--export"],
                             capture_output=True, text=True, check=True).stdout
    for path in spec["key_files"]:
        dest = os.path.join(root, path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as handle:
            handle.write(armored)
    print("built %d test-double repositories under %s" % (len(spec["repos"]), root))


if __name__ == "__main__":
    main(sys.argv)
