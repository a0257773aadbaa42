# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A shell task that sets pipefail names bash as its executable: the shell module runs /bin/sh,
which is dash on Debian and Ubuntu, where 'set -o pipefail' fails the task ("Illegal option -o
pipefail") before its command runs. Only a run on such a host shows it (ansible-lint asks for
pipefail, not for the shell that knows it)."""
import pytest
import yaml

from conftest import ROOT
from test_conditionals import FILES, tasks_of

SHELL = ("shell", "ansible.builtin.shell")


def without_bash(task):
    for module in SHELL:
        if module in task:
            args = task[module]
            cmd = args.get("cmd", "") if isinstance(args, dict) else args
            executable = (args.get("executable") if isinstance(args, dict) else None) or (task.get("args") or {}).get("executable", "")
            if "pipefail" in str(cmd) and not str(executable).endswith("bash"):
                return True
    return False


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_pipefail_runs_in_bash(path):
    bad = [task.get("name", "?") for task in tasks_of(yaml.safe_load(path.read_text()) or []) if without_bash(task)]
    assert not bad, "shell tasks that set pipefail without executable: /bin/bash: %s" % bad


def test_the_check_finds_pipefail_without_bash():
    tasks = yaml.safe_load("- name: a\n  ansible.builtin.shell: set -o pipefail; a | b\n"
                           "- name: b\n  ansible.builtin.shell: set -o pipefail; a | b\n  args:\n    executable: /bin/bash\n"
                           "- name: c\n  ansible.builtin.shell:\n    cmd: set -o pipefail; a | b\n    executable: /bin/bash\n")
    assert [t["name"] for t in tasks if without_bash(t)] == ["a"]
