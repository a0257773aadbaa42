# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.training.plugins.modules import parallel_plan
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.module_harness import Exit as ExitJson
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.module_harness import Fail as FailJson
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.module_harness import exits, run_main  # noqa: F401  pylint: disable=unused-import


def call(args, expect=ExitJson):
    return run_main(parallel_plan.main, args, expect)


TUTORIAL = dict(model="llama2-70b", nodes=2, gpus_per_node=8, gpu="mi300x", tp=8, pp=4,
                micro_batch_size=4, global_batch_size=64, seq_length=4096, precision="fp8")


def test_tutorial_layout_fails_naming_world_size_and_suggesting_layouts():
    out = call(TUTORIAL, FailJson)
    assert "world_size: world size 16 (2 nodes x 8 GPUs) is not divisible by TP x PP x CP = " \
        "8 x 4 x 1 = 32" in out["msg"]
    assert "nearest valid layouts for 2 x 8 GPUs" in out["msg"]
    assert "TP8 PP2 CP1 DP1 MBS4 GBS64 recompute none" in out["msg"]
    assert "GiB/GPU" in out["msg"]
    assert out["valid"] is False and out["changed"] is False
    assert out["suggestions"][0]["tp"] == 8 and out["suggestions"][0]["pp"] == 2
    assert out["suggestions"][0]["fits"] is True


def test_valid_layout_returns_the_plan():
    out = call(dict(TUTORIAL, pp=2))
    assert out["changed"] is False and out["valid"] is True
    assert out["data_parallel"] == 1 and out["micro_batches"] == 16
    assert out["parameters"] == 68976648192
    assert out["bubble_fraction"] == pytest.approx(1 / 16.0)
    assert out["memory"]["fits"] is True
    assert set(out["memory"]) >= {"weights_and_optimizer_gib", "activations_gib", "total_gib",
                                  "fits", "usable_gib", "headroom_fraction"}
    for key in ("flops_per_step", "step_time_s", "tokens_per_s_per_gpu", "tokens_per_step",
                "assumptions", "megatron_args", "plan_warnings"):
        assert key in out
    assert "warnings" not in out or isinstance(out["warnings"], list)


def test_check_mode_gives_the_same_plan():
    out = call(dict(TUTORIAL, pp=2, _ansible_check_mode=True))
    assert out["valid"] is True and out["changed"] is False


def test_aliases_and_gpu_info_facts():
    facts = {"vendor": "amd", "count": 8, "model": "AMD Instinct MI300X", "arch": "gfx942",
             "memory_mib": 196592, "slurm_type": "mi300x"}
    out = call(dict(model="llama2-70b", nodes=2, gpu=facts, tensor_model_parallel_size=8,
                    pipeline_model_parallel_size=2, mbs=1, gbs=16, seq_length=4096))
    assert out["cluster"]["gpus_per_node"] == 8 and out["gpu"]["from"] == "gpu_info"


def test_search_returns_ranked_layouts():
    out = call(dict(model="llama2-70b", nodes=2, gpus_per_node=8, gpu="mi300x",
                    global_batch_size=64, seq_length=4096, search=True, max_suggestions=3))
    assert out["valid"] and len(out["layouts"]) == 3
    assert out["layouts"][0]["tp"] == out["layout"]["tp"]


@pytest.mark.parametrize("args, needle", [
    (dict(TUTORIAL, model="gpt-9"), "unknown model preset"),
    (dict(TUTORIAL, gpu="tpu"), "unknown GPU preset"),
    (dict(TUTORIAL, gpu={"bf16_tflops": 10}), "memory_gib"),
    (dict(TUTORIAL, headroom=2.0), "headroom"),
    (dict(TUTORIAL, max_suggestions=-1), "max_suggestions"),
    (dict(TUTORIAL, search=True, global_batch_size=None), "global_batch_size"),
    (dict(nodes=2, gpus_per_node=8, gpu="mi300x"), "give a model preset"),
])
def test_bad_input_fails_cleanly(args, needle):
    out = call(args, FailJson)
    assert needle in out["msg"]
    assert "Traceback" not in out["msg"]


def test_documentation_is_yaml_and_lists_every_option():
    import yaml

    doc = yaml.safe_load(parallel_plan.DOCUMENTATION)
    ret = yaml.safe_load(parallel_plan.RETURN)
    assert doc["attributes"]["check_mode"]["support"] == "full"
    for key in parallel_plan._PLANNER_KEYS + ("search", "max_suggestions"):
        assert key in doc["options"], key
    for key in ("valid", "violations", "suggestions", "data_parallel", "micro_batches",
                "bubble_fraction", "parameters", "memory", "flops_per_step", "step_time_s",
                "tokens_per_s_per_gpu"):
        assert key in ret, key
