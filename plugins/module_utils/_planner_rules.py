# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Megatron-LM start-up rules of a parallel layout: ``check(ctx)`` returns one line per
broken rule, naming it and the numbers (rules are never raised).

PRIVATE to the collection: not a public API, may change without notice.

Sources: Megatron-LM ``megatron/training/arguments.py`` ``validate_args`` (NVIDIA HEAD and
the stricter ROCm/Megatron-LM and v0.9 versions), ``transformer_config.py``,
``num_microbatches_calculator.py``, ``core/pipeline_parallel/schedules.py`` (interleaved
schedule: microbatches divisible by PP), ``tensor_parallel/mappings.py``, Transformer
Engine ``assert_dim_for_fp8_exec``.
"""

from __future__ import annotations

MODEL_DIMS = ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab")
LAYOUT_INTS = ("tp", "pp", "cp", "vpp", "micro_batch_size")


def _positive(ctx, out):
    m = ctx["model"]
    for key in MODEL_DIMS:
        if m[key] < 1:
            out.append("positive: model %s must be >= 1 (got %d)" % (key, m[key]))
    if m.get("max_position_embeddings") is not None and m["max_position_embeddings"] < 1:
        out.append("positive: max_position_embeddings must be >= 1 (got %d)"
                   % m["max_position_embeddings"])
    for key in ("nodes", "gpus_per_node") + LAYOUT_INTS + ("seq_length",):
        if ctx[key] < 1:
            out.append("positive: %s must be >= 1 (got %d)" % (key, ctx[key]))
    if ctx["global_batch_size"] is not None and ctx["global_batch_size"] < 1:
        out.append("positive: global_batch_size must be >= 1 (got %d)" % ctx["global_batch_size"])
    return not out


def check(ctx):
    """Every Megatron rule that applies; returns (violations, derived) where derived holds
    world_size, data_parallel, global_batch_size and micro_batches when computable."""
    out = []
    derived = {"world_size": None, "data_parallel": None,
               "global_batch_size": ctx["global_batch_size"], "micro_batches": None}
    if not _positive(ctx, out):
        return out, derived
    m = ctx["model"]
    tp, pp, cp, vpp = ctx["tp"], ctx["pp"], ctx["cp"], ctx["vpp"]
    mbs, seq = ctx["micro_batch_size"], ctx["seq_length"]
    gpn = ctx["gpus_per_node"]
    world = ctx["nodes"] * gpn
    derived["world_size"] = world
    L, h, a, g, ffn = m["layers"], m["hidden"], m["heads"], m["kv_heads"], m["ffn_hidden"]

    # 1. World size (arguments.py HEAD 432/448; parallel_state.py:822).
    mp = tp * pp * cp
    dp = None
    if world % mp:
        out.append("world_size: world size %d (%d nodes x %d GPUs) is not divisible by "
                   "TP x PP x CP = %d x %d x %d = %d"
                   % (world, ctx["nodes"], gpn, tp, pp, cp, mp))
    else:
        dp = world // mp
        derived["data_parallel"] = dp

    # TP inside one node (TP groups are consecutive ranks; they must not straddle nodes).
    if not ctx["allow_tp_across_nodes"] and (tp > gpn or gpn % tp):
        out.append("tp_within_node: TP %d must divide the %d GPUs of one node so that each "
                   "TP group stays on the node's xGMI/NVLink fabric (set "
                   "allow_tp_across_nodes to accept it)" % (tp, gpn))

    # 5. Heads (transformer_config.py; arguments.py 1333), 6. GQA, and the TP splits of
    # ColumnParallelLinear / RowParallelLinear (megatron.core.utils.divide): each value
    # must be divisible by its divisor.
    divisibility = (
        ("hidden_heads", h, a, "hidden size %d is not divisible by attention heads %d"),
        ("heads_tp", a, tp, "attention heads %d are not divisible by TP %d"),
        ("kv_heads", a, g, "attention heads %d are not divisible by KV heads (query groups) %d"),
        ("kv_heads_tp", g, tp, "KV heads (query groups) %d are not divisible by TP %d (ROCm "
         "Megatron-LM transformer_config; upstream HEAD also accepts TP %% groups == 0)"),
        ("ffn_tp", ffn, tp, "FFN hidden size %d is not divisible by TP %d"),
    )
    for rule, value, divisor, text in divisibility:
        if value % divisor:
            out.append("%s: %s" % (rule, text % (value, divisor)))

    # 3. Layers vs PP (strict: MCore otherwise silently builds L // PP layers per stage).
    if L % pp:
        out.append("layers_pp: %d layers are not divisible by PP %d (Megatron would build "
                   "%d layers per stage and drop %d)" % (L, pp, L // pp, L - (L // pp) * pp))
    # 4. Virtual pipeline.
    if vpp > 1:
        min_pp = 1 if ctx["overlap_p2p_comm"] else 2
        if pp <= min_pp:
            out.append("vpp_pp: interleaved schedule (VPP %d) needs PP > %d, got PP %d%s"
                       % (vpp, min_pp, pp,
                          "" if ctx["overlap_p2p_comm"] else " (PP > 1 with overlap_p2p_comm)"))
        if L % (pp * vpp):
            out.append("vpp_layers: %d layers are not divisible by PP x VPP = %d x %d = %d "
                       "(layers per virtual stage must be whole)" % (L, pp, vpp, pp * vpp))

    # 2. Global batch (num_microbatches_calculator.py:381-391).
    gbs = ctx["global_batch_size"]
    if dp is not None:
        if gbs is None:
            gbs = mbs * dp
        derived["global_batch_size"] = gbs
        if gbs % (mbs * dp):
            out.append("global_batch: global batch size %d is not divisible by micro batch size "
                       "%d times data parallel size %d (= %d)" % (gbs, mbs, dp, mbs * dp))
        else:
            nmb = gbs // (mbs * dp)
            derived["micro_batches"] = nmb
            if vpp > 1 and pp > 1 and nmb % pp:
                out.append("vpp_microbatches: number of microbatches %d is not divisible by PP %d "
                           "when using the interleaved schedule" % (nmb, pp))

    # 7. Sequence parallel (mappings.py:74): the local sequence s/CP splits across TP.
    if ctx["sequence_parallel"] and tp > 1 and seq % (tp * cp):
        out.append("sequence_parallel: sequence length %d is not divisible by TP x CP = %d x %d "
                   "= %d (sequence parallel splits the sequence across TP)"
                   % (seq, tp, cp, tp * cp))
    if ctx["tp_comm_overlap"] and not (ctx["sequence_parallel"] and tp > 1):
        out.append("tp_comm_overlap: TP communication overlap needs sequence parallel with "
                   "TP > 1 (TP %d, sequence_parallel %s)" % (tp, ctx["sequence_parallel"]))
    # 8. Context parallel (arguments.py 1336, 1354).
    if cp > 1 and seq % (2 * cp):
        out.append("context_parallel: sequence length %d is not divisible by 2 x CP = %d"
                   % (seq, 2 * cp))
    maxpos = m.get("max_position_embeddings")
    if maxpos is not None and seq > maxpos:
        out.append("max_positions: sequence length %d exceeds max_position_embeddings %d of "
                   "%s" % (seq, maxpos, m["name"]))

    # 9. Optimizer / FSDP (arguments.py 1024, 1031-1047, 1096).
    if ctx["fsdp"]:
        if ctx["distributed_optimizer"]:
            out.append("fsdp_dist_opt: FSDP (--use-torch-fsdp2) excludes the distributed "
                       "optimizer; set distributed_optimizer false")
        if pp != 1:
            out.append("fsdp_pp: FSDP (--use-torch-fsdp2) needs PP 1, got PP %d" % pp)
        if m["tie_embeddings"]:
            out.append("fsdp_untied: FSDP (--use-torch-fsdp2) needs untied embeddings")
    if ctx["overlap_param_gather"] and not (ctx["distributed_optimizer"] or ctx["fsdp"]):
        out.append("overlap_param_gather: --overlap-param-gather needs the distributed "
                   "optimizer or FSDP")
    if ctx["fp8_param_gather"]:
        if ctx["precision"] != "fp8":
            out.append("fp8_param_gather: --fp8-param-gather needs precision fp8, got %s"
                       % ctx["precision"])
        if not ctx["distributed_optimizer"]:
            out.append("fp8_param_gather: --fp8-param-gather needs the distributed optimizer "
                       "(ROCm Megatron-LM: distributed optimizer only)")

    # 10. FP8: GPU support and Transformer Engine GEMM shapes (assert_dim_for_fp8_exec).
    if ctx["precision"] == "fp8":
        gpu = ctx["gpu"]
        if not gpu.get("fp8"):
            out.append("fp8_gpu: precision fp8 needs a GPU with FP8 matrix units; %s has none"
                       % gpu.get("name"))
        tokens = mbs * seq
        if tokens % cp == 0 and (tokens // cp) % 8:
            out.append("fp8_shape: micro batch x sequence / CP = %d x %d / %d = %d tokens is "
                       "not divisible by 8 (Transformer Engine FP8 GEMMs)"
                       % (mbs, seq, cp, tokens // cp))
        if h % 16:
            out.append("fp8_shape: hidden size %d is not divisible by 16 (Transformer Engine "
                       "FP8 GEMMs)" % h)
        if ffn % tp == 0 and (ffn // tp) % 16:
            out.append("fp8_shape: FFN hidden / TP = %d / %d = %d is not divisible by 16 "
                       "(Transformer Engine FP8 GEMMs)" % (ffn, tp, ffn // tp))
        if h % a == 0 and a % tp == 0 and (a * (h // a) // tp) % 16:
            out.append("fp8_shape: attention projection / TP = %d / %d = %d is not divisible "
                       "by 16 (Transformer Engine FP8 GEMMs)"
                       % (a * (h // a), tp, a * (h // a) // tp))
    return out, derived
