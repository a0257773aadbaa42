# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.parallel_plan import (
    FilterModule,
    parallel_plan,
)

TUTORIAL = dict(model="llama2-70b", nodes=2, gpus_per_node=8, gpu="mi300x", tp=8, pp=4,
                micro_batch_size=4, global_batch_size=64, seq_length=4096, precision="fp8")


def test_registered():
    assert FilterModule().filters()["parallel_plan"] is parallel_plan


def test_invalid_layout_fails_rendering_with_every_violation_and_suggestions():
    with pytest.raises(AnsibleFilterError) as info:
        parallel_plan(TUTORIAL)
    assert "world_size" in str(info.value) and "TP8 PP2 CP1 DP1" in str(info.value)


def test_non_strict_returns_the_invalid_plan():
    out = parallel_plan(TUTORIAL, strict=False)
    assert out["valid"] is False and out["suggestions"]


def test_non_strict_invalid_plan_carries_the_strict_failure_text():
    # the training_jobs role fails with this text itself (its assert names the task)
    with pytest.raises(AnsibleFilterError) as info:
        parallel_plan(TUTORIAL)
    failure = parallel_plan(TUTORIAL, strict=False)["failure"]
    assert str(info.value) == "parallel_plan: " + failure
    assert failure.startswith("invalid parallel layout (") and "nearest valid layouts for 2 x 8 GPUs:" in failure
    assert "failure" not in parallel_plan(dict(TUTORIAL, pp=2), strict=False)


def test_valid_layout_gives_megatron_args():
    out = parallel_plan(dict(TUTORIAL, pp=2))
    args = out["megatron_args"]
    assert args[args.index("--tensor-model-parallel-size") + 1] == "8"
    assert args[args.index("--global-batch-size") + 1] == "64"


def test_search():
    spec = dict(TUTORIAL)
    for key in ("tp", "pp", "micro_batch_size"):
        del spec[key]
    out = parallel_plan(spec, search=True)
    assert out["valid"] and out["layouts"]


@pytest.mark.parametrize("bad", ["llama2-70b", None, dict(TUTORIAL, model="nope")])
def test_bad_input_is_a_filter_error(bad):
    with pytest.raises(AnsibleFilterError):
        parallel_plan(bad)
