# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.module_utils import _planner as pl
from ansible_collections.gpucluster.training.plugins.module_utils import _planner_search as search_mod

GIB = 1024 ** 3

# The ROCm tutorial's job (tutorials/000: TP=8 PP=4 MBS=4 BS=64 SEQ_LENGTH=4096 TE_FP8=1
# MODEL_SIZE=70B on 2 nodes x 8 MI300X).
TUTORIAL = dict(model="llama2-70b", nodes=2, gpus_per_node=8, gpu="mi300x", tp=8, pp=4,
                micro_batch_size=4, global_batch_size=64, seq_length=4096, precision="fp8")

# A valid base for the rule cases: Llama 2 70B, 2 x 8 MI300X, TP8 PP2 DP1.
BASE = dict(model="llama2-70b", nodes=2, gpus_per_node=8, gpu="mi300x", tp=8, pp=2,
            micro_batch_size=1, global_batch_size=16, seq_length=4096, precision="bf16")

SMALL = dict(layers=8, hidden=1024, ffn_hidden=4096, heads=16, kv_heads=16, vocab=32000,
             max_position_embeddings=4096)


def run(**overrides):
    spec = dict(BASE)
    spec.update(overrides)
    return pl.plan(spec)


def rules(result):
    return set(v.split(":", 1)[0] for v in result["violations"])


# ------------------------------------------------------------------ parameters


@pytest.mark.parametrize("name", sorted(pl.MODELS))
def test_parameter_count_matches_published(name):
    m = pl.MODELS[name]
    count = pl.parameter_count(m["layers"], m["hidden"], m["ffn_hidden"], m["heads"],
                               m["kv_heads"], m["vocab"])
    assert count == m["published_parameters"]


def test_llama2_70b_parameters_exact():
    assert run()["parameters"] == 68976648192


@pytest.mark.parametrize("name, published", [
    # planner-reference.md section 4 (counts published with the weights).
    ("llama2-7b", 6738415616), ("llama2-13b", 13015864320), ("llama2-70b", 68976648192),
    ("llama1-33b", 32528943616), ("llama1-65b", 65285660672), ("llama3-8b", 8030261248),
    ("llama3-70b", 70553706496), ("llama3-405b", 405853388800),
    ("llama1-7b", 6738415616), ("llama1-13b", 13015864320),
])
def test_plan_reports_published_parameters(name, published):
    result = pl.plan(dict(model=name, nodes=1, gpus_per_node=8, gpu="mi300x",
                          require_fit=False, seq_length=2048))
    assert result["parameters"] == published


@pytest.mark.parametrize("name, dims", [
    ("llama2-70b", (80, 8192, 28672, 64, 8, 32000, 4096)),
    ("llama1-33b", (60, 6656, 17920, 52, 52, 32000, 2048)),
    ("llama3-405b", (126, 16384, 53248, 128, 8, 128256, 131072)),
    ("llama3-8b", (32, 4096, 14336, 32, 8, 128256, 8192)),
])
def test_model_presets_match_reference_table(name, dims):
    m = pl.MODELS[name]
    assert (m["layers"], m["hidden"], m["ffn_hidden"], m["heads"], m["kv_heads"], m["vocab"],
            m["max_position_embeddings"]) == dims
    assert m["hidden"] // m["heads"] == 128 and m["source"]


def test_tied_embeddings_count_one_matrix():
    untied = pl.parameter_count(32, 4096, 11008, 32, 32, 32000)
    tied = pl.parameter_count(32, 4096, 11008, 32, 32, 32000, tie_embeddings=True)
    assert untied - tied == 32000 * 4096


def test_megatron_vocab_padding():
    assert pl.padded_vocab(32000, 1) == 32000
    assert pl.padded_vocab(32000, 8) == 32768
    assert pl.padded_vocab(128256, 8) == 129024


# ------------------------------------------------------------------ memory formulas


