# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The day-2 playbooks refuse a misspelt option, a refused value, and (the munge key rotation) a run
that leaves Slurm hosts out, in their first tasks, before any host changes.

The hosts use the local connection and the runs are in check mode, so even a check that let a bad
run through could not change this machine."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KEY = ["-e", "slurm_common_munge_key=" + "QUFB" * 16]   # base64 of 48 bytes: a key of the right size, never used

CASES = [
    # Ansible would ignore the misspelt name and take the default: auto, which reboots a node whose upgrade asks
    ("rolling_maintenance.yml", ["-e", "maintenance_rebot=never"],
     "maintenance_rebot (set on gpu1, gpu2) is not a variable of gpucluster.training: Ansible would ignore it. "
     "Did you mean maintenance_reboot?"),
    ("rolling_maintenance.yml", ["-e", "maintenance_reboot=sometimes"],
     "maintenance_reboot (set on gpu1, gpu2) is refused by playbook rolling_maintenance's argument spec: "
     "value of maintenance_reboot must be one of: auto, always, never, got: sometimes."),
    ("plan.yml", ["-e", "plan_serch=false", "-e", "training_jobs_gpu=mi300x"],
     "plan_serch (set on ctl1, gpu1, gpu2) is not a variable of gpucluster.training: Ansible would ignore it. "
     "Did you mean plan_search?"),
    # the roles' variables are checked in a day-2 run as in site.yml's
    ("smoke_job.yml", ["-e", "training_jobs_smoke_nodes=two"],
     "training_jobs_smoke_nodes (set on ctl1) is refused by role training_jobs's argument spec"),
    ("torchrun_noslurm.yml", ["-e", "torchrun_noslurm_timout=60"],
     "torchrun_noslurm_timout (set on gpu1, gpu2) is not a variable of gpucluster.training: Ansible would ignore it. "
     "Did you mean torchrun_noslurm_timeout?"),
    # nodes left out of a rotation keep the old key: their slurmd could no longer talk to slurmctld
    ("munge_key_rotate.yml", [*KEY, "--limit", "ctl1,gpu1"],
     "this run leaves out gpu2 (--limit): they would keep the old key, and their slurmd could no longer talk to "
     "slurmctld (the nodes go DOWN and their jobs end). Run on every Slurm host, or set munge_key_rotate_partial=true "
     "to rotate ctl1, gpu1 alone (a node that missed the rotation). Nothing was changed."),
    ("munge_key_rotate.yml", [*KEY, "-e", "munge_key_rotate_partial=maybe"],
     "munge_key_rotate_partial (set on ctl1, gpu1, gpu2) is refused by playbook munge_key_rotate's argument spec"),
]


@pytest.mark.parametrize("playbook, args, message", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_bad_day2_run_is_refused_before_any_change(run_playbook, playbook, args, message):
    result = run_playbook(f"playbooks/{playbook}", "-i", "tests/harness/inventories/day2/hosts.yml", "--check", *args)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert message in re.sub(r"\s+", " ", out), out
    recap = out.split("PLAY RECAP")[-1]
    changed = [int(n) for n in re.findall(r"changed=(\d+)", recap)]
    assert changed and all(n == 0 for n in changed), recap


def test_a_partial_rotation_the_operator_asked_for_passes_the_check(run_playbook):
    # --limit with munge_key_rotate_partial=true: the checks pass, and the run goes on to the rotation play
    # (which, on this inventory's local hosts in check mode, is not asked to succeed)
    result = run_playbook("playbooks/munge_key_rotate.yml", "-i", "tests/harness/inventories/day2/hosts.yml", "--check",
                          *KEY, "--limit", "gpu2", "-e", "munge_key_rotate_partial=true")
    out = result.stdout + result.stderr
    assert "leaves out" not in out, out
    assert "TASK [Every Slurm host is in this run (or munge_key_rotate_partial says these alone)]" in out, out
    assert "PLAY [Rotate the munge key on every Slurm node at once]" in out, out


def test_a_rotation_with_a_slurm_host_unreachable_stops_before_any_change(run_playbook, tmp_path):
    # gpu2 refuses connections (SSH to port 1 of this machine): the rotation play's fact gathering fails there, and
    # any_errors_fatal ends the play on every host before the key is written anywhere
    inventory = tmp_path / "hosts.yml"
    text = (ROOT / "tests/harness/inventories/day2/hosts.yml").read_text()
    inventory.write_text(text.replace(
        "gpu2: {gpucluster_address: 192.0.2.12}",
        "gpu2: {gpucluster_address: 192.0.2.12, ansible_connection: ssh, ansible_host: 127.0.0.1, ansible_port: 1}"))
    result = run_playbook("playbooks/munge_key_rotate.yml", "-i", str(inventory), "--check", *KEY)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert re.search(r"gpu2\s+: ok=\d+\s+changed=0\s+unreachable=1", out), out
    assert "TASK [Install the new key on every node" not in out, out


def _doubles(tmp_path, **bodies):
    fake = tmp_path / "bin"
    fake.mkdir()
    for name, body in bodies.items():
        (fake / name).write_text("#!/bin/sh\n" + body)
        (fake / name).chmod(0o755)
    return fake


def test_rolling_maintenance_check_mode_says_what_it_would_do_and_changes_nothing(run_playbook, tmp_path):
    # Slurm as test doubles: gpu1 idle, gpu2 drained by an operator; a job runs on gpu1 (a check-mode wait on it would
    # last maintenance_wait_timeout). scontrol would record any call: there must be none.
    calls = tmp_path / "scontrol-calls"
    fake = _doubles(
        tmp_path,
        sinfo='case "$*" in *--responding*) echo "$5";; *gpu1*) echo "idle|none";; *) echo "drain|disk repair (ops)";; esac\n',
        squeue="echo 4711\n",
        scontrol='echo "$*" >> %s\n' % calls)
    result = run_playbook("playbooks/rolling_maintenance.yml", "-i", "tests/harness/inventories/day2/hosts.yml", "--check",
                          "-e", '{"maintenance_reboot": "never", "maintenance_wait_timeout": 7200}',
                          extra_env={"PATH": "%s:/usr/bin:/bin" % fake})
    out = result.stdout + result.stderr
    flat = " ".join(out.split())
    assert result.returncode == 0, out
    assert ("gpu1: would drain it (reason: gpucluster maintenance: rolling package upgrade), wait until its jobs end, "
            "upgrade it and resume it") in flat, out
    assert "gpu2: would keep its state (drain|disk repair (ops)) and upgrade it" in flat, out
    assert not calls.exists(), calls.read_text()


def test_smoke_job_check_mode_submits_nothing_and_does_not_wait(run_playbook, tmp_path):
    fake = _doubles(tmp_path, sbatch="echo submitted >&2; exit 1\n", sacct="exit 1\n")
    result = run_playbook("playbooks/smoke_job.yml", "-i", "tests/harness/inventories/day2/hosts.yml", "--check",
                          extra_env={"PATH": "%s:/usr/bin:/bin" % fake})
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "ctl1: would submit the smoke job (sbatch /opt/gpucluster/jobs/smoke.sbatch) and wait for it" in out, out
    assert re.search(r"ctl1\s+: ok=\d+\s+changed=1\s", out), out
