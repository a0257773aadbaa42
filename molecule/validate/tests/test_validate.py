# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Role gpucluster.training.validate on a live Slurm cluster of three containers.

The results judged are SUPPLIED captures (real published outputs, tests/fixtures/SOURCES.md),
not measured here; the drain in slurmctld and the report files are real.
"""
import json
import os
from pathlib import Path

import pytest

REPORT_DIR = Path(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/nonexistent")) / "validate-report"


@pytest.fixture(scope="module")
def report():
    path = REPORT_DIR / "report.json"
    assert path.is_file(), "no report at %s" % path
    return json.loads(path.read_text(encoding="utf-8"))


def _on_controller(host):
    if host.check_output("hostname") != "validate-ctl1":
        pytest.skip("Slurm is asked on the controller")


def _node(host, name):
    line = host.check_output("sinfo --noheader --Node --nodes %s --format '%%N|%%T|%%E'" % name)
    node, state, reason = line.splitlines()[0].split("|", 2)
    return state.strip(), reason.strip()


def test_slurm_state_follows_the_report(host, report):
    # converge: validate-gpu2's supplied log fails -> drained with the report's reason.
    # side_effect: it passes -> resumed (the role lifts only drains whose reason is its own).
    _on_controller(host)
    print("sinfo -R:\n" + host.check_output("sinfo -R"))
    for name, entry in sorted(report["nodes"].items()):
        state, reason = _node(host, name)
        if entry["drain"]:
            assert state in ("drained", "draining"), (name, state)
            assert reason == entry["reason"]
        else:
            assert state == "idle", (name, state, reason)


def test_failing_node_is_drained_with_the_reason(host, report):
    _on_controller(host)
    if report["nodes"]["validate-gpu2"]["verdict"] == "pass":
        pytest.skip("after side_effect: validate-gpu2 passes (test_slurm_state_follows_the_report checks the resume)")
    state, reason = _node(host, "validate-gpu2")
    assert state in ("drained", "draining"), state
    assert reason.startswith("gpucluster validate: nccl_log network failed")
    assert "NET/Socket" in reason
    sinfo_r = host.check_output("sinfo -R --noheader --format '%N|%E'")
    assert "validate-gpu2|gpucluster validate:" in sinfo_r


def test_passing_node_stays_idle(host, report):
    _on_controller(host)
    state, reason = _node(host, "validate-gpu1")
    assert state == "idle", (state, reason)
    assert report["nodes"]["validate-gpu1"]["verdict"] == "pass"
    assert not report["nodes"]["validate-gpu1"]["drain"]


def test_report_says_supplied_not_measured(report):
    assert report["supplied"] is True and report["measured"] is False
    assert report["run"]["mode"].startswith("supplied")
    judged = [c for c in report["checks"] if c["origin"] != "probed"]
    assert judged and all(c["origin"] == "supplied" and c["source"].startswith("supplied: tests/fixtures/")
                          for c in judged)
    md = (REPORT_DIR / "report.md").read_text(encoding="utf-8")
    assert "Results were SUPPLIED" in md
    gpu2 = report["nodes"]["validate-gpu2"]
    assert ("| validate-gpu2 | fail | yes |" in md) == (gpu2["verdict"] == "fail")


def test_report_verdicts_and_limits(report):
    if report["nodes"]["validate-gpu2"]["verdict"] == "pass":
        pytest.skip("after side_effect: the converge's verdicts were checked before it")
    checks = report["checks"]

    def one(test, check, node=None):
        found = [c for c in checks if c["test"] == test and c["check"] == check
                 and (node is None or c["node"] == node)]
        assert len(found) == 1, found
        return found[0]

    # OCI 2 x BM.GPU.H100.8: 16 ports x 200 Gb/s = 400 GB/s; 464.79 GB/s measured there.
    multi = one("all_reduce_multi", "busbw")
    assert multi["status"] == "pass" and multi["limit"] == 400.0 and multi["measured"] == 464.79
    assert multi["node"] == ["validate-gpu1", "validate-gpu2"]
    assert report["cluster"]["verdict"] == "pass"
    assert one("nccl_log", "network", "validate-gpu1")["status"] == "pass"
    assert one("nccl_log", "gdrdma", "validate-gpu1")["status"] == "pass"
    socket = one("nccl_log", "network", "validate-gpu2")
    assert socket["status"] == "fail" and socket["line"] == 14
    # The AMD ib_write_bw capture names no port rate: judged as skipped, not guessed.
    assert one("ib_write_bw", "bandwidth", "validate-gpu1")["status"] == "skip"
    # Health from the (simulated) gpu_info facts: 8 GPUs expected and found.
    assert one("health", "gpu_count", "validate-gpu1")["status"] == "pass"
    assert report["verdict"] == "fail"
