# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""slurm_compute's registration check when a node never registers (issue 16's one sinfo per play):
the real role tasks, with a test double for the controller's sinfo. The Molecule scenarios show the
path where every node registers, on real Slurm; this shows the failure path, which they cannot reach
without breaking a node's slurmd for the whole scenario."""

import stat


def _run_with_sinfo(run_playbook, tmp_path, body):
    """The playbook with a sinfo whose shell body is ``body``; its arguments logged to tmp_path/calls."""
    fake = tmp_path / "bin"
    fake.mkdir()
    sinfo = fake / "sinfo"
    sinfo.write_text("#!/bin/sh\necho \"$*\" >> %s\n%s\n" % (tmp_path / "calls", body))
    sinfo.chmod(sinfo.stat().st_mode | stat.S_IEXEC)
    return run_playbook("tests/harness/playbooks/slurm_registration.yml", "-i", "tests/harness/inventories/slurm-render/hosts.yml",
                        "-e", "fake_bin=%s" % fake)


def test_a_node_that_never_registers_fails_alone(run_playbook, tmp_path):
    # what sinfo --format '%n|%t|%E' prints: gpu1 drained by an operator, gpu2 silent (state idle*)
    result = _run_with_sinfo(run_playbook, tmp_path, "printf 'gpu1|drain|disk swap, ops\\ngpu2|idle*|Not responding\\n'")
    calls = tmp_path / "calls"
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    recap = out.split("PLAY RECAP")[-1]
    assert [line.split()[0] for line in recap.splitlines() if "failed=1" in line] == ["gpu2"], out
    assert "gpu1" in recap and "failed=0" in recap.split("gpu1", 1)[1].splitlines()[0], out
    # gpu2's own state and reason; the drained gpu1 reported, left as it is
    assert "node gpu2 did not register with slurmctld within 2 s: Slurm says state=idle* reason=Not responding" in out, out
    assert "gpu1 is drain in Slurm (reason: disk swap, ops): left as it is" in out, out
    # one sinfo for both nodes each time it was asked (retries), never one per node
    asked = calls.read_text().splitlines()
    assert asked and set(asked) == {"--noheader --nodes gpu[1-2] --format %n|%t|%E"}, asked
    # the registrations parsed once for the play on the failure path too (run_once), not per node
    assert out.count("TASK [gpucluster.training.slurm_compute : Each compute node's state in Slurm, from that one sinfo]") == 1, out


def test_controller_unreachable_by_sinfo_fails_each_node_with_the_reason(run_playbook, tmp_path):
    result = _run_with_sinfo(run_playbook, tmp_path, "echo 'slurm_load_node: Unable to contact slurm controller (connect failure)' >&2; exit 1")
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    recap = out.split("PLAY RECAP")[-1]
    assert sorted(line.split()[0] for line in recap.splitlines() if "failed=1" in line) == ["gpu1", "gpu2"], out
    for node in ("gpu1", "gpu2"):
        assert ("node %s did not register with slurmctld within 2 s: Slurm says state=unknown reason=; sinfo on ctl1 failed: "
                "slurm_load_node: Unable to contact slurm controller (connect failure)" % node) in out, out