def test_zero_figure_1():
    # Rajbhandari et al. 2020 Fig. 1: 7.5B parameters, N_d = 64, K = 12.
    psi = 7.5e9
    got = [pl.zero_model_state_bytes(psi, stage, 64) / 1e9 for stage in (0, 1, 2, 3)]
    assert [round(g, 1) for g in got] == [120.0, 31.4, 16.6, 1.9]
    with pytest.raises(pl.PlannerError):
        pl.zero_model_state_bytes(psi, 4, 64)


@pytest.mark.parametrize("dtype, full, kept, sharded", [
    ("bf16", 18, 6, 12), ("fp16", 20, 4, 16), ("fp32", 16, 8, 8)])
def test_megatron_distributed_optimizer_bytes(dtype, full, kept, sharded):
    assert pl.megatron_bytes_per_parameter(False, 64, dtype) == full
    assert pl.megatron_bytes_per_parameter(True, 1, dtype) == full
    assert pl.megatron_bytes_per_parameter(True, 8, dtype) == kept + sharded / 8.0


S, B, H, A = 2048, 1, 12288, 96  # GPT-3 175B shapes, Korthikanti et al. Table 3.


@pytest.mark.parametrize("t", [1, 2, 8])
def test_korthikanti_table_2(t):
    sbh = S * B * H
    f = pl.activation_bytes_per_layer
    # Tensor parallel, no SP.
    assert f(S, B, H, A, t, "none", False) == pytest.approx(sbh * (10 + 24.0 / t + 5.0 * A * S / (H * t)))
    assert f(S, B, H, A, t, "selective", False) == pytest.approx(sbh * (10 + 24.0 / t))
    # Tensor + sequence parallel.
    if t > 1:
        assert f(S, B, H, A, t, "none", True) == pytest.approx(sbh / t * (34 + 5.0 * A * S / H))
        assert f(S, B, H, A, t, "selective", True) == pytest.approx(34.0 * sbh / t)
    # No parallelism: sbh(34 + 5as/h).
    assert f(S, B, H, A, 1, "none", True) == pytest.approx(sbh * (34 + 5.0 * A * S / H))
    # Full recompute: only the layer input, 2sbh.
    assert f(S, B, H, A, t, "full", False) == pytest.approx(2.0 * sbh)


def test_flash_attention_drops_the_score_term():
    f = pl.activation_bytes_per_layer
    assert f(S, B, H, A, 8, "none", True, flash_attention=True) == f(S, B, H, A, 8, "selective", True)


def test_swiglu_mlp_term_as_megatron_writes_it():
    # Megatron theoretical_memory_usage.py: sbh(18 + 4 ffn/h) per layer with SP + selective.
    got = pl.activation_bytes_per_layer(4096, 1, 8192, 64, 8, "selective", True, 28672)
    assert got == pytest.approx(4096 * 8192 * (18 + 4 * 28672 / 8192.0) / 8)


def _megatron_weight_and_optimizer(L, h, ffn, a, g, vpad, tp, pp, dp, dist_opt):
    """Transcription of Megatron-LM compute_weight_and_optimizer_memory (dense, RMSNorm,
    SwiGLU, untied, kv_channels * heads == hidden)."""
    self_attn = 2 * h * h * ((1 + g / float(a)) * 1.0)
    layer = 2 * h * (ffn * 1.5 + 1) + self_attn
    block = layer * L + h
    emb = h * vpad
    shard = (block / pp + emb) / tp
    if pp == 1:
        shard += emb / tp
    per = 18 if not dist_opt else 6 + 12.0 / dp
    return shard * per


def _megatron_activations(s, b, h, ffn, L, vpad, tp, pp, vpp, nmb):
    """Transcription of Megatron-LM compute_activation_memory (SP + selective)."""
    act = s * b * h * (18 + 4 * (ffn / float(h))) * L
    act += 8 * s * b * pp + s * b * h * pp
    if vpp is not None:
        act *= 1 + (pp - 1) / float(pp * vpp)
    elif pp > 1:
        act *= min(1, nmb / float(pp))
    if pp == 1:
        act += s * b * h * 4 * (1 + vpad / float(h))
    return act / tp


