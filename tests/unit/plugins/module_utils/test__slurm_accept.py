# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of module_utils/_slurm_accept.py on Slurm's answers (tests/fixtures/slurm, see SOURCES.md).

The sinfo lines are SYNTHETIC, in the form `sinfo --noheader --Node --format %N` prints (one node
name a line, a node once per partition it is in)."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_accept import (
    SlurmAcceptError, judge_jobs, judge_test_only, parse_node_names, refusal_message)
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text

ACCEPTED = fixture_text("slurm", "sbatch_test_only_accepted_archer2.txt")
NODE_CONFIG = fixture_text("slurm", "sbatch_refused_node_config_parallelcluster282.txt")


def test_node_names_each_once_in_order():
    assert parse_node_names("gpu3\ngpu1\ngpu3\n\n") == ["gpu3", "gpu1"]
    assert parse_node_names("") == []
    with pytest.raises(SlurmAcceptError, match="is not one node name"):
        parse_node_names("NODELIST\ngpu1 down\n")


def test_verdicts():
    assert judge_test_only(0, ACCEPTED, []) == "accepted"
    # the node configuration refusal is inconclusive only while some node is out of service
    assert judge_test_only(1, NODE_CONFIG, ["gpu3"]) == "inconclusive"
    assert judge_test_only(1, NODE_CONFIG, []) == "refused"
    assert judge_test_only(1, "sbatch: error: invalid partition specified: gpux\n", ["gpu3"]) == "refused"


def test_jobs_judged_and_refusals_named():
    runs = [{"name": "smoke", "script": "/opt/jobs/smoke.sbatch", "rc": 0, "output": ACCEPTED},
            {"name": "llama2_pretrain", "script": "/opt/jobs/llama2_pretrain.sbatch", "rc": 1, "output": NODE_CONFIG}]
    result = judge_jobs(runs, ["gpu3"])
    assert (result["accepted"], result["inconclusive"], result["refused"]) == (["smoke"], ["llama2_pretrain"], [])
    assert result["jobs"][0]["message"] == ACCEPTED.strip() and result["jobs"][0]["verdict"] == "accepted"
    result = judge_jobs(runs, [])
    assert result["refused"] == ["llama2_pretrain"]
    assert refusal_message(result) == ("Slurm refuses llama2_pretrain: llama2_pretrain (/opt/jobs/llama2_pretrain.sbatch): "
                                       "sbatch: error: Batch job submission failed: Requested node configuration is not available")
    assert refusal_message(judge_jobs([dict(runs[1], output="")], [])).endswith(": rc 1, no message")
    with pytest.raises(SlurmAcceptError, match="no exit status"):
        judge_jobs([dict(runs[0], rc=None)], [])
