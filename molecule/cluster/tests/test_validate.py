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


def _load(name):
    path = REPORT_DIR / name
    assert path.is_file(), "no report at %s" % path
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def report():
    """The last run's report (side_effect.yml's rerun: every supplied capture passes)."""
    return _load("report.json")


@pytest.fixture(scope="module")
def converge_report():
    """The converge's report (cluster-gpu2's supplied capture fails), kept by side_effect.yml."""
    return _load("report-converge.json")


def _on_controller(host):
    if host.check_output("hostname") != "cluster-ctl1":
        pytest.skip("Slurm is asked on the controller")


def _node(host, name):
    line = host.check_output("sinfo --noheader --Node --nodes %s --format '%%N|%%T|%%E'" % name)
    node, state, reason = line.splitlines()[0].split("|", 2)
    return state.strip(), reason.strip()


def test_slurm_state_follows_the_report(host, report):
    # converge: cluster-gpu2's supplied log failed -> drained with the report's reason (asserted
    # in side_effect.yml, case 1); the rerun: it passes -> resumed (the role lifts only drains
    # whose reason is its own; case 3 shows an operator's drain kept).
    _on_controller(host)
    print("sinfo -R:\n" + host.check_output("sinfo -R"))
    for name, entry in sorted(report["nodes"].items()):
        state, reason = _node(host, name)
        if entry["drain"]:
            assert state in ("drained", "draining"), (name, state)
            assert reason == entry["reason"]
        else:
            assert state == "idle", (name, state, reason)


def test_passing_node_stays_idle(host, report):
    _on_controller(host)
    state, reason = _node(host, "cluster-gpu1")
    assert state == "idle", (state, reason)
    assert report["nodes"]["cluster-gpu1"]["verdict"] == "pass"
    assert not report["nodes"]["cluster-gpu1"]["drain"]


@pytest.mark.parametrize("name", ["report", "report-converge"])
def test_report_says_supplied_not_measured(name):
    report = _load(name + ".json")
    assert report["supplied"] is True and report["measured"] is False
    assert report["run"]["mode"].startswith("supplied")
    judged = [c for c in report["checks"] if c["origin"] != "probed"]
    assert judged and all(c["origin"] == "supplied" and c["source"].startswith("supplied: tests/fixtures/")
                          for c in judged)
    md = (REPORT_DIR / (name + ".md")).read_text(encoding="utf-8")
    assert "Results were SUPPLIED" in md
    gpu2 = report["nodes"]["cluster-gpu2"]
    assert ("| cluster-gpu2 | fail | yes |" in md) == (gpu2["verdict"] == "fail")
    assert (gpu2["verdict"] == "fail") == (name == "report-converge")


def test_report_verdicts_and_limits(converge_report):
    report = converge_report
    checks = report["checks"]

    def one(test, check, node=None):
        found = [c for c in checks if c["test"] == test and c["check"] == check
                 and (node is None or c["node"] == node)]
        assert len(found) == 1, found
        return found[0]

    # OCI 2 x BM.GPU.H100.8, 16 RDMA ports x 200 Gb/s: judged against the published figure of that
    # fabric (reference roce-16x200, 464.79 GB/s x margin 0.9 = 418.31), the link rate (16 x 200
    # Gb/s... as bus bandwidth, 750 GB/s) only as the ceiling; 464.79 GB/s measured there.
    multi = one("all_reduce_multi", "busbw")
    assert multi["status"] == "pass" and multi["limit"] == 418.31 and multi["measured"] == 464.79
    assert multi["reference"]["id"] == "roce-16x200" and multi["ceiling"] == 750.0
    assert multi["node"] == ["cluster-gpu1", "cluster-gpu2"]
    assert report["cluster"]["verdict"] == "pass"
    assert one("nccl_log", "network", "cluster-gpu1")["status"] == "pass"
    assert one("nccl_log", "gdrdma", "cluster-gpu1")["status"] == "pass"
    socket = one("nccl_log", "network", "cluster-gpu2")
    assert socket["status"] == "fail" and socket["line"] == 14
    # The AMD ib_write_bw capture names no port rate: judged as skipped, not guessed.
    assert one("ib_write_bw", "bandwidth", "cluster-gpu1")["status"] == "skip"
    # Health from the probed (simulated) GPUs: 4 expected and found; the ports the rdma role
    # recorded are the ones judged (its hand-off to validation).
    assert one("health", "gpu_count", "cluster-gpu1")["status"] == "pass"
    assert report["verdict"] == "fail"
