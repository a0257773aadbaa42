# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Step-time model of the parallel-layout planner, calibrated on published Megatron runs.

PRIVATE to the collection: not a public API, may change without notice.

The step of one pipeline (the most loaded stage, the last one: it also runs the output
layer) is built from what each GPU does for one micro batch, layer by layer:

- GEMMs at the dense peak of the precision (FP8 peak for FP8 runs: Transformer Engine runs
  the linear layers in FP8) times an efficiency that falls with the per-GPU matrix sizes
  (``gemm_efficiency``: thin TP slices and short CP chunks cost what they cost);
- flash attention at the BF16 peak (FP8 does not speed it up), causal work only;
- memory-bound element-wise work (norms, activation, residuals, FP8 casts) at the HBM
  bandwidth;
- TP collectives (all-gather / reduce-scatter with sequence parallel) over the node's
  fabric: NVSwitch gives every GPU its full NVLink bandwidth, the xGMI mesh of MI300X
  gives a TP group of t GPUs only the t-1 direct links of each GPU;
- the CP ring exchange of K/V chunks, hidden behind attention while it is shorter;
- a fixed launch/synchronisation cost per layer and micro batch;
- pipeline P2P sends and the bubble (p-1)/v micro batches (Narayanan et al. 2021 2.2);
- the DP gradient reduce-scatter and parameter all-gather over DP x CP, exposed unless
  overlapped (then what the compute left after each model chunk's last backward / before
  its first forward cannot hide: ``exposed_dp``);
- recomputation: selective adds one attention forward, full one forward of each layer.

What "MFU 0.4" was: the old planner divided model FLOPs by ``GPUs x peak x mfu`` with a
fixed mfu (0.40 BF16, 0.25 FP8), so every layout had the same efficiency and the FP8
figure was a guess. ``mfu`` is now an optional *override*: when given, the model's
compute efficiency is scaled so that a large GEMM reaches that fraction of the peak (it
replaces the calibrated ``gemm_efficiency`` of the precision, nothing else). The MFU the
estimate implies is returned as ``model_flops_utilization`` (model FLOPs / (GPUs x peak
of the precision x step time)).