@pytest.mark.parametrize("tp, pp, vpp, mbs, gbs, nodes", [
    (8, 2, 1, 4, 64, 2), (4, 4, 1, 1, 64, 2), (8, 1, 1, 2, 32, 2), (2, 8, 2, 1, 32, 2),
    (8, 4, 1, 1, 2, 4),
])
def test_memory_matches_megatron_theoretical_report(tp, pp, vpp, mbs, gbs, nodes):
    result = pl.plan(dict(model="llama2-70b", nodes=nodes, gpus_per_node=8, gpu="mi300x",
                          tp=tp, pp=pp, vpp=vpp, micro_batch_size=mbs, global_batch_size=gbs,
                          seq_length=4096, recompute="selective", require_fit=False))
    assert result["violations"] == []
    dp = result["data_parallel"]
    vpad = pl.padded_vocab(32000, tp)
    want_w = _megatron_weight_and_optimizer(80, 8192, 28672, 64, 8, vpad, tp, pp, dp, True)
    want_a = _megatron_activations(4096, mbs, 8192, 28672, 80, vpad, tp, pp,
                                   vpp if vpp > 1 else None, result["micro_batches"])
    assert result["memory"]["weights_and_optimizer_gib"] == pytest.approx(want_w / GIB, abs=1e-3)
    assert result["memory"]["activations_gib"] == pytest.approx(want_a / GIB, abs=1e-3)


def test_llama2_70b_tp8_pp2_memory_worked_figure():
    # Most loaded shard: (68,451,041,280 layers+norm / 2 + 8192 x 32768) / 8 parameters,
    # 18 bytes each (distributed optimizer over DP 1 keeps all 18).
    r = run(micro_batch_size=4, global_batch_size=64)
    assert r["parameters_per_gpu"] == (68976648192 - 2 * 32000 * 8192) // 2 // 8 + 8192 * 32768 // 8
    assert r["memory"]["bytes_per_parameter"] == 18
    assert r["memory"]["weights_and_optimizer_gib"] == pytest.approx(4311826944 * 18 / GIB, abs=1e-3)
    assert r["memory"]["fits"] is True


def test_distributed_optimizer_and_fsdp_shard_the_state():
    plain = run(tp=8, pp=1, micro_batch_size=1, global_batch_size=16, distributed_optimizer=False)
    dist = run(tp=8, pp=1, micro_batch_size=1, global_batch_size=16, distributed_optimizer=True)
    assert plain["memory"]["bytes_per_parameter"] == 18
    assert dist["memory"]["bytes_per_parameter"] == 6 + 12 / 2.0
    fsdp = pl.plan(dict(model="llama2-7b", nodes=2, gpus_per_node=8, gpu="mi300x", fsdp=True,
                        micro_batch_size=1, global_batch_size=16, seq_length=4096))
    assert fsdp["valid"] and fsdp["memory"]["bytes_per_parameter"] == 18 / 16.0


def test_recompute_orders_activation_memory():
    none = run(recompute="none", flash_attention=False)["memory"]["activations_gib"]
    sel = run(recompute="selective")["memory"]["activations_gib"]
    full = run(recompute="full")["memory"]["activations_gib"]
    assert none > sel > full


# ------------------------------------------------------------------ flops, bubble, time


def test_bubble_fraction():
    assert pl.bubble_fraction(4, 16) == 3 / 16.0
    assert pl.bubble_fraction(4, 16, 2) == 3 / 32.0
    assert pl.bubble_fraction(1, 7) == 0
    r = run(micro_batch_size=1, global_batch_size=16)
    assert r["micro_batches"] == 16 and r["bubble_fraction"] == pytest.approx(1 / 16.0)


