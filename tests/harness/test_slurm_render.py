# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""slurm_common renders slurm.conf once per play and gres.conf once per set of installed GPU plugins
(issue 16), and each host still gets the gres.conf of its own plugins."""


def test_slurm_files_rendered_once_per_play(run_playbook, tmp_path):
    (tmp_path / "gpu1").mkdir()
    (tmp_path / "gpu1" / "gpu_nvml.so").write_bytes(b"")
    (tmp_path / "gpu2").mkdir()
    result = run_playbook("tests/harness/playbooks/slurm_render.yml", "-i", "tests/harness/inventories/slurm-render/hosts.yml",
                          "-e", "render_plugins_root=%s" % tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    recap = out.split("PLAY RECAP")[-1]
    assert "gpu1" in recap and "gpu2" in recap and "failed=0" in recap, out
    # rendered by one host for the play (run_once), gres.conf once per set of plugins
    assert out.count("TASK [gpucluster.training.slurm_common : Render gres.conf once for each set") == 1, out
