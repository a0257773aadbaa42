# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpucluster.training.checks in a real playbook run: every failed check named, messages templated only on failure."""


def test_checks_action(run_playbook):
    result = run_playbook("tests/harness/playbooks/checks_action.yml", "-i", "localhost,", "-c", "local")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "ok=4" in out.split("PLAY RECAP")[-1], out