def test_megatron_flops_formula_and_6pd():
    # 12 B s L h^2 [(1 + g/a + s/h) + 1.5 ffn/h + V/(2Lh)] for Llama 2 70B, B=64, s=4096.
    got = pl.megatron_flops(64, 4096, 80, 8192, 28672, 64, 8, 32768)
    want = 12.0 * 64 * 4096 * 80 * 8192 ** 2 * (
        (1 + 8 / 64.0 + 4096 / 8192.0) + 1.5 * 28672 / 8192.0 + 32768 / (2.0 * 80 * 8192))
    assert got == pytest.approx(want)
    six_pd = 6.0 * 68976648192 * 64 * 4096
    assert 1.0 < got / six_pd < 1.15


def test_tokens_per_step_and_throughput_from_the_calibrated_model():
    r = run(micro_batch_size=4, global_batch_size=64)
    assert r["tokens_per_step"] == 64 * 4096
    # No assumed MFU any more: the calibrated model, at the BF16 dense peak of MI300X.
    assert r["assumptions"]["mfu"] is None and r["assumptions"]["peak_tflops"] == 1307.4
    assert r["tokens_per_s_per_gpu"] == pytest.approx(64 * 4096 / (r["step_time_s"] * 16), rel=1e-3)
    assert r["model_flops_utilization"] == pytest.approx(r["tflops_per_gpu"] / 1307.4, abs=1e-3)
    assert sum(r["step_time_parts_s"].values()) == pytest.approx(r["step_time_s"], rel=1e-3)
    # mfu overrides the calibrated large-GEMM efficiency: lower is slower, higher faster.
    slower = run(micro_batch_size=4, global_batch_size=64, mfu=0.3)
    faster = run(micro_batch_size=4, global_batch_size=64, mfu=0.99)
    assert slower["tokens_per_s_per_gpu"] < r["tokens_per_s_per_gpu"] < faster["tokens_per_s_per_gpu"]
    full = run(micro_batch_size=4, global_batch_size=64, recompute="full")
    assert full["step_time_s"] > r["step_time_s"]
    sel = run(micro_batch_size=4, global_batch_size=64, recompute="selective")
    assert r["step_time_s"] < sel["step_time_s"] < full["step_time_s"]


def test_fp8_speeds_up_gemms_only():
    bf16 = run(micro_batch_size=1, global_batch_size=16)
    fp8 = run(micro_batch_size=1, global_batch_size=16, precision="fp8")
    assert fp8["assumptions"]["peak_tflops"] == 2614.9
    b, f = bf16["step_time_parts_s"], fp8["step_time_parts_s"]
    assert f["gemm"] < b["gemm"]
    assert f["attention"] == pytest.approx(b["attention"])
    assert f["tp_communication"] == pytest.approx(b["tp_communication"])
    # Less than 2x overall although the FP8 peak is 2x.
    assert 1.0 < bf16["step_time_s"] / fp8["step_time_s"] < 2.0


def test_throughput_states_confidence():
    r = run(micro_batch_size=4, global_batch_size=64)
    assert r["assumptions"]["throughput_confidence"] == "low"
    assert any("no published Megatron run" in x for x in r["assumptions"]["throughput_confidence_reasons"])
    h = pl.plan(dict(model="llama2-70b", nodes=8, gpus_per_node=8, gpu="h100", tp=4, pp=4,
                     vpp=5, global_batch_size=128, seq_length=4096, precision="fp8"))
    assert h["assumptions"]["throughput_confidence"] == "medium"


def test_thin_gemms_cost_more():
    from ansible_collections.gpucluster.training.plugins.module_utils import _planner_throughput as tm
    big = tm.gemm_efficiency(8192, 8192, 8192, 0.8, 96.0)
    thin = tm.gemm_efficiency(8192, 512, 8192, 0.8, 96.0)
    assert thin < big < 0.8


# ------------------------------------------------------------------ the tutorial


