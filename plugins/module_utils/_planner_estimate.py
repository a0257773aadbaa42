# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Estimates of one layout: memory of the most loaded GPU (Megatron's theoretical memory
report and Korthikanti et al. 2022), model FLOPs, and step time from the calibrated
throughput model (``_planner_throughput``); ``evaluate`` runs the rules and the estimates.

PRIVATE to the collection: not a public API, may change without notice.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils import _planner_throughput
from ansible_collections.gpucluster.training.plugins.module_utils._planner_formulas import (
    GIB,
    activation_bytes_per_layer,
    bubble_fraction,
    megatron_bytes_per_parameter,
    megatron_flops,
    padded_vocab,
)
from ansible_collections.gpucluster.training.plugins.module_utils._planner_rules import check


def estimate(ctx, dp, gbs, nmb):
    """Memory, FLOPs and time of a layout whose arithmetic is defined (dp >= 1,
    hidden % heads == 0, micro_batches known or None)."""
    m = ctx["model"]
    gpu = ctx["gpu"]
    tp, pp, cp, vpp = ctx["tp"], ctx["pp"], ctx["cp"], ctx["vpp"]
    mbs, seq = ctx["micro_batch_size"], ctx["seq_length"]
    L, h, a, g, ffn = m["layers"], m["hidden"], m["heads"], m["kv_heads"], m["ffn_hidden"]
    world = ctx["nodes"] * ctx["gpus_per_node"]
    vpad = padded_vocab(m["vocab"], tp)
    d = h // a

    # Weights, gradients, optimizer: Megatron theoretical_memory_usage.py.
    layer_params = (2 * h * a * d + 2 * h * g * d + (3 if m["swiglu"] else 2) * h * ffn + 2 * h)
    block = L * layer_params + h
    embedding = h * vpad
    shard = (block / float(pp) + embedding) / tp
    if not m["tie_embeddings"] and pp == 1:
        shard += embedding / float(tp)
    shards = dp * cp
    if ctx["fsdp"]:
        bytes_per_param = 18.0 / shards
        gathered = 4.0 * max(layer_params, embedding) / tp
    else:
        bytes_per_param = megatron_bytes_per_parameter(ctx["distributed_optimizer"], shards)
        gathered = 0.0
    if ctx["fp8_param_gather"]:
        bytes_per_param -= 1.0 if not ctx["fsdp"] else 1.0 / shards
    weights_bytes = shard * bytes_per_param + gathered

    # Activations of the first pipeline stage (the most loaded rank).
    s_local = seq / float(cp)
    sp = ctx["sequence_parallel"] and tp > 1
    per_layer = activation_bytes_per_layer(s_local, mbs, h, a, tp, ctx["recompute"],
                                           ctx["sequence_parallel"], ffn,
                                           ctx["flash_attention"], ctx["precision"] == "fp8")
    t_sp = tp if sp else 1
    act = per_layer * L
    act += (8.0 * s_local * mbs * pp + s_local * mbs * h * pp) / t_sp
    interleaved = vpp > 1 and pp > 1
    if interleaved:
        act *= 1.0 + (pp - 1) / float(pp * vpp)
    elif pp > 1 and nmb is not None:
        act *= min(1.0, nmb / float(pp))
    if pp == 1:
        act += 4.0 * s_local * mbs * (h / float(t_sp) + vpad / float(tp))
    total = weights_bytes + act
    usable = None
    fits = None
    if gpu.get("memory_gib"):
        usable = gpu["memory_gib"] * (1.0 - ctx["headroom"])
        fits = total / GIB <= usable

    # FLOPs and time.
    flops = megatron_flops(gbs, seq, L, h, ffn, a, g, vpad, m["swiglu"])
    attn_core = 4.0 * gbs * seq * L * h * h * (seq / float(h)) * (a * d / float(h))
    if ctx["recompute"] == "full":
        layer_flops = flops - 12.0 * gbs * seq * L * h * h * (vpad / (2.0 * L * h))
        extra = layer_flops / 3.0
    elif ctx["recompute"] == "selective":
        extra = attn_core
    else:
        extra = 0.0
    bubble = bubble_fraction(pp, nmb, vpp if interleaved else 1) if nmb else None
    timing = _planner_throughput.step_time(ctx, dp, gbs, nmb, shard, vpad)
    step = tokens_gpu = tflops_gpu = mfu = peak = parts = None
    if timing:
        step = timing["step_time_s"]
        peak = timing["peak_tflops"]
        parts = timing["parts_s"]
        tokens_gpu = gbs * seq / (step * world)
        tflops_gpu = flops / (step * world * 1e12)
        mfu = tflops_gpu / peak
    return {
        "padded_vocab": vpad,
        "parameters_per_gpu": int(round(shard)),
        "memory": {
            "weights_and_optimizer_gib": weights_bytes / GIB,
            "activations_gib": act / GIB,
            "total_gib": total / GIB,
            "gpu_memory_gib": gpu.get("memory_gib"),
            "usable_gib": usable,
            "headroom_fraction": ctx["headroom"],
            "fits": fits,
            "bytes_per_parameter": bytes_per_param,
            "activations_per_layer_gib": per_layer / GIB,
        },
        "flops_per_step": flops,
        "recompute_flops_per_step": extra,
        "bubble_fraction": bubble,
        "step_time_s": step,
        "step_time_parts_s": parts,
        "tokens_per_s_per_gpu": tokens_gpu,
        "tflops_per_gpu": tflops_gpu,
        "model_flops_utilization": mfu,
        "peak_tflops": peak,
    }


