# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpucluster.training.template renders what ansible.builtin.template's lookup renders (trim_blocks,
trailing newlines, backslashes, include, template_vars, ansible_managed, a file that is one
expression), in a real playbook run. The roles compare the files they manage by the SHA-1 of this
text, so a difference of one byte would be drift on every host."""


def test_template_lookup_renders_as_the_builtin(run_playbook):
    result = run_playbook("tests/harness/playbooks/template_lookup.yml", "-i", "localhost,", "-c", "local")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "ok=3" in out.split("PLAY RECAP")[-1], out