def test_tutorial_layout_fails_on_world_size_only():
    r = pl.plan(TUTORIAL)
    assert r["valid"] is False
    assert r["violations"] == [
        "world_size: world size 16 (2 nodes x 8 GPUs) is not divisible by TP x PP x CP = "
        "8 x 4 x 1 = 32"]
    assert r["data_parallel"] is None and r["memory"] is None


def test_tutorial_suggests_tp8_pp2_dp1_with_memory():
    r = pl.plan(TUTORIAL)
    top = r["suggestions"][0]
    assert (top["tp"], top["pp"], top["cp"], top["dp"]) == (8, 2, 1, 1)
    assert (top["micro_batch_size"], top["global_batch_size"]) == (4, 64)
    assert top["fits"] is True and 100 < top["memory_total_gib"] < 172.8
    assert "TP8 PP2 CP1 DP1" in top["summary"] and "GiB/GPU" in top["summary"]
    text = pl.format_failure(r)
    assert "world_size" in text and "TP8 PP2 CP1 DP1 MBS4 GBS64" in text


def test_every_suggestion_is_itself_valid():
    r = pl.plan(TUTORIAL)
    assert len(r["suggestions"]) == 5
    for s in r["suggestions"]:
        again = pl.plan(dict(TUTORIAL, tp=s["tp"], pp=s["pp"], cp=s["cp"], vpp=s["vpp"],
                             micro_batch_size=s["micro_batch_size"],
                             global_batch_size=s["global_batch_size"], recompute=s["recompute"]))
        assert again["valid"], again["violations"]


def test_fixed_tutorial_layout_is_valid():
    r = pl.plan(dict(TUTORIAL, pp=2))
    assert r["valid"] and r["data_parallel"] == 1 and r["micro_batches"] == 16
    assert "--tensor-model-parallel-size" in r["megatron_args"]
    assert r["megatron_args"][r["megatron_args"].index("--pipeline-model-parallel-size") + 1] == "2"
    assert "--transformer-impl" in r["megatron_args"]


def test_search_llama2_70b_on_2x8_mi300x():
    r = pl.plan_search(dict(model="llama2-70b", nodes=2, gpus_per_node=8, gpu="mi300x",
                            global_batch_size=64, seq_length=4096))
    assert r["valid"] and r["layouts"]
    # The layouts inside the calibrated range, then the extrapolated ones; each in tiers:
    # a tier holds the best remaining estimate and every layout within the tie band of
    # it, smaller TP x PP first, then the faster.
    inside = [x for x in r["layouts"] if not x["extrapolated"]]
    outside = [x for x in r["layouts"] if x["extrapolated"]]
    assert r["layouts"] == inside + outside and inside
    tiers = [x["tier"] for x in r["layouts"]]
    assert tiers == sorted(tiers) and tiers[0] == 1
    band = search_mod.RANK_TIE_BAND
    for tier in set(tiers):
        group = [x for x in r["layouts"] if x["tier"] == tier]
        speeds = [x["tokens_per_s_per_gpu"] for x in group]
        assert min(speeds) >= max(speeds) * (1 - band) - 0.1
        keys = [(x["tp"] * x["pp"], -x["tokens_per_s_per_gpu"]) for x in group]
        assert keys == sorted(keys)
        assert all(x["tied"] == (len(group) > 1) for x in group)
        later = [x["tokens_per_s_per_gpu"] for x in r["layouts"]
                 if x["tier"] > tier and bool(x["extrapolated"]) == bool(group[0]["extrapolated"])]
        assert all(v < max(speeds) * (1 - band) for v in later)
    assert all(x["fits"] for x in r["layouts"])
    best = r["layouts"][0]
    assert (r["layout"]["tp"], r["layout"]["pp"], r["layout"]["cp"]) == (best["tp"], best["pp"], best["cp"])