def megatron_args(ctx, gbs):
    m = ctx["model"]
    args = [
        "--tensor-model-parallel-size", str(ctx["tp"]),
        "--pipeline-model-parallel-size", str(ctx["pp"]),
        "--context-parallel-size", str(ctx["cp"]),
        "--micro-batch-size", str(ctx["micro_batch_size"]),
        "--global-batch-size", str(gbs),
        "--seq-length", str(ctx["seq_length"]),
        "--num-layers", str(m["layers"]),
        "--hidden-size", str(m["hidden"]),
        "--ffn-hidden-size", str(m["ffn_hidden"]),
        "--num-attention-heads", str(m["heads"]),
        "--max-position-embeddings", str(max(m.get("max_position_embeddings") or 0,
                                             ctx["seq_length"])),
        "--bf16",
    ]
    if m["kv_heads"] != m["heads"]:
        args += ["--group-query-attention", "--num-query-groups", str(m["kv_heads"])]
    if ctx["vpp"] > 1:
        args += ["--num-layers-per-virtual-pipeline-stage",
                 str(m["layers"] // (ctx["pp"] * ctx["vpp"]))]
    if ctx["sequence_parallel"] and ctx["tp"] > 1:
        args.append("--sequence-parallel")
    if ctx["fsdp"]:
        args.append("--use-torch-fsdp2")
    if ctx["distributed_optimizer"]:
        args.append("--use-distributed-optimizer")
    if ctx.get("overlap_grad_reduce"):
        args.append("--overlap-grad-reduce")
    if ctx["overlap_param_gather"]:
        args.append("--overlap-param-gather")
    if ctx["overlap_p2p_comm"] and ctx["vpp"] > 1:
        args.append("--overlap-p2p-comm")
    if ctx["tp_comm_overlap"]:
        args.append("--tp-comm-overlap")
    if ctx["recompute"] == "selective":
        args += ["--recompute-granularity", "selective"]
    elif ctx["recompute"] == "full":
        args += ["--recompute-granularity", "full", "--recompute-method", "uniform",
                 "--recompute-num-layers", "1"]
    if ctx["precision"] == "fp8":
        args += ["--transformer-impl", "transformer_engine", "--fp8-format", "hybrid"]
        if ctx["fp8_param_gather"]:
            args.append("--fp8-param-gather")
    if ctx["flash_attention"]:
        args.append("--use-flash-attn")
    return args


def layout_summary(ctx, derived):
    return {
        "tp": ctx["tp"],
        "pp": ctx["pp"],
        "cp": ctx["cp"],
        "vpp": ctx["vpp"],
        "dp": derived["data_parallel"],
        "micro_batch_size": ctx["micro_batch_size"],
        "global_batch_size": derived["global_batch_size"],
        "seq_length": ctx["seq_length"],
        "precision": ctx["precision"],
        "recompute": ctx["recompute"],
        "sequence_parallel": bool(ctx["sequence_parallel"] and ctx["tp"] > 1),
        "distributed_optimizer": ctx["distributed_optimizer"],
        "fsdp": ctx["fsdp"],
    }


def evaluate(ctx):
    """Rules + estimates for one normalized context."""
    violations, derived = check(ctx)
    m = ctx["model"]
    result = {
        "layout": layout_summary(ctx, derived),
        "violations": violations,
        "derived": derived,
        "estimate": None,
    }
    computable = (derived["data_parallel"] is not None
                  and not any(v.startswith("positive:") for v in violations)
                  and m["hidden"] % m["heads"] == 0)
    if computable:
        result["estimate"] = estimate(ctx, derived["data_parallel"],
                                      derived["global_batch_size"], derived["micro_batches"])
        mem = result["estimate"]["memory"]
        if ctx["require_fit"] and mem["fits"] is False:
            violations.append(
                "memory: estimated %.1f GiB per GPU on the most loaded rank (weights and "
                "optimizer %.1f + activations %.1f) exceeds %.1f GiB usable of %.1f GiB on %s "
                "(%.0f%% headroom)"
                % (mem["total_gib"], mem["weights_and_optimizer_gib"], mem["activations_gib"],
                   mem["usable_gib"], mem["gpu_memory_gib"], ctx["gpu"].get("name"),
                   100 * ctx["headroom"]))
    return result