Constants: ``CALIBRATION`` below; the fit and its data are in docs/planner-calibration.md
(tools/planner_calibrate.py refits them; cases kept aside are never used by the fit).
"""

from __future__ import annotations

# Fitted on the calibration cases of docs/planner-calibration.md (H100, NeMo 24.12 FP8
# table and the Llama 3 405B BF16 run). The hold-out cases were not used.
CALIBRATION = {
    # Fraction of the dense peak a large GEMM reaches, per precision.
    "gemm_efficiency": {"bf16": 0.80, "fp8": 0.55},
    # Matrix dimension at which a GEMM runs at half its large-size efficiency
    # (efficiency factor x / (x + half) per dimension).
    "gemm_half_dim": 64.0,
    # Flash attention: fraction of the BF16 peak on causal work (forward + backward).
    "attention_efficiency": 0.50,
    # HBM bytes moved by element-wise kernels per token and per hidden unit of a layer
    # (forward + backward), a fraction of the bandwidth reached: see below.
    "elementwise_bytes": 40.0,
    # Fixed cost per layer and micro batch (kernel launches, synchronisation), seconds.
    "layer_overhead_s": 250e-6,
    # Fixed cost of one CP ring step of one layer (a flash-attention call on a chunk and
    # the P2P wait), seconds; 2 x CP steps per layer and micro batch (forward, backward).
    "cp_step_overhead_s": 100e-6,
}

# GPUs without a published Megatron run with its layout: their efficiency relative to the
# H100 constants above, from one benchmark suite run on both (Azure ND H100 v5 and ND
# MI300X v5, https://github.com/samuel-bohman/AI-benchmarking-guide Azure_Results/
# ND_H100_v5_results.md and ND_MI300X_v5_results.md): FP8 GEMM 8192^3 1290.1 TF on H100
# (65.2 % of 1978.9) and 1159.23 TF on MI300X (44.3 % of 2614.9); 4096^3 1216.9 and
# 955.17 TF (the size sensitivity gives MI300X a half-efficiency dimension ~3.5x H100's
# and, extrapolated to large sizes, ~0.72x H100's fraction of peak); FlashAttention-2
# 327.9 TF (H100, head dim 128, 33 % of BF16 peak) and 328.6 TF (MI300X, head dim 64,
# 25 %); HBM copy 2.90 of 3.35 TB/s and 4.11 of 5.3 TB/s. MI325X shares MI300X's
# compute dies (assumed equal). Other GPUs: H100 constants (low confidence).
GPU_EFFICIENCY = {
    "mi300x": {"gemm": 0.72, "gemm_half_dim": 3.5, "attention": 0.76, "hbm": 0.90,
               "large_gemm_flops": 1.1e12, "large_gemm_floor": 0.876},
    "mi325x": {"gemm": 0.72, "gemm_half_dim": 3.5, "attention": 0.76, "hbm": 0.90,
               "large_gemm_flops": 1.1e12, "large_gemm_floor": 0.876},
}
# The same suite shows MI300X slowing down on very large GEMMs (power-limited clocks):
# 16384^3 1015.1 TF and 32768^3 1029.14 TF against 1159.23 TF at 8192^3 (x0.876);
# modelled as a factor (F0 / F)^0.064 above F0 = 2 x 8192^3 FLOPs, floored at 0.876.
_NO_SCALING = {"gemm": 1.0, "gemm_half_dim": 1.0, "attention": 1.0, "hbm": 1.0,
               "large_gemm_flops": None, "large_gemm_floor": 1.0}

# Not fitted (stated assumptions).
ASSUMPTIONS = {
    # Achieved fraction of a link's peak for large collectives and P2P (nccl-tests bus
    # bandwidth reaches 75-90 % of the link rate on healthy fabrics).
    "link_efficiency": 0.75,
    # Achieved fraction of HBM bandwidth for element-wise kernels.
    "hbm_efficiency": 0.70,
    # Share of TP traffic hidden by --tp-comm-overlap (userbuffers GEMM overlap).
    "tp_overlap_hidden": 0.80,
    # Adam step: bytes read/written per locally owned parameter (fp32 param, grad, m, v in
    # and out, bf16 copy out).
    "optimizer_bytes_per_param": 30.0,
    # Gradients are reduced in fp32 (Megatron's default main_grad); parameters gathered in
    # bf16.
    "grad_bytes": 4.0,
    "param_gather_bytes": 2.0,
}


def _dim(x, half):
    return x / (x + half)


def gemm_efficiency(m, n, k, top, half):
    """Efficiency of an m x n x k GEMM: ``top`` for large shapes, less for thin ones."""
    return top * _dim(m, half) * _dim(n, half) * _dim(k, half)


def _gemm_time(m, n, k, peak, top, half, scale=None):
    flops = 2.0 * m * n * k
    eff = gemm_efficiency(m, n, k, top, half)
    if scale and scale.get("large_gemm_flops") and flops > scale["large_gemm_flops"]:
        eff *= max(scale["large_gemm_floor"], (scale["large_gemm_flops"] / flops) ** 0.064)
    return flops / (peak * eff)


def _fabric(ctx, group, in_node, per_node=1):
    """One-direction bytes/s a GPU gets for collectives in a group of ``group`` GPUs.

    Across nodes, a ring collective whose group has ``per_node`` members on each node
    crosses each node once per ring, and NCCL runs one ring (channel) per NIC: the bus
    bandwidth is the sum of those members' NICs, not one NIC (nccl-tests'
    "theoretical 100 GB/s" for 4 x 25 GB/s HDR NICs per node, NVIDIA/nccl-tests#152;
    600 Gb/s bus bandwidth on 8 x 100 Gb/s NICs "roughly matching our expectation",
    NVIDIA/nccl#495), capped by the node's GPU fabric."""
    gpu = ctx["gpu"]
    eff = ASSUMPTIONS["link_efficiency"]
    if not in_node or not gpu.get("interconnect_gbs"):
        nics = ctx["internode_bytes_per_s"] * max(per_node, 1)
        if gpu.get("interconnect_gbs"):
            nics = min(nics, gpu["interconnect_gbs"] * 1e9 / 2.0)
        return nics * eff
    total = gpu["interconnect_gbs"] * 1e9 / 2.0
    if gpu.get("interconnect") == "xgmi" and gpu.get("interconnect_link_gbs"):
        # Fully connected mesh: each GPU reaches the others of its group over one
        # direct link each.
        links = min(max(group - 1, 1), gpu.get("interconnect_links") or 1)
        return min(total, links * gpu["interconnect_link_gbs"] * 1e9 / 2.0) * eff
    return total * eff