def test_search_needs_global_batch_and_reports_when_nothing_fits():
    with pytest.raises(pl.PlannerError):
        pl.search(dict(model="llama2-70b", nodes=1, gpus_per_node=8, gpu="mi300x"))
    r = pl.plan_search(dict(model="llama3-405b", nodes=1, gpus_per_node=1, gpu="a100-40gb",
                            global_batch_size=8, seq_length=4096))
    assert r["valid"] is False and any(v.startswith("search:") for v in r["violations"])


def test_nearest_layouts_escalate_recompute_when_needed():
    # 2 x 8 A100 40GB cannot hold Llama 2 13B with long micro batches without recompute.
    r = pl.plan(dict(model="llama2-13b", nodes=2, gpus_per_node=8, gpu="a100-40gb", tp=8, pp=4,
                     micro_batch_size=8, global_batch_size=64, seq_length=4096))
    assert not r["valid"]
    assert r["suggestions"] and all(s["fits"] for s in r["suggestions"])


# ------------------------------------------------------------------ rules: fail and pass

RULE_CASES = [
    # rule, failing overrides, passing overrides
    ("positive", dict(tp=0), dict(tp=8)),
    ("world_size", dict(tp=8, pp=4), dict(tp=8, pp=2)),
    ("tp_within_node", dict(nodes=4, gpus_per_node=4, tp=8, pp=2),
     dict(nodes=4, gpus_per_node=4, tp=8, pp=2, allow_tp_across_nodes=True)),
    ("hidden_heads", dict(model=None, layers=8, hidden=1000, ffn_hidden=4096, heads=16, kv_heads=16,
                          vocab=32000, tp=1, pp=1, global_batch_size=16),
     dict(model=None, layers=8, hidden=1024, ffn_hidden=4096, heads=16, kv_heads=16, vocab=32000,
          tp=1, pp=1, global_batch_size=16)),
    ("heads_tp", dict(model="llama1-33b", tp=8, pp=2), dict(model="llama1-33b", tp=4, pp=4)),
    ("kv_heads", dict(SMALL, model=None, kv_heads=6, tp=1, pp=1),
     dict(SMALL, model=None, kv_heads=8, tp=1, pp=1)),
    ("kv_heads_tp", dict(SMALL, model=None, kv_heads=4, tp=8, pp=2),
     dict(SMALL, model=None, kv_heads=8, tp=8, pp=2)),
    ("ffn_tp", dict(SMALL, model=None, ffn_hidden=2732, tp=8, pp=2),
     dict(SMALL, model=None, ffn_hidden=2736, tp=8, pp=2)),
    ("layers_pp", dict(model="llama1-33b", tp=2, pp=8, seq_length=2048),
     dict(model="llama1-33b", tp=4, pp=4, seq_length=2048)),
    ("vpp_pp", dict(tp=8, pp=2, vpp=2), dict(tp=4, pp=4, vpp=2)),
    ("vpp_pp", dict(tp=8, pp=2, vpp=2), dict(tp=8, pp=2, vpp=2, overlap_p2p_comm=True)),
    ("vpp_layers", dict(tp=4, pp=4, vpp=3, global_batch_size=16),
     dict(tp=4, pp=4, vpp=4, global_batch_size=16)),
    ("vpp_microbatches", dict(tp=4, pp=4, vpp=2, global_batch_size=6),
     dict(tp=4, pp=4, vpp=2, global_batch_size=8)),
    ("global_batch", dict(micro_batch_size=2, global_batch_size=3),
     dict(micro_batch_size=2, global_batch_size=4)),
    ("sequence_parallel", dict(seq_length=4092), dict(seq_length=4088)),
    ("sequence_parallel", dict(seq_length=4092), dict(seq_length=4092, sequence_parallel=False)),
    ("tp_comm_overlap", dict(tp_comm_overlap=True, sequence_parallel=False),
     dict(tp_comm_overlap=True)),
    ("context_parallel", dict(tp=8, pp=1, cp=2, seq_length=4094), dict(tp=8, pp=1, cp=2)),
    ("max_positions", dict(seq_length=8192), dict(seq_length=4096)),
    ("fsdp_dist_opt", dict(tp=1, pp=1, model="llama2-7b", fsdp=True, distributed_optimizer=True),
     dict(tp=1, pp=1, model="llama2-7b", fsdp=True)),
    ("fsdp_pp", dict(tp=1, pp=2, model="llama2-7b", fsdp=True),
     dict(tp=1, pp=1, model="llama2-7b", fsdp=True)),
    ("fsdp_untied", dict(tp=1, pp=1, model="llama2-7b", fsdp=True, tie_embeddings=True),
     dict(tp=1, pp=1, model="llama2-7b", fsdp=True, tie_embeddings=False)),
    ("overlap_param_gather", dict(overlap_param_gather=True, distributed_optimizer=False),
     dict(overlap_param_gather=True, distributed_optimizer=True)),
    ("fp8_param_gather", dict(fp8_param_gather=True, precision="bf16"),
     dict(fp8_param_gather=True, precision="fp8")),
    ("fp8_gpu", dict(gpu="a100-80gb", precision="fp8", tp=8, pp=4, nodes=4),
     dict(gpu="h100", precision="fp8", tp=8, pp=4, nodes=4)),
    ("fp8_shape", dict(precision="fp8", seq_length=4092, sequence_parallel=False),
     dict(precision="fp8", seq_length=4088, sequence_parallel=False)),
    ("fp8_shape", dict(SMALL, model=None, hidden=1032, heads=12, kv_heads=12, ffn_hidden=4096,
                       precision="fp8", tp=4, pp=4),
     dict(SMALL, model=None, precision="fp8", tp=4, pp=4)),
    ("memory", dict(gpu="a100-40gb", tp=8, pp=1, nodes=2),
     dict(gpu="a100-40gb", tp=8, pp=1, nodes=2, require_fit=False)),
]


