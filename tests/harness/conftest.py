# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared helpers for tests that run the project's own scripts and playbooks on this machine."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def run_playbook():
    """Run ansible-playbook from the repository root; returns the CompletedProcess."""
    def _run(*args, extra_env=None):
        env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
        env.update(extra_env or {})
        return subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
    return _run
