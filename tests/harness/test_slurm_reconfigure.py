# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""slurm_common's reconfigure handler when slurmctld refuses the new configuration, and when it is
not running: the real role tasks, with test doubles for scontrol (refuses the first reconfigure,
accepts the second) and systemctl (slurmctld active or not). No Molecule scenario reaches the
refusal: the configuration is checked by slurmd -C / the accept rules before it is written."""

import json
import stat

import pytest


def _fake(directory, name, body):
    tool = directory / name
    tool.write_text("#!/bin/sh\n" + body)
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)


def _reconfigure(run_playbook, tmp_path, scontrol, systemctl):
    """The handler's body on a new slurm.conf with a backup of the previous one; scontrol and
    systemctl are the doubles' shell bodies, formatted with calls (the file each call is logged to)
    and conf (the slurm.conf directory). Returns the output, the return code, conf and calls."""
    conf = tmp_path / "etc"
    conf.mkdir()
    (conf / "slurm.conf").write_text("ClusterName=new\n")
    (conf / "slurm.conf.bak").write_text("ClusterName=previous\n")
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "calls"
    _fake(fake, "scontrol", scontrol.format(calls=calls, conf=conf))
    _fake(fake, "systemctl", systemctl.format(calls=calls, conf=conf))
    result = run_playbook("tests/harness/playbooks/slurm_reconfigure.yml", "-i", "tests/harness/inventories/slurm-render/hosts.yml",
                          "-e", "fake_bin=%s conf_dir=%s" % (fake, conf), "-e", "__slurm_common_reconfigure_retries=1")
    return result.stdout + result.stderr, result.returncode, conf, calls


def test_refused_configuration_is_rolled_back_and_every_host_fails(run_playbook, tmp_path):
    out, returncode, conf, calls = _reconfigure(
        run_playbook, tmp_path,
        scontrol="echo \"$*\" >> {calls}\n"
                 "grep -q ClusterName=new {conf}/slurm.conf && {{ echo 'scontrol: error: Invalid argument' >&2; exit 1; }}\nexit 0\n",
        systemctl="exit 0\n")  # slurmctld is active
    assert returncode == 2, out
    assert (conf / "slurm.conf").read_text() == "ClusterName=previous\n", out
    # refused twice (retries=1), then the restored file accepted
    assert calls.read_text().splitlines() == ["reconfigure"] * 3, out
    recap = out.split("PLAY RECAP")[-1]
    assert sorted(line.split()[0] for line in recap.splitlines() if "failed=1" in line) == ["ctl1", "gpu1", "gpu2"], out
    assert "still in the play" not in out, out
    assert "slurmctld refused the new configuration (scontrol reconfigure: scontrol: error: Invalid argument)" in out, out
    assert "The previous slurm.conf was restored from %s/slurm.conf.bak and reconfigured" % conf in out, out


def test_stopped_slurmctld_is_not_asked_and_nothing_is_put_back(run_playbook, tmp_path):
    """A slurmctld an operator stopped, with a changed slurm.conf: scontrol reconfigure cannot reach
    it, which before failed every retry and put the previous file back as if slurmctld had refused
    the new one. Now it is not asked: the new file stays, for slurmctld to read when it starts."""
    out, returncode, conf, calls = _reconfigure(run_playbook, tmp_path, scontrol="echo \"$*\" >> {calls}\nexit 1\n",
                                                systemctl="echo \"$*\" >> {calls}\nexit 3\n")  # inactive
    assert returncode == 0, out
    assert (conf / "slurm.conf").read_text() == "ClusterName=new\n", out
    assert calls.read_text().splitlines() == ["is-active --quiet slurmctld"], out
    assert "slurmctld is not running on ctl1: not reconfigured; it reads the new configuration when it starts" in out, out
    assert out.count("still in the play") >= 3, out


RUNNING = {"in_sync": False, "drift_items": []}
NOT_RUNNING = {"in_sync": False, "drift_items": [{"kind": "services", "name": "slurmd", "missing": True, "drift": []}]}
STOPPED_CTLD = {"in_sync": False, "drift_items": [
    {"kind": "services", "name": "slurmctld", "missing": False, "drift": ["service slurmctld: inactive, expected started"]}]}


@pytest.mark.parametrize("notifying, states, asked, fast_path", [
    # new compute nodes: their slurmd was started after their files were written, nobody is asked
    (["gpu1", "gpu2"], {"gpu1": NOT_RUNNING, "gpu2": NOT_RUNNING}, False, True),
    # one of them had slurmd running: it must re-read its files, the controller is asked once
    (["gpu1", "gpu2"], {"gpu1": NOT_RUNNING, "gpu2": RUNNING}, True, True),
    # a controller whose slurmctld the check found stopped: started after its files, not asked
    (["ctl1"], {"ctl1": STOPPED_CTLD}, False, True),
    # no check result (the check did not run): asked, as without the check
    (["gpu1"], {}, True, True),
    # a check result, but slurm_common_fast_path=false: the result is not read, asked as without it
    (["gpu1", "gpu2"], {"gpu1": NOT_RUNNING, "gpu2": NOT_RUNNING}, True, False),
])
def test_reconfigure_only_where_a_daemon_was_running(run_playbook, tmp_path, notifying, states, asked, fast_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "calls"
    _fake(fake, "scontrol", "echo \"$*\" >> %s\n" % calls)
    _fake(fake, "systemctl", "exit 0\n")  # slurmctld is active
    result = run_playbook("tests/harness/playbooks/slurm_reconfigure_notified.yml", "-i", "tests/harness/inventories/slurm-render/hosts.yml",
                          "-e", json.dumps({"fake_bin": str(fake), "conf_dir": str(tmp_path), "notifying": notifying, "states": states,
                                            "fast_path": fast_path}))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert (calls.read_text().splitlines() if calls.exists() else []) == (["reconfigure"] if asked else []), out
    assert ("HANDLER [gpucluster.training.slurm_common : Reconfigure Slurm on the controller]" in out) is asked, out