@pytest.mark.parametrize("rule, failing, passing", RULE_CASES,
                         ids=["%s-%d" % (c[0], i) for i, c in enumerate(RULE_CASES)])
def test_rule_fails_and_passes(rule, failing, passing):
    bad = run(**failing)
    assert rule in rules(bad), bad["violations"]
    assert bad["valid"] is False
    line = [v for v in bad["violations"] if v.startswith(rule + ":")][0]
    assert any(ch.isdigit() for ch in line) or rule in ("fsdp_untied", "fsdp_dist_opt",
                                                        "overlap_param_gather", "fp8_gpu",
                                                        "fp8_param_gather", "tp_comm_overlap")
    good = run(**passing)
    assert rule not in rules(good), good["violations"]


def test_all_violations_are_listed_together():
    r = run(model="llama1-33b", tp=16, pp=7, nodes=1, gpus_per_node=8, seq_length=2050,
            precision="fp8", gpu="a100-80gb")
    assert {"world_size", "tp_within_node", "heads_tp", "kv_heads_tp", "layers_pp",
            "sequence_parallel", "max_positions", "fp8_gpu"} <= rules(r)


# ------------------------------------------------------------------ input errors


@pytest.mark.parametrize("spec", [
    dict(BASE, model="gpt-5"),
    dict(BASE, gpu="tpu-v5"),
    dict(BASE, tp="eight"),
    dict(BASE, tp=True),
    dict(BASE, tp=2.5),
    dict(BASE, precision="fp4"),
    dict(BASE, recompute="some"),
    dict(BASE, headroom=1.5),
    dict(BASE, mfu=0),
    dict(BASE, internode_link="carrier-pigeon"),
    dict(BASE, gpu=None),
    dict(BASE, model=None),
    dict(BASE, gpus_per_node=None),
    dict(BASE, fsdp="maybe"),
    "llama2-70b",
])
def test_bad_input_raises_planner_error(spec):
    with pytest.raises(pl.PlannerError):
        pl.plan(spec)