def exposed_dp(comm, pass_time, chunks, pp):
    """Part of an overlapped DP collective (gradient reduce-scatter or parameter
    all-gather, ``comm`` seconds in all) the compute of the stage does not hide.

    ``pass_time`` is the backward (or forward) of one micro batch through the stage's
    layers. Megatron launches the collective of each model chunk once that chunk's last
    backward (first forward) is done, bucket by bucket (``grad_sync_func`` /
    ``param_sync_func`` in megatron/core/pipeline_parallel/schedules.py,
    ``forward_backward_pipelining_with_interleaving``). Without interleaving there is one
    chunk: only its last micro batch hides it. With ``chunks`` = VPP model chunks, chunk k
    is ready while the other chunks still have ``pp`` micro batches each to run, so the
    collectives queue behind each other: the last chunk's share is exposed, or the backlog
    when the queue is longer than the remaining compute."""
    own = pass_time / float(chunks)
    return max(0.0, comm / chunks - own, comm - (chunks - 1) * pp * own - own)


def step_time(ctx, dp, gbs, nmb, shard_params, vpad):
    """Estimated step time and its parts (seconds) of a layout whose arithmetic is defined.

    Returns None when the GPU has no peak figure for the precision."""
    m = ctx["model"]
    gpu = ctx["gpu"]
    cal = dict(CALIBRATION)
    bf16 = gpu.get("bf16_tflops")
    peak = gpu.get("fp8_tflops") if ctx["precision"] == "fp8" else bf16
    if not peak or not bf16 or not nmb:
        return None
    peak *= 1e12
    bf16 *= 1e12
    scale = GPU_EFFICIENCY.get(gpu.get("preset"), _NO_SCALING)
    top = cal["gemm_efficiency"][ctx["precision"]] * scale["gemm"]
    if ctx.get("mfu") is not None:
        top = ctx["mfu"]
    half = cal["gemm_half_dim"] * scale["gemm_half_dim"]
    tp, pp, cp, vpp = ctx["tp"], ctx["pp"], ctx["cp"], ctx["vpp"]
    gpn = ctx["gpus_per_node"]
    seq = ctx["seq_length"]
    L, h, a, g, ffn = m["layers"], m["hidden"], m["heads"], m["kv_heads"], m["ffn_hidden"]
    d = h // a
    tokens = ctx["micro_batch_size"] * seq / float(cp)
    sp = ctx["sequence_parallel"] and tp > 1
    gated = 2 if m["swiglu"] else 1
    kv_local = max(g // tp, 1) * d

    # One layer, one micro batch, forward.
    gemm_f = (_gemm_time(tokens, (a * d + 2 * g * d) / float(tp), h, peak, top, half, scale)
              + _gemm_time(tokens, h, a * d / float(tp), peak, top, half, scale)
              + _gemm_time(tokens, gated * ffn / float(tp), h, peak, top, half, scale)
              + _gemm_time(tokens, h, ffn / float(tp), peak, top, half, scale))
    chunk = seq / float(2 * cp) if cp > 1 else float(seq)
    attn_eff = cal["attention_efficiency"] * scale["attention"] * _dim(chunk, half)
    attn_f = 0.5 * 4.0 * tokens * seq * a * d / tp / (bf16 * attn_eff)
    mem_bw = ((gpu.get("memory_bandwidth_tbs") or 2.0) * 1e12 * ASSUMPTIONS["hbm_efficiency"]
              * scale["hbm"])
    elem_bytes = cal["elementwise_bytes"] * tokens * (h / float(tp if sp else 1) + ffn / float(tp))
    if ctx["precision"] == "fp8":
        # Casts of every GEMM input (read 2 bytes, write 1), forward, dgrad and wgrad.
        elem_bytes += 3.0 * 3.0 * tokens * (2.0 * h + a * d / float(tp) + ffn / float(tp))
    elem = elem_bytes / mem_bw
    # Forward is a third of GEMM work and of element-wise traffic; flash backward ~2.5x.
    layer = 3.0 * gemm_f + 3.5 * attn_f + elem + cal["layer_overhead_s"]

    tp_comm = 0.0
    if tp > 1:
        in_node = tp <= gpn and gpn % tp == 0
        volume = tokens * h * 2.0 * (tp - 1) / tp
        ops = 8.0 + (4.0 if ctx["recompute"] == "full" else 0.0)
        tp_comm = ops * volume / _fabric(ctx, tp, in_node)
        if ctx["tp_comm_overlap"]:
            tp_comm *= 1.0 - ASSUMPTIONS["tp_overlap_hidden"]
    cp_comm = 0.0
    if cp > 1:
        in_node = tp * cp <= gpn and gpn % (tp * cp) == 0
        kv_chunk = 2.0 * tokens * kv_local * 2.0
        ring = 3.0 * (cp - 1) * kv_chunk / _fabric(ctx, 2, in_node)
        cp_comm = max(0.0, ring - 3.5 * attn_f) + 2.0 * cp * cal["cp_step_overhead_s"]
    recompute = 0.0
    if ctx["recompute"] == "selective":
        recompute = attn_f
    elif ctx["recompute"] == "full":
        recompute = gemm_f + attn_f + elem / 3.0
    per_layer = layer + tp_comm + cp_comm + recompute

    # The last stage: its layers plus the output layer and the loss.
    logits = 3.0 * _gemm_time(tokens, vpad / float(tp), h, peak, top, half, scale)
    logits += 12.0 * tokens * vpad / tp / mem_bw
    interleaved = vpp > 1 and pp > 1
    p2p = 0.0
    if pp > 1:
        act = tokens * h * 2.0 / (tp if sp else 1)
        boundary_in_node = ctx["nodes"] == 1
        sends = 2.0 * (vpp if interleaved else 1)
        p2p = sends * act / _fabric(ctx, 2, boundary_in_node)
        if ctx["overlap_p2p_comm"] and interleaved:
            p2p *= 0.2
    micro = per_layer * L / float(pp) + logits + p2p
    bubble = (pp - 1) / float(vpp if interleaved else 1)
    pipeline = (nmb + bubble) * micro

    # Data parallel over DP x CP (gradients reduced, parameters gathered).
    shards = dp * cp
    dp_comm = 0.0
    # Megatron's rank order (TP fastest, then CP, then DP): a node holds gpn / TP members
    # of each DP x CP group.
    per_node = min(shards, gpn // tp) if tp <= gpn else 1
    if shards > 1 and not ctx["fsdp"]:
        in_node = tp * cp * dp <= gpn
        bw = _fabric(ctx, shards, in_node, per_node)
        ring = (shards - 1) / float(shards)
        if ctx["distributed_optimizer"]:
            reduce_t = shard_params * ASSUMPTIONS["grad_bytes"] * ring / bw
            gather_t = shard_params * ASSUMPTIONS["param_gather_bytes"] * ring / bw
        else:
            reduce_t = 2.0 * shard_params * ASSUMPTIONS["grad_bytes"] * ring / bw
            gather_t = 0.0
        chunks = vpp if interleaved else 1
        if ctx.get("overlap_grad_reduce"):
            reduce_t = exposed_dp(reduce_t, micro * 2.0 / 3.0, chunks, pp)
        if ctx["overlap_param_gather"]:
            gather_t = exposed_dp(gather_t, micro / 3.0, chunks, pp)
        dp_comm = reduce_t + gather_t
    elif shards > 1:
        # FSDP: parameters gathered forward and backward, gradients reduce-scattered,
        # per micro batch; overlapped with compute except for the first layer.
        bw = _fabric(ctx, shards, tp * cp * dp <= gpn, per_node)
        volume = shard_params * (2.0 * ASSUMPTIONS["param_gather_bytes"]
                                 + ASSUMPTIONS["grad_bytes"]) * (shards - 1) / shards
        dp_comm = max(0.0, nmb * volume / bw - pipeline * 0.8)
    owned = shard_params / float(shards if (ctx["distributed_optimizer"] or ctx["fsdp"]) else 1)
    optimizer = owned * ASSUMPTIONS["optimizer_bytes_per_param"] / mem_bw
    total = pipeline + dp_comm + optimizer
    return {
        "step_time_s": total,
        "peak_tflops": peak / 1e12,
        "gemm_efficiency_top": top,
        "parts_s": {
            "gemm": nmb * 3.0 * gemm_f * L / pp,
            "attention": nmb * 3.5 * attn_f * L / pp,
            "elementwise": nmb * elem * L / pp,
            "layer_overhead": nmb * cal["layer_overhead_s"] * L / pp,
            "tp_communication": nmb * tp_comm * L / pp,
            "cp_communication": nmb * cp_comm * L / pp,
            "recompute": nmb * recompute * L / pp,
            "output_layer": nmb * logits,
            "pp_p2p": nmb * p2p,
            "pipeline_bubble": bubble * micro,
            "dp_communication": dp_comm,
            "optimizer": optimizer,
        },
    }


# GPUs whose efficiency constants were fitted on published runs (docs/planner-calibration.md).
CALIBRATED_GPUS = ("h100",)


def outside_calibration(ctx):
    """Why the layout is outside the range of the published runs the model was fitted and
    checked on (empty when inside): every published run keeps the hidden size per TP rank
    at most 5120 (7B-13B at TP1, 70B-175B at TP4, 405B at TP8), keeps TP inside a node and
    uses CP only from 4096 tokens per CP rank (CP2 at 8k, CP16 at 128k). Outside that
    range the estimate is an extrapolation: the ranking lists such layouts after the
    others."""
    out = []
    m = ctx["model"]
    if ctx["tp"] < 1 or ctx["cp"] < 1 or ctx["seq_length"] < 1:
        return out
    if m["hidden"] / float(ctx["tp"]) > MAX_HIDDEN_PER_TP_RANK:
        out.append("hidden %d / TP %d = %d per TP rank: published runs of models this wide "
                   "use more TP" % (m["hidden"], ctx["tp"], m["hidden"] // ctx["tp"]))
    if ctx["tp"] > ctx["gpus_per_node"]:
        out.append("TP spans nodes")
    if ctx["cp"] > 1 and ctx["seq_length"] / float(ctx["cp"]) < MIN_TOKENS_PER_CP_RANK:
        out.append("CP %d at sequence %d: %d tokens per CP rank, published runs use CP only "
                   "from %d" % (ctx["cp"], ctx["seq_length"], ctx["seq_length"] // ctx["cp"],
                                MIN_TOKENS_PER_CP_RANK))
    return out


MAX_HIDDEN_PER_TP_RANK = 5120
MIN_TOKENS_PER_CP_RANK = 4096


def confidence(ctx):
    """How far the estimate can be trusted, and why: ``medium`` inside the calibrated
    range on a calibrated GPU, ``low`` otherwise. Never ``high``: the model is fitted on
    a handful of published runs (errors in docs/planner-calibration.md)."""
    reasons = ["outside the published runs: " + r for r in outside_calibration(ctx)]
    gpu = ctx["gpu"]
    if gpu.get("preset") not in CALIBRATED_GPUS:
        reasons.append(
            "GPU %s has no published Megatron run with its layout to fit on: H100-fitted "
            "constants scaled by measured GEMM/attention/HBM ratios%s"
            % (gpu.get("preset") or gpu.get("name"),
               "" if gpu.get("preset") in GPU_EFFICIENCY else " (none measured: unscaled)"))
    if ctx.get("mfu") is not None:
        reasons.append("mfu %.2f given: it replaces the calibrated large-GEMM efficiency"
                       % ctx["mfu"])
    if ctx["fsdp"]:
        reasons.append("FSDP: communication modelled coarsely, not calibrated")
    if not reasons:
        reasons.append("inside the calibrated range: calibration and hold-out errors are "
                       "in docs/planner-calibration.md")
        return "medium", reasons
    return "low", reasons
