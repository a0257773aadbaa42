# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""validate_report: the report's three files in one call, from judged runs of real fixtures
(tests/fixtures/nccl-tests, see SOURCES.md); the same bytes the role's copy and validate_plot
tasks wrote before (that comparison needs Ansible's own to_nice_json filter, which a module's
test cannot import under ansible-test units: tests/unit/plugins/filter/test_validate_report_bytes.py)."""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._collective_perf import parse_collective_perf
from ansible_collections.gpucluster.training.plugins.module_utils._validate_judge import judge_run
from ansible_collections.gpucluster.training.plugins.module_utils._validate_report_files import ReportFilesError, report_files
from ansible_collections.gpucluster.training.plugins.modules import validate_report
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.module_harness import Exit, Fail, exits, run_main  # noqa: F401  pylint: disable=unused-import


def _reports():
    """A passing run (OCI H100, 16 x 200G RoCE) and a failing report: the MI300X RoCE run judged
    against the published 16 x 200G reference (below its pass line) beside the OCI run on half its ports."""
    oci = parse_collective_perf(fixture_text("nccl-tests", "nccl_all_reduce_perf_2node_16xH100_OCI_RoCE_ocitutorials.txt"))
    mi300x = parse_collective_perf(fixture_text("nccl-tests", "rccl_all_reduce_perf_2node_16xMI300X_RoCE_hisohara.txt"))
    passing = judge_run([{"node": ["gpu1", "gpu2"], "test": "all_reduce_multi", "result": oci,
                          "hardware": {"gpu": "h100", "gpu_count": 8, "ports": 16, "rate_gbps": 200, "link_layer": "Ethernet"}}],
                        {"gpu1": None, "gpu2": None})
    failing = judge_run([{"node": ["gpu1", "gpu2"], "test": "all_reduce_multi", "result": oci,
                          "hardware": {"gpu": "h100", "gpu_count": 8, "ports": 8, "rate_gbps": 200, "link_layer": "Ethernet"}},
                         {"node": ["gpu3", "gpu4"], "test": "all_reduce_multi", "result": mi300x,
                          "hardware": {"gpu": "mi300x", "gpu_count": 8, "ports": 16, "rate_gbps": 200, "link_layer": "Ethernet"}}],
                        {"gpu1": None, "gpu2": None, "gpu3": None, "gpu4": None})
    return [passing, failing]


def test_verdicts_of_the_two_reports():
    passing, failing = _reports()
    assert passing["verdict"] == "pass" and failing["verdict"] == "fail"


def _modes(dest):
    return dict((name, stat.S_IMODE(os.stat(os.path.join(dest, name)).st_mode)) for name in sorted(os.listdir(dest)))


def test_writes_once_then_no_change_and_repairs_one_file(tmp_path):
    report = _reports()[1]
    dest = tmp_path / "a" / "validate-report"
    first = run_main(validate_report.main, {"report": report, "dest": str(dest)})
    assert first["changed"] and [f["changed"] for f in first["files"]] == [True, True, True] and first["series"] == 2
    assert _modes(str(dest)) == {"report.json": 0o644, "report.md": 0o644, "report.png": 0o644}
    assert stat.S_IMODE(os.stat(str(dest)).st_mode) == 0o755
    assert dict((name, (dest / name).read_bytes()) for name in ("report.json", "report.png", "report.md")) == dict(report_files(report))
    again = run_main(validate_report.main, {"report": report, "dest": str(dest)})
    assert not again["changed"] and not any(f["changed"] for f in again["files"])
    # one file edited, one mode changed: only those are repaired
    (dest / "report.md").write_text("edited\n")
    os.chmod(str(dest / "report.json"), 0o600)
    fixed = run_main(validate_report.main, {"report": report, "dest": str(dest), "_ansible_diff": True})
    assert [f["changed"] for f in fixed["files"]] == [True, False, True]
    assert (dest / "report.md").read_bytes() == report["markdown"].encode("utf-8") and _modes(str(dest))["report.json"] == 0o644
    assert {"before": {"path": str(dest / "report.json"), "mode": "0600"}, "after": {"path": str(dest / "report.json"), "mode": "0644"}} in fixed["diff"]
    assert {"before_header": str(dest / "report.md"), "after_header": str(dest / "report.md"),
            "before": "edited\n", "after": report["markdown"]} in fixed["diff"]


def test_check_mode_writes_nothing_and_says_what_would_change(tmp_path):
    report = _reports()[0]
    dest = tmp_path / "validate-report"
    out = run_main(validate_report.main, {"report": report, "dest": str(dest), "_ansible_check_mode": True, "_ansible_diff": True})
    assert out["changed"] and [f["changed"] for f in out["files"]] == [True, True, True] and not dest.exists()
    assert out["diff"][0] == {"before": {"path": str(dest), "state": "absent"}, "after": {"path": str(dest), "state": "directory"}}
    assert out["diff"][2] == {"before_header": str(dest / "report.png"), "after_header": str(dest / "report.png"), "src_binary": True}
    run_main(validate_report.main, {"report": report, "dest": str(dest)})
    out = run_main(validate_report.main, {"report": report, "dest": str(dest), "_ansible_check_mode": True})
    assert not out["changed"]


@pytest.mark.parametrize("report, message", [({"plot": {"series": []}}, "no markdown"), ({"markdown": 3, "plot": {}}, "must be a string"),
                                             ({"markdown": "", "plot": {"series": "x"}}, "validate_report: ")])
def test_fails_clearly(tmp_path, report, message):
    out = run_main(validate_report.main, {"report": report, "dest": str(tmp_path / "r")}, expect=Fail)
    assert out["msg"].startswith("validate_report: ") and message in out["msg"]
    assert not (tmp_path / "r").exists()


def test_report_must_be_a_dict():
    with pytest.raises(ReportFilesError, match="must be a dict"):
        report_files(["x"])


def test_a_run_that_left_nodes_out_is_incomplete_unless_something_failed():
    oci = parse_collective_perf(fixture_text("nccl-tests", "nccl_all_reduce_perf_2node_16xH100_OCI_RoCE_ocitutorials.txt"))
    run = [{"node": ["gpu1", "gpu2"], "test": "all_reduce_multi", "result": oci,
            "hardware": {"gpu": "h100", "gpu_count": 8, "ports": 16, "rate_gbps": 200, "link_layer": "Ethernet"}}]
    partial = judge_run(run, {"gpu1": None, "gpu2": None}, left_out={"gpu3": "unreachable or failed before validation"})
    assert partial["verdict"] == "incomplete"
    assert partial["left_out"] == {"gpu3": "unreachable or failed before validation"}
    assert "| gpu3 | not judged | - | - | unreachable or failed before validation |" in partial["markdown"]
    assert partial["markdown"].startswith("# gpucluster validate: INCOMPLETE")
    # a failure still says fail; no node left out: pass
    halved = [dict(run[0], hardware=dict(run[0]["hardware"], ports=8))]
    assert judge_run(halved, {"gpu1": None, "gpu2": None}, left_out={"gpu3": "x"})["verdict"] == "fail"
    assert judge_run(run, {"gpu1": None, "gpu2": None}, left_out={})["verdict"] == "pass"
    with pytest.raises(ValueError, match=r"left_out must be a dict \{host: why\}, got a list"):
        judge_run(run, {"gpu1": None, "gpu2": None}, left_out=["gpu3"])
