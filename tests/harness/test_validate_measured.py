# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The validate role's measured runs as the role parses them (tasks/run.yml, vars/main.yml) and
judges them (tasks/judge.yml), with srun a test double that prints what real runs printed
(tests/fixtures, SOURCES.md) or what srun says when it cannot place a run. Before, every run that
exited non-zero counted as a node that failed all_reduce_perf, and so did a run that finished
without NCCL INFO lines: a job taking the node between sinfo and srun, or validate_nccl_debug=WARN,
drained healthy nodes."""

import json
import re
import stat

from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "nccl-tests"
H100_1NODE = FIXTURES / "nccl_all_reduce_perf_1node_8xH100_node005_nccltests290.txt"
CRASH = FIXTURES / "rccl_all_reduce_perf_1node_2x7900XTX_crash_rccl876.txt"
H100 = {"vendor": "nvidia", "count": 8, "model": "NVIDIA H100 80GB HBM3", "slurm_type": "h100"}


def _run(run_playbook, tmp_path, srun_body, tests=("all_reduce_single",), args=()):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "srun").write_text("#!/bin/sh\n" + srun_body)
    (fake / "srun").chmod(0o755 | stat.S_IEXEC)
    result = run_playbook("tests/harness/playbooks/validate_measured.yml", "-i", "tests/harness/inventories/slurm-render/hosts.yml",
                          "-e", json.dumps({"fake_bin": str(fake), "install_dir": str(tmp_path), "tests": list(tests), "gpus": H100}),
                          *args)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    report = json.loads(re.search(r'"REPORT (\{.*\})"', out).group(1).encode().decode("unicode_escape"))
    return report, out


def _checks(report, node, test):
    return {c["check"]: c for c in report["checks"] if c["node"] == node and c["test"] == test}


def test_srun_that_could_not_place_the_run_drains_nobody(run_playbook, tmp_path):
    report, out = _run(run_playbook, tmp_path,
                       "echo 'srun: error: Unable to allocate resources: Requested nodes are busy' >&2\nexit 1\n")
    assert report["verdict"] == "incomplete", out
    for node in ("gpu1", "gpu2"):
        entry = report["nodes"][node]
        assert not entry["drain"] and entry["verdict"] == "pass", out
        assert "all_reduce_perf did not run (srun: error: Unable to allocate resources: Requested nodes are busy)" in entry["not_run"][0]
        assert _checks(report, node, "all_reduce_single")["complete"]["status"] == "skip"


def test_a_run_that_started_and_crashed_fails_the_node(run_playbook, tmp_path):
    report, out = _run(run_playbook, tmp_path, "cat %s\nexit 134\n" % CRASH)
    assert report["verdict"] == "fail", out
    for node in ("gpu1", "gpu2"):
        assert report["nodes"][node]["drain"], out
        assert _checks(report, node, "all_reduce_single")["complete"]["status"] == "fail"


def test_a_finished_run_without_nccl_info_is_judged_without_a_network_check(run_playbook, tmp_path):
    # validate_nccl_debug=WARN: the run finished (exit 0) but logged no NCCL INFO line
    report, out = _run(run_playbook, tmp_path, "cat %s\n" % H100_1NODE)
    for node in ("gpu1", "gpu2"):
        single = _checks(report, node, "all_reduce_single")
        assert single["complete"]["status"] == "pass", out
        assert single["busbw"]["measured"] is not None, out
        assert not _checks(report, node, "nccl_log"), out


def test_a_run_that_left_a_node_out_is_incomplete_not_a_pass(run_playbook, tmp_path):
    # --limit gpu1: gpu1 passes, gpu2 was never judged; the cluster's verdict must not read "pass"
    report, out = _run(run_playbook, tmp_path, "cat %s\n" % H100_1NODE, args=("--limit", "gpu1"))
    assert report["nodes"]["gpu1"]["verdict"] == "pass", out
    assert "gpu2" not in report["nodes"], out
    assert report["left_out"] == {"gpu2": "not in this run (--limit)"}, out
    assert report["verdict"] == "incomplete", out
    assert "| gpu2 | not judged | - | - | not in this run (--limit) |" in report["markdown"], out
