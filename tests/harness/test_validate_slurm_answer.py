# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""validate_use_slurm=auto runs the benchmarks directly only where the controller has no Slurm. Before, a sinfo that
failed for any reason (slurmctld stopped or overloaded) meant "no Slurm": all_reduce_perf and mpirun ran on every
node, on GPUs that the jobs slurmstepd still runs were using. sinfo is a test double here, or absent."""

import json
import stat

import pytest

DOWN = "echo 'slurm_load_partitions: Unable to contact slurm controller (connect failure)' >&2\nexit 1\n"


@pytest.mark.parametrize("sinfo, extra, outcome", [
    ("printf 'gpu1|idle|\\ngpu2|mixed|\\n'\n", {}, "slurm"),
    (None, {}, "direct"),                                             # no Slurm on the controller
    (DOWN, {}, "refused"),
    (DOWN, {"validate_use_slurm": "false"}, "direct"),                # the operator's choice: sinfo is not asked
    (DOWN, {"validate_supplied_results": [{"test": "all_reduce_multi", "node": ["gpu1", "gpu2"], "src": "/dev/null"}]},
     "supplied"),                                                     # nothing is measured: judged, not drained
], ids=["answers", "no-slurm", "slurm-down", "slurm-down-direct-asked", "slurm-down-supplied"])
def test_validate_slurm_step(run_playbook, tmp_path, sinfo, extra, outcome):
    fake = tmp_path / "bin"
    fake.mkdir()
    if sinfo is not None:
        (fake / "sinfo").write_text("#!/bin/sh\n" + sinfo)
        (fake / "sinfo").chmod(0o755 | stat.S_IEXEC)
    result = run_playbook("tests/harness/playbooks/validate_slurm_answer.yml", "-i", "tests/harness/inventories/day2/hosts.yml",
                          "-e", json.dumps(dict({"fake_bin": str(fake)}, **extra)))
    out = result.stdout + result.stderr
    flat = " ".join(out.split())
    if outcome == "refused":
        assert result.returncode != 0, out
        assert ("sinfo on ctl1 failed (slurm_load_partitions: Unable to contact slurm controller (connect failure)): Slurm is "
                "installed there but did not answer, and the benchmarks run outside it could land on GPUs its running jobs "
                "use. Nothing was measured.") in flat, out
        return
    assert result.returncode == 0, out
    if outcome == "slurm":
        assert '"msg": "SLURM True TESTABLE True"' in out and '"msg": "SLURM True TESTABLE False"' in out, out
    else:
        assert out.count('"msg": "SLURM False TESTABLE True"') == 2, out