def test_strings_from_jinja_are_accepted():
    r = pl.plan(dict(BASE, tp="8", pp="2", nodes="2", fsdp="false", headroom="0.2"))
    assert r["valid"] and r["memory"]["headroom_fraction"] == 0.2


def test_gpu_info_facts_as_gpu_input_give_gpus_per_node():
    facts = {"vendor": "amd", "count": 8, "model": "AMD Instinct MI300X", "arch": "gfx942",
             "memory_mib": 196592, "slurm_type": "mi300x"}
    spec = dict(BASE, gpu=facts)
    del spec["gpus_per_node"]
    r = pl.plan(spec)
    assert r["valid"] and r["cluster"]["gpus_per_node"] == 8
    assert r["gpu"]["preset"] == "mi300x" and r["gpu"]["from"] == "gpu_info"
    assert r["memory"]["gpu_memory_gib"] == pytest.approx(196592 / 1024.0, abs=1e-3)


def test_unknown_gpu_from_facts_plans_memory_without_throughput():
    facts = {"vendor": "amd", "count": 8, "model": "Some GPU", "memory_mib": 196608,
             "slurm_type": "newgpu"}
    r = pl.plan(dict(BASE, gpu=facts))
    assert r["valid"] and r["memory"]["fits"] is True
    assert r["step_time_s"] is None and r["tokens_per_s_per_gpu"] is None
    assert r["warnings"]


# ------------------------------------------------------------------ property


_small = st.integers(min_value=-2, max_value=40)


@settings(max_examples=400, deadline=None)
@given(layers=_small, hidden=st.integers(-2, 2048), ffn=st.integers(-2, 4096), heads=_small,
       kv=_small, vocab=st.integers(-2, 50000), nodes=_small, gpn=_small, tp=_small, pp=_small,
       cp=_small, vpp=_small, mbs=_small, gbs=st.one_of(st.none(), _small),
       seq=st.integers(-2, 9000), precision=st.sampled_from(["bf16", "fp8"]),
       recompute=st.sampled_from(["none", "selective", "full"]), fsdp=st.booleans(),
       gpu=st.sampled_from(["mi300x", "mi250x", "a100-40gb", "h100"]))
def test_small_ints_give_a_plan_or_violations_never_an_exception(
        layers, hidden, ffn, heads, kv, vocab, nodes, gpn, tp, pp, cp, vpp, mbs, gbs, seq,
        precision, recompute, fsdp, gpu):
    spec = dict(layers=layers, hidden=hidden, ffn_hidden=ffn, heads=heads, kv_heads=kv,
                vocab=vocab, nodes=nodes, gpus_per_node=gpn, gpu=gpu, tp=tp, pp=pp, cp=cp,
                vpp=vpp, micro_batch_size=mbs, global_batch_size=gbs, seq_length=seq,
                precision=precision, recompute=recompute, fsdp=fsdp)
    r = pl.plan(spec, max_suggestions=2)
    assert isinstance(r["valid"], bool)
    assert isinstance(r["violations"], list)
    if r["valid"]:
        assert r["violations"] == [] and r["memory"]["fits"] is True
        assert r["data_parallel"] * tp * pp * cp == nodes * gpn
    else:
        assert r["violations"] and all(isinstance(v, str) and ":" in v for v in r["violations"])
        assert pl.format_failure(r)


def test_fp8_keeps_linear_inputs_in_one_byte():
    # Transformer Engine saves the FP8 copy of each linear layer's input (QKV, projection,
    # FC1, FC2): 2 + 2 + 2 + 2 ffn/h bytes per sbh become half as many.
    f = pl.activation_bytes_per_layer
    sbh = S * B * H
    assert f(S, B, H, A, 8, "selective", True, fp8=True) == pytest.approx(27.0 * sbh / 8)
    assert f(S, B, H, A, 8, "selective", False, fp8=True) == pytest.approx(sbh * (8 + 19.0 / 8))
    assert f(S, B, H, A, 8, "full", True, fp8=True) == f(S, B, H, A, 8, "full", True)
