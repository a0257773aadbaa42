# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the sbatch_test_only module: sinfo and sbatch answer with the captures of
tests/unit/plugins/module_utils/test__slurm_accept.py; every call is recorded."""

from __future__ import annotations

import pytest
from ansible.module_utils import basic

from ansible_collections.gpucluster.training.plugins.modules import sbatch_test_only
from ansible_collections.gpucluster.training.tests.unit.plugins.module_utils.test__slurm_accept import ACCEPTED, NODE_CONFIG
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.module_harness import Exit, Fail, exits, run_main  # noqa: F401  pylint: disable=unused-import

JOBS = [{"name": "llama2_pretrain", "script": "/opt/jobs/llama2_pretrain.sbatch"}, {"name": "smoke", "script": "/opt/jobs/smoke.sbatch"}]


def slurm(monkeypatch, out_of_service="", answers=None, sinfo_rc=0):
    """sinfo lists out_of_service; sbatch --test-only answers (rc, stderr) per script."""
    calls = []

    def run_command(self, args, **kwargs):
        calls.append((args, kwargs.get("environ_update")))
        if args[0].endswith("sinfo"):
            return sinfo_rc, out_of_service, "slurm_load_partitions: Unable to contact slurm controller" if sinfo_rc else ""
        rc, err = answers[args[-1]]
        return rc, "", err

    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    return calls


def test_all_accepted_in_one_call(monkeypatch):
    calls = slurm(monkeypatch, answers={j["script"]: (0, ACCEPTED) for j in JOBS})
    result = run_main(sbatch_test_only.main, {"jobs": JOBS, "_ansible_check_mode": True})
    assert result["changed"] is False and result["accepted"] == ["llama2_pretrain", "smoke"]
    assert result["inconclusive"] == [] and result["refused"] == [] and result["out_of_service"] == []
    assert result["msg"] == "Slurm would accept 2 of 2 job(s)"
    assert [c[0] for c in calls] == [
        ["/usr/bin/sinfo", "--noheader", "--Node", "--states=drain,drng,down,maint,fail,no_respond", "--format", "%N"],
        ["/usr/bin/sbatch", "--test-only", "/opt/jobs/llama2_pretrain.sbatch"],
        ["/usr/bin/sbatch", "--test-only", "/opt/jobs/smoke.sbatch"]]
    assert all(c[1]["LANG"] == "C" for c in calls)


def test_node_configuration_refusal_is_inconclusive_while_nodes_are_out(monkeypatch):
    answers = {JOBS[0]["script"]: (1, NODE_CONFIG), JOBS[1]["script"]: (0, ACCEPTED)}
    slurm(monkeypatch, out_of_service="gpu3\ngpu3\n", answers=answers)
    result = run_main(sbatch_test_only.main, {"jobs": JOBS})
    assert result["inconclusive"] == ["llama2_pretrain"] and result["out_of_service"] == ["gpu3"]
    assert result["msg"] == "Slurm would accept 1 of 2 job(s); 1 inconclusive (nodes out of service: gpu3)"


@pytest.mark.parametrize("out_of_service, answer", [("", NODE_CONFIG), ("gpu3\n", "sbatch: error: invalid partition specified: gpux\n")])
def test_any_other_refusal_fails(monkeypatch, out_of_service, answer):
    slurm(monkeypatch, out_of_service=out_of_service, answers={JOBS[0]["script"]: (1, answer), JOBS[1]["script"]: (0, ACCEPTED)})
    result = run_main(sbatch_test_only.main, {"jobs": JOBS}, expect=Fail)
    assert result["refused"] == ["llama2_pretrain"]
    assert result["msg"] == "Slurm refuses llama2_pretrain: llama2_pretrain (/opt/jobs/llama2_pretrain.sbatch): " + answer.strip()


def test_sinfo_failure_fails(monkeypatch):
    calls = slurm(monkeypatch, sinfo_rc=1)
    result = run_main(sbatch_test_only.main, {"jobs": JOBS}, expect=Fail)
    assert result["msg"] == "sinfo failed (rc 1): slurm_load_partitions: Unable to contact slurm controller"
    assert len(calls) == 1
