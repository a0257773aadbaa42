# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU roles' reboot step never reboots a node blind: when Slurm cannot say which jobs run on it (slurmctld
stopped or not answering), the step refuses instead of rebooting at once (before, any failed squeue counted as
"no jobs": the node rebooted under the jobs slurmstepd still ran). squeue is a test double; check mode, so nothing
reboots."""

import json
import stat

import pytest

DOWN = "echo 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' >&2\nexit 1\n"


@pytest.mark.parametrize("squeue, extra, outcome", [
    ("exit 0\n", {}, "now"),                                                      # idle
    ("echo 4711\n", {}, "scheduled"),                                             # jobs: Slurm reboots it later
    ("echo 'squeue: error: Invalid node name specified' >&2\nexit 1\n", {}, "now"),  # not in Slurm
    (None, {}, "now"),                                                            # no Slurm client (first run)
    (DOWN, {}, "refused"),
    (DOWN, {"busy": True}, "now"),                                                # the operator asked for it
], ids=["idle", "busy", "not-in-slurm", "no-slurm-client", "slurm-down", "slurm-down-busy-ok"])
def test_reboot_step(run_playbook, tmp_path, squeue, extra, outcome):
    fake = tmp_path / "bin"
    fake.mkdir()
    if squeue is not None:
        (fake / "squeue").write_text("#!/bin/sh\n" + squeue)
        (fake / "squeue").chmod(0o755 | stat.S_IEXEC)
        (fake / "sinfo").write_text("#!/bin/sh\necho 'mix|none'\n")
        (fake / "sinfo").chmod(0o755 | stat.S_IEXEC)
    result = run_playbook("tests/harness/playbooks/gpu_reboot_node.yml", "-i", "tests/harness/inventories/day2/hosts.yml",
                          "--check", "-e", json.dumps(dict({"fake_bin": str(fake)}, **extra)))
    out = result.stdout + result.stderr
    flat = " ".join(out.split())
    # the reboot module itself refuses to reboot this machine (local connection): that is the step rebooting now
    rebooted_now = "Running ansible.builtin.reboot with local connection would reboot the control node" in out
    assert rebooted_now is (outcome == "now"), out
    assert ("REBOOT SCHEDULED on gpu1 after Slurm jobs 4711 end" in flat) is (outcome == "scheduled"), out
    refused = ("gpu1 needs a reboot (gpucluster.training.rocm: harness driver update), but Slurm on ctl1 could not say which "
               "jobs run on it (squeue exited 1: slurm_load_jobs error: Unable to contact slurm controller")
    assert (refused in flat) is (outcome == "refused"), out
    assert (result.returncode == 0) is (outcome == "scheduled"), out


@pytest.mark.parametrize("sinfo, nextstate, reason", [
    ("echo 'mix|none'\n", "RESUME", "gpucluster.training.rocm: harness driver update"),
    # an operator's drain comes back after the reboot: DOWN, their reason first (RESUME would put the node back in service)
    ("echo 'drng|disk repair (ops)'\n", "DOWN", "disk repair (ops) (kept; then gpucluster.training.rocm: harness driver update)"),
], ids=["in-service", "operator-drained"])
def test_a_busy_node_is_handed_to_slurm_keeping_an_operators_drain(run_playbook, tmp_path, sinfo, nextstate, reason):
    # not check mode: scontrol is a test double that records its arguments (the reboot is Slurm's, later)
    calls = tmp_path / "scontrol-args"
    fake = tmp_path / "bin"
    fake.mkdir()
    for name, body in {"squeue": "echo 4711\n", "sinfo": sinfo,
                       "scontrol": 'for a in "$@"; do echo "$a"; done > %s\n' % calls}.items():
        (fake / name).write_text("#!/bin/sh\n" + body)
        (fake / name).chmod(0o755 | stat.S_IEXEC)
    result = run_playbook("tests/harness/playbooks/gpu_reboot_node.yml", "-i", "tests/harness/inventories/day2/hosts.yml",
                          "-e", json.dumps({"fake_bin": str(fake)}))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert calls.read_text().splitlines() == ["reboot", "ASAP", "nextstate=" + nextstate, "reason=" + reason, "gpu1"], out
