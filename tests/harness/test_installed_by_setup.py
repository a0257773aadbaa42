# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Nothing the lab and the suite run may come from this machine's history.

Every external command named in the project's scripts (tools/*.sh, .ci/run, the Makefile) must
come from a Debian package that tools/setup.sh installs (or one of their dependencies), or from
the base system (Essential or Priority: required). A command found only because someone once
installed it here (a Debian package setup does not name, or a file no package owns) fails.
"""
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

SCRIPTS = sorted(ROOT.glob("tools/*.sh")) + [ROOT / ".ci/run", ROOT / "Makefile"]
# Provided by python3-venv's dependencies on Debian; on some machines a python3 outside dpkg
# (pyenv) answers first, which is fine: setup.sh creates .venv from whichever it finds.
PYTHON = {"python3", "python3.11", "python"}


def _setup_packages():
    text = (ROOT / "tools/setup.sh").read_text()
    block = re.search(r"need_pkgs=\(([^)]*)\)", text).group(1)
    return set(block.split())


def _closure(packages):
    """The packages and everything they depend on (as apt would install them)."""
    out = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                          "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *sorted(packages)],
                         capture_output=True, text=True, check=False).stdout
    names = set(packages)
    for line in out.splitlines():
        line = line.strip().lstrip("|")
        if line.startswith(("Depends:", "PreDepends:")):
            names.add(line.split(":", 1)[1].strip().strip("<>").split(":")[0])
        elif line and not line.startswith(("Depends", "PreDepends")) and ":" not in line:
            names.add(line.split(":")[0])
    return names


def _base_system():
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Essential} ${Priority}\n"],
                         capture_output=True, text=True, check=True).stdout
    return {f[0] for f in (line.split() for line in out.splitlines()) if len(f) == 3 and (f[1] == "yes" or f[2] == "required")}


# A word in command position: at the start of a line or recipe, or after | & ; ( ! $( ` and
# after the words that run the next word (exec, xargs, sudo-like wrappers, if/then/do...).
_LEAD = r"(?:^|[|&;(!`]|\$\(|\b(?:exec|then|do|else|if|while|until|time|command|xargs(?: -\S+)*(?: \S+)?|env(?: \S+=\S*)*))\s*"
_COMMAND = re.compile(_LEAD + r"([a-z][a-z0-9_.+-]*[a-z0-9])(?=\s|$|;|\))")


def _commands():
    words = set()
    for path in SCRIPTS:
        for line in path.read_text().splitlines():
            if line.lstrip().startswith("#"):
                continue
            code = re.sub(r"\s#.*$", "", line).strip()
            # text in quotes is an argument (a message, a pattern), not a command
            code = re.sub(r"'[^']*'|\"[^\"]*\"", "''", code)
            words.update(_COMMAND.findall(code))
    builtins = set(subprocess.run(["bash", "-c", "compgen -bk"], capture_output=True, text=True, check=False).stdout.split())
    found = {}
    for word in sorted(words - builtins):
        path = shutil.which(word, path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
        if path:
            found[word] = path
    return found


def _owners(paths):
    """Owning Debian package of each path (merged /usr: /usr/bin/x may be known as /bin/x)."""
    candidates = {}
    for path in paths:
        alt = [path, path.replace("/usr/bin/", "/bin/").replace("/usr/sbin/", "/sbin/")]
        alt.append(subprocess.run(["readlink", "-f", path], capture_output=True, text=True, check=False).stdout.strip())
        candidates[path] = [a for a in dict.fromkeys(alt) if a]
    out = subprocess.run(["dpkg", "-S", *sorted({a for alts in candidates.values() for a in alts})],
                         capture_output=True, text=True, check=False).stdout
    owner_of = {}
    for line in out.splitlines():
        pkgs, _sep, file = line.partition(": ")
        owner_of[file.strip()] = pkgs.split(",")[0].split(":")[0].strip()
    return {path: next((owner_of[a] for a in alts if a in owner_of), None) for path, alts in candidates.items()}


@pytest.mark.skipif(shutil.which("dpkg") is None, reason="needs a Debian machine (dpkg)")
def test_every_command_the_scripts_run_is_installed_by_setup_or_the_base_system():
    allowed = _closure(_setup_packages()) | _base_system()
    commands = _commands()
    assert {"podman", "debootstrap", "git", "make"} <= set(commands), sorted(commands)
    owners = _owners(commands.values())
    problems = []
    for word, path in sorted(commands.items()):
        if word in PYTHON:
            continue
        owner = owners[path]
        if owner is None:
            problems.append("%s (%s): no Debian package owns it" % (word, path))
        elif owner not in allowed:
            problems.append("%s: from Debian package %s, which tools/setup.sh does not install" % (word, owner))
    print("commands checked: %s" % ", ".join("%s<-%s" % (w, owners[p]) for w, p in sorted(commands.items()) if w not in PYTHON))
    assert not problems, problems
