# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A compute node that left the inventory leaves slurm.conf, which ends the jobs running there: the
preflight asks slurmctld (squeue, a test double here) and refuses while jobs run there, and also
while slurmctld does not answer (before, an squeue that failed with no output let the removal
through: a stopped slurmctld ends the jobs it holds when it starts with the new file)."""

import json
import stat

import pytest

DOWN = "echo 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' >&2\nexit 1\n"


@pytest.mark.parametrize("squeue, extra, passes, message", [
    ("exit 0\n", {}, True, None),
    ("echo 4711\necho 4712\n", {}, False, "Slurm jobs 4711, 4712 run there: removing the node from slurm.conf would end them"),
    (DOWN, {}, False, "could not say which jobs run there (squeue exited 1: slurm_load_jobs error: Unable to contact slurm controller"),
    # a node slurmctld does not know has no job to end
    ("echo 'squeue: error: Invalid node name specified' >&2\nexit 1\n", {}, True, None),
    # the operator's choice, also as a string from an INI inventory or -e
    (DOWN, {"slurm_common_remove_busy": "true"}, True, None),
])
def test_leaving_nodes(run_playbook, tmp_path, squeue, extra, passes, message):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "squeue").write_text("#!/bin/sh\n" + squeue)
    (fake / "squeue").chmod(0o755 | stat.S_IEXEC)
    result = run_playbook("tests/harness/playbooks/slurm_leaving_jobs.yml", "-i", "tests/harness/inventories/slurm-render/hosts.yml",
                          "-e", json.dumps(dict({"fake_bin": str(fake), "leaving": ["gpu9"]}, **extra)))
    out = result.stdout + result.stderr
    assert (result.returncode == 0) is passes, out
    if message:
        assert message in " ".join(out.split()), out
