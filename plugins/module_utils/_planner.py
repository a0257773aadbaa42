# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parallel-layout planner for Megatron-LM style (TP x PP x CP x DP) LLM training.

PRIVATE to the collection: not a public API, may change without notice.

Pure logic, no I/O: a dict of options in, a dict out. ``plan()`` checks one layout
against every Megatron-LM start-up rule that applies and estimates its memory, FLOPs and
throughput; when the layout is invalid it also ranks the nearest valid layouts for the
same cluster. ``search()`` ranks every valid layout that fits by estimated throughput.

Sources (figures checked at their source before tests relied on them):
- Rules: Megatron-LM ``megatron/training/arguments.py`` ``validate_args`` (NVIDIA HEAD and
  the stricter ROCm/Megatron-LM and v0.9 versions), ``transformer_config.py``,
  ``num_microbatches_calculator.py``, ``core/pipeline_parallel/schedules.py``
  (interleaved schedule: microbatches divisible by PP), ``tensor_parallel/mappings.py``,
  Transformer Engine ``assert_dim_for_fp8_exec``.
- Weights and optimizer: ``megatron/training/theoretical_memory_usage.py``
  (``compute_weight_and_optimizer_memory``: most loaded shard = (block/PP + embedding)/TP,
  18 bytes/param, 6 + 12/d with the distributed optimizer); ZeRO (Rajbhandari et al. 2020,
  arXiv:1910.02054, section 3.1, Fig. 1); DeepSpeed ``estimate_zero3_model_states_mem_needs``
  (4 x largest layer gathered) for FSDP full_shard.
- Activations: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
  Transformer Models", arXiv:2205.05198, section 4, Table 2, with the MLP term written for
  any ffn_hidden as Megatron's theoretical memory report does (34 = 18 + 4*ffn/h when
  ffn = 4h); first 1F1B stage holds L layers' worth; interleaving penalty
  1 + (p-1)/(p*v); embedding and output-layer extras as in that report.
- FLOPs: Megatron-LM ``num_floating_point_operations`` (v0.9 training.py; Narayanan et al.
  2021, arXiv:2104.04473, appendix): 12*B*s*L*h^2*[(1 + g/a + s/h)*(a*d/h)
  + 1.5*ffn/h (SwiGLU) + V/(2*L*h)].
- Bubble: Narayanan et al. 2021 section 2.2: (p-1)/m, interleaved (p-1)/(v*m).
- Parameters: the Llama formula P = L*(2h^2 + 2h*kv*d + 3h*ffn + 2h) + 2Vh + h.
- Models: see ``MODELS``; GPU figures: ``_hardware.py``.
"""

from __future__ import annotations

import math

from ansible_collections.gpucluster.training.plugins.module_utils import _hardware

GIB = 1024 ** 3

# Megatron-LM default --make-vocab-size-divisible-by (arguments.py).
VOCAB_DIVISIBLE_BY = 128

_LLAMA1 = "Touvron et al. 2023, LLaMA, arXiv:2302.13971 Table 2; HF huggyllama/llama-*/config.json"
_LLAMA2 = "Touvron et al. 2023, Llama 2, arXiv:2307.09288; HF meta-llama/Llama-2-*-hf/config.json"
_LLAMA3 = ("Llama Team 2024, The Llama 3 Herd of Models, arXiv:2407.21783 Table 3; "
           "HF meta-llama/Meta-Llama-3-*/config.json, Llama-3.1-*/config.json")


def _llama(layers, hidden, ffn, heads, kv_heads, vocab, ctx, name, source, published):
    return {
        "name": name,
        "layers": layers,
        "hidden": hidden,
        "ffn_hidden": ffn,
        "heads": heads,
        "kv_heads": kv_heads,
        "vocab": vocab,
        "max_position_embeddings": ctx,
        "swiglu": True,
        "tie_embeddings": False,
        "source": source,
        # Parameter count published with the weights (HF safetensors metadata /
        # planner-reference.md section 4); the unit tests compare the formula against it.
        "published_parameters": published,
    }


# All Llama models: SwiGLU, RMSNorm, untied embeddings, head_dim 128.
MODELS = {
    "llama1-7b": _llama(32, 4096, 11008, 32, 32, 32000, 2048, "LLaMA-1 7B", _LLAMA1,
                        6738415616),
    "llama1-13b": _llama(40, 5120, 13824, 40, 40, 32000, 2048, "LLaMA-1 13B", _LLAMA1,
                         13015864320),
    "llama1-33b": _llama(60, 6656, 17920, 52, 52, 32000, 2048, "LLaMA-1 33B", _LLAMA1,
                         32528943616),
    "llama1-65b": _llama(80, 8192, 22016, 64, 64, 32000, 2048, "LLaMA-1 65B", _LLAMA1,
                         65285660672),
    "llama2-7b": _llama(32, 4096, 11008, 32, 32, 32000, 4096, "Llama 2 7B", _LLAMA2,
                        6738415616),
    "llama2-13b": _llama(40, 5120, 13824, 40, 40, 32000, 4096, "Llama 2 13B", _LLAMA2,
                         13015864320),
    "llama2-70b": _llama(80, 8192, 28672, 64, 8, 32000, 4096, "Llama 2 70B", _LLAMA2,
                         68976648192),
    "llama3-8b": _llama(32, 4096, 14336, 32, 8, 128256, 8192, "Llama 3 8B", _LLAMA3,
                        8030261248),
    "llama3-70b": _llama(80, 8192, 28672, 64, 8, 128256, 8192, "Llama 3 70B", _LLAMA3,
                         70553706496),
    # 405B was only released as Llama 3.1 (128K context).
    "llama3-405b": _llama(126, 16384, 53248, 128, 8, 128256, 131072, "Llama 3.1 405B",
                          _LLAMA3, 405853388800),
    "llama3.1-8b": _llama(32, 4096, 14336, 32, 8, 128256, 131072, "Llama 3.1 8B", _LLAMA3,
                          8030261248),
    "llama3.1-70b": _llama(80, 8192, 28672, 64, 8, 128256, 131072, "Llama 3.1 70B", _LLAMA3,
                           70553706496),
}

MODEL_ALIASES = {
    "llama-7b": "llama1-7b",
    "llama-13b": "llama1-13b",
    "llama-33b": "llama1-33b",
    "llama-30b": "llama1-33b",
    "llama-65b": "llama1-65b",
    "llama3.1-405b": "llama3-405b",
}

RECOMPUTE = ("none", "selective", "full")
PRECISIONS = ("bf16", "fp8")

# Planning assumptions (stated in every plan, overridable): model FLOPs utilisation of the
# dense peak of the chosen precision, and the fraction of GPU memory kept free.
DEFAULT_MFU = {"bf16": 0.40, "fp8": 0.25}
DEFAULT_HEADROOM = 0.10

_MODEL_DIMS = ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab")
_LAYOUT_INTS = ("tp", "pp", "cp", "vpp", "micro_batch_size")
_BOOLS = ("sequence_parallel", "fsdp", "flash_attention", "allow_tp_across_nodes",
          "overlap_p2p_comm", "overlap_param_gather", "fp8_param_gather", "tp_comm_overlap",
          "require_fit", "tie_embeddings")


class PlannerError(ValueError):
    """Bad input: unknown preset, wrong type. Rule violations are NOT raised: they are
    returned in ``violations``."""


# --------------------------------------------------------------------------- formulas


def model_names():
    return sorted(MODELS)


def parameter_count(layers, hidden, ffn_hidden, heads, kv_heads, vocab, tie_embeddings=False):
    """Llama parameter count P = L*(2h^2 + 2h*kv*d + 3h*ffn + 2h) + 2Vh + h, exact.

    (d = h/heads; q and o projections are h x heads*d = h x h; k and v are h x kv*d;
    SwiGLU has three h x ffn matrices; two RMSNorm weights per layer, one final norm;
    untied input embedding and output layer, V x h each.)
    """
    d = hidden // heads
    per_layer = (2 * hidden * heads * d + 2 * hidden * kv_heads * d + 3 * hidden * ffn_hidden
                 + 2 * hidden)
    embeddings = (1 if tie_embeddings else 2) * vocab * hidden
    return layers * per_layer + embeddings + hidden


def padded_vocab(vocab, tp, divisible_by=VOCAB_DIVISIBLE_BY):
    """Megatron's ``_vocab_size_with_padding``: round V up to a multiple of 128*TP."""
    multiple = divisible_by * tp
    return -(-vocab // multiple) * multiple


def zero_model_state_bytes(params, stage, n_d, k=12):
    """ZeRO (Rajbhandari et al. 2020 section 3.1): mixed-precision Adam model states per
    GPU, 2+2+K bytes per parameter. stage 0: (4+K)P; 1 (P_os): 4P + KP/N_d;
    2 (P_os+g): 2P + (2+K)P/N_d; 3 (P_os+g+p): (4+K)P/N_d."""
    if stage == 0:
        return (4 + k) * params
    if stage == 1:
        return 4 * params + k * params / n_d
    if stage == 2:
        return 2 * params + (2 + k) * params / n_d
    if stage == 3:
        return (4 + k) * params / n_d
    raise PlannerError("ZeRO stage must be 0, 1, 2 or 3, got %r" % (stage,))


def megatron_bytes_per_parameter(distributed_optimizer, d, param_dtype="bf16"):
    """Bytes per parameter in Megatron (docs/user-guide/features/dist_optimizer.md):
    bf16 params + fp32 grads 18 -> 6 + 12/d; fp16 20 -> 4 + 16/d; fp32 16 -> 8 + 8/d."""
    table = {"bf16": (18.0, 6.0, 12.0), "fp16": (20.0, 4.0, 16.0), "fp32": (16.0, 8.0, 8.0)}
    if param_dtype not in table:
        raise PlannerError("param dtype must be one of bf16, fp16, fp32, got %r" % (param_dtype,))
    full, kept, sharded = table[param_dtype]
    if not distributed_optimizer:
        return full
    return kept + sharded / d


def activation_bytes_per_layer(s, b, h, a, t=1, recompute="none", sequence_parallel=True,
                               ffn_hidden=None, flash_attention=False):
    """Korthikanti et al. 2022 Table 2, bytes of activations of one transformer layer.

    With ffn_hidden = 4h (the paper's case):
      none:                sbh(10 + 24/t + 5as/(ht));   with SP: sbh/t (34 + 5as/h)
      selective:           sbh(10 + 24/t);              with SP: 34 sbh/t
      full:                2sbh                         with SP: 2sbh/t (sharded input)
    Any other ffn_hidden: 24 -> 8 + 4*ffn/h and 34 -> 18 + 4*ffn/h, as Megatron's
    theoretical_memory_usage.py writes it. flash_attention: the 5as^2b attention-score term
    is never stored (fused/flash attention recomputes it), so none == selective.
    """
    f = 4.0 if ffn_hidden is None else float(ffn_hidden) / h
    sp = sequence_parallel and t > 1
    sbh = float(s) * b * h
    if recompute == "full":
        return 2.0 * sbh / (t if sp else 1)
    score = 0.0 if (recompute == "selective" or flash_attention) else 5.0 * a * s / h
    if sp:
        return sbh / t * (18.0 + 4.0 * f + score)
    return sbh * (10.0 + (8.0 + 4.0 * f) / t + score / t)


def bubble_fraction(pp, micro_batches, vpp=1):
    """Pipeline bubble (Narayanan et al. 2021 section 2.2): (p-1)/(v*m)."""
    return (pp - 1) / float(vpp * micro_batches)


def megatron_flops(gbs, seq, layers, hidden, ffn_hidden, heads, kv_heads, vocab, swiglu=True):
    """Model FLOPs of one training step as Megatron-LM counts them (v0.9
    ``num_floating_point_operations``; forward + backward, no recompute)."""
    d = hidden // heads
    ratio = heads * d / float(hidden)
    gated = 1.5 if swiglu else 1.0
    return (12.0 * gbs * seq * layers * hidden * hidden * (
        (1.0 + kv_heads / float(heads) + seq / float(hidden)) * ratio
        + (ffn_hidden / float(hidden)) * gated
        + vocab / (2.0 * layers * hidden)))


# --------------------------------------------------------------------------- inputs


def _int(value, name, allow_none=False):
    if value is None or (isinstance(value, str) and value.strip() == ""):
        if allow_none:
            return None
        raise PlannerError("%s is required" % name)
    if isinstance(value, bool):
        raise PlannerError("%s must be an integer, got %r" % (name, value))
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        # One optional sign, ASCII digits, at most 12 of them ("+-4", superscript digits and 5000 digits are refused).
        digits = text[1:] if text[:1] in ("+", "-") else text
        if digits.isascii() and digits.isdigit() and len(digits) <= 12:
            return int(text)
    raise PlannerError("%s must be an integer, got %r" % (name, value))


def _float(value, name, allow_none=True):
    if value is None or (isinstance(value, str) and value.strip() == ""):
        if allow_none:
            return None
        raise PlannerError("%s is required" % name)
    if isinstance(value, bool):
        raise PlannerError("%s must be a number, got %r" % (name, value))
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise PlannerError("%s must be a number, got %r" % (name, value))
    if math.isnan(out) or math.isinf(out):
        raise PlannerError("%s must be a finite number, got %r" % (name, value))
    return out


def _bool(value, name, default):
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("1", "true", "yes", "on", "y"):
            return True
        if text in ("0", "false", "no", "off", "n"):
            return False
    raise PlannerError("%s must be a boolean, got %r" % (name, value))


def _choice(value, name, choices, default):
    if value is None:
        return default
    if not isinstance(value, str) or value.strip().lower() not in choices:
        raise PlannerError("%s must be one of %s, got %r" % (name, ", ".join(choices), value))
    return value.strip().lower()


def resolve_model(spec):
    """Model dims from a preset name and/or explicit dims (explicit dims win)."""
    name = spec.get("model")
    if name is not None and not isinstance(name, str):
        raise PlannerError("model must be a preset name, got %r" % (name,))
    if name:
        key = name.strip().lower().replace("_", "-").replace(" ", "-")
        key = MODEL_ALIASES.get(key, key)
        if key.startswith("llama-2-") or key.startswith("llama-3-"):
            key = "llama" + key[6:]
        if key not in MODELS:
            raise PlannerError("unknown model preset %r: known presets are %s"
                               % (name, ", ".join(model_names())))
        model = dict(MODELS[key])
        model["preset"] = key
    else:
        missing = [k for k in _MODEL_DIMS if spec.get(k) in (None, "") and k != "kv_heads"]
        if missing:
            raise PlannerError("give a model preset (%s) or all of layers, hidden, ffn_hidden, "
                               "heads, vocab (missing: %s)"
                               % (", ".join(model_names()), ", ".join(missing)))
        model = {"name": "custom", "preset": None, "swiglu": True, "tie_embeddings": False,
                 "max_position_embeddings": None, "source": "given by the caller",
                 "published_parameters": None}
    for key in _MODEL_DIMS:
        if spec.get(key) not in (None, ""):
            model[key] = _int(spec[key], key)
    if model.get("kv_heads") is None:
        model["kv_heads"] = model["heads"]
    if spec.get("max_position_embeddings") not in (None, ""):
        model["max_position_embeddings"] = _int(spec["max_position_embeddings"],
                                                "max_position_embeddings")
    model["swiglu"] = _bool(spec.get("swiglu"), "swiglu", model["swiglu"])
    model["tie_embeddings"] = _bool(spec.get("tie_embeddings"), "tie_embeddings",
                                    model["tie_embeddings"])
    if name and any(spec.get(k) not in (None, "") for k in _MODEL_DIMS):
        model["name"] = model["name"] + " (modified)"
        model["published_parameters"] = None
    return model


def normalize(spec):
    """Check types and fill defaults; returns a new dict (the planner's context)."""
    if not isinstance(spec, dict):
        raise PlannerError("planner input must be a dict, got %s" % type(spec).__name__)
    ctx = {"model": resolve_model(spec)}
    gpu = spec.get("gpu")
    if gpu is None or gpu == "":
        raise PlannerError("gpu is required: a preset (%s), explicit figures or gpu_info facts"
                           % ", ".join(_hardware.gpu_names()))
    try:
        ctx["gpu"] = _hardware.resolve_gpu(gpu)
    except _hardware.HardwareError as exc:
        raise PlannerError(str(exc))
    ctx["nodes"] = _int(spec.get("nodes", 1), "nodes") if spec.get("nodes") is not None else 1
    gpn = spec.get("gpus_per_node")
    if gpn in (None, "") and isinstance(gpu, dict) and gpu.get("count") not in (None, ""):
        gpn = gpu.get("count")
    ctx["gpus_per_node"] = _int(gpn, "gpus_per_node")
    for key in _LAYOUT_INTS:
        value = spec.get(key)
        ctx[key] = 1 if value in (None, "") else _int(value, key)
    ctx["global_batch_size"] = _int(spec.get("global_batch_size"), "global_batch_size",
                                    allow_none=True)
    ctx["seq_length"] = _int(spec.get("seq_length"), "seq_length", allow_none=True)
    if ctx["seq_length"] is None:
        ctx["seq_length"] = ctx["model"].get("max_position_embeddings") or 4096
    ctx["precision"] = _choice(spec.get("precision"), "precision", PRECISIONS, "bf16")
    ctx["recompute"] = _choice(spec.get("recompute"), "recompute", RECOMPUTE, "none")
    ctx["fsdp"] = _bool(spec.get("fsdp"), "fsdp", False)
    ctx["distributed_optimizer"] = _bool(spec.get("distributed_optimizer"),
                                         "distributed_optimizer", not ctx["fsdp"])
    ctx["sequence_parallel"] = _bool(spec.get("sequence_parallel"), "sequence_parallel", True)
    ctx["flash_attention"] = _bool(spec.get("flash_attention"), "flash_attention", True)
    for key in ("allow_tp_across_nodes", "overlap_p2p_comm", "overlap_param_gather",
                "fp8_param_gather", "tp_comm_overlap"):
        ctx[key] = _bool(spec.get(key), key, False)
    ctx["require_fit"] = _bool(spec.get("require_fit"), "require_fit", True)
    headroom = _float(spec.get("headroom"), "headroom")
    ctx["headroom"] = DEFAULT_HEADROOM if headroom is None else headroom
    if not 0.0 <= ctx["headroom"] < 1.0:
        raise PlannerError("headroom must be a fraction in [0, 1), got %r" % (spec.get("headroom"),))
    mfu = _float(spec.get("mfu"), "mfu")
    ctx["mfu"] = DEFAULT_MFU[ctx["precision"]] if mfu is None else mfu
    if not 0.0 < ctx["mfu"] <= 1.0:
        raise PlannerError("mfu must be in (0, 1], got %r" % (spec.get("mfu"),))
    link = spec.get("internode_link")
    link = _hardware.DEFAULT_INTERNODE_LINK if link in (None, "") else link
    try:
        ctx["internode_bytes_per_s"] = _hardware.link_bytes_per_s(link)
    except _hardware.HardwareError as exc:
        raise PlannerError(str(exc))
    ctx["internode_link"] = link
    return ctx


# --------------------------------------------------------------------------- rules


def _positive(ctx, out):
    m = ctx["model"]
    for key in _MODEL_DIMS:
        if m[key] < 1:
            out.append("positive: model %s must be >= 1 (got %d)" % (key, m[key]))
    if m.get("max_position_embeddings") is not None and m["max_position_embeddings"] < 1:
        out.append("positive: max_position_embeddings must be >= 1 (got %d)"
                   % m["max_position_embeddings"])
    for key in ("nodes", "gpus_per_node") + _LAYOUT_INTS + ("seq_length",):
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

    # 5. Heads (transformer_config.py; arguments.py 1333).
    if h % a:
        out.append("hidden_heads: hidden size %d is not divisible by attention heads %d" % (h, a))
    if a % tp:
        out.append("heads_tp: attention heads %d are not divisible by TP %d" % (a, tp))
    # 6. GQA.
    if a % g:
        out.append("kv_heads: attention heads %d are not divisible by KV heads (query groups) %d"
                   % (a, g))
    if g % tp:
        out.append("kv_heads_tp: KV heads (query groups) %d are not divisible by TP %d "
                   "(ROCm Megatron-LM transformer_config; upstream HEAD also accepts TP %% "
                   "groups == 0)" % (g, tp))
    # ColumnParallelLinear / RowParallelLinear: megatron.core.utils.divide.
    if ffn % tp:
        out.append("ffn_tp: FFN hidden size %d is not divisible by TP %d" % (ffn, tp))

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


# --------------------------------------------------------------------------- estimates


def _estimate(ctx, dp, gbs, nmb):
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
                                           ctx["flash_attention"])
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
    peak = gpu.get("fp8_tflops") if ctx["precision"] == "fp8" else gpu.get("bf16_tflops")
    step = tokens_gpu = tflops_gpu = tp_comm = None
    if peak and nmb:
        compute = (flops + extra) / (world * peak * 1e12 * ctx["mfu"])
        tp_comm = 0.0
        if tp > 1 and not ctx["tp_comm_overlap"]:
            spans = tp > ctx["gpus_per_node"] or ctx["gpus_per_node"] % tp
            if spans or not gpu.get("interconnect_gbs"):
                bw = ctx["internode_bytes_per_s"]
            else:
                bw = gpu["interconnect_gbs"] * 1e9 / 2.0
            per_collective = s_local * mbs * h * 2.0 * (tp - 1) / tp / bw
            tp_comm = 8.0 * per_collective * (L / float(pp)) * nmb
        cp_comm = 0.0
        if cp > 1:
            # Ring attention: K and V chunks (16-bit) passed CP-1 times forward, KV and dKV
            # backward. CP groups follow TP in Megatron's rank order (tp-cp-dp-pp).
            in_node = tp * cp <= ctx["gpus_per_node"] and ctx["gpus_per_node"] % (tp * cp) == 0
            if in_node and gpu.get("interconnect_gbs"):
                bw = gpu["interconnect_gbs"] * 1e9 / 2.0
            else:
                bw = ctx["internode_bytes_per_s"]
            chunk = 2.0 * s_local * mbs * g * d * 2.0
            cp_comm = 3.0 * (cp - 1) * chunk / bw * (L / float(pp)) * nmb
        step = (compute + tp_comm + cp_comm) * (1.0 + bubble)
        tokens_gpu = gbs * seq / (step * world)
        tflops_gpu = flops / (step * world * 1e12)
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
        "tp_communication_s": tp_comm,
        "tokens_per_s_per_gpu": tokens_gpu,
        "tflops_per_gpu": tflops_gpu,
        "peak_tflops": peak,
    }


def _megatron_args(ctx, gbs):
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


def _layout_summary(ctx, derived):
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


def _evaluate(ctx):
    """Rules + estimates for one normalized context."""
    violations, derived = check(ctx)
    m = ctx["model"]
    result = {
        "layout": _layout_summary(ctx, derived),
        "violations": violations,
        "derived": derived,
        "estimate": None,
    }
    computable = (derived["data_parallel"] is not None
                  and not any(v.startswith("positive:") for v in violations)
                  and m["hidden"] % m["heads"] == 0)
    if computable:
        result["estimate"] = _estimate(ctx, derived["data_parallel"],
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


def _suggestion(ctx, result):
    est = result["estimate"] or {}
    mem = est.get("memory") or {}
    layout = dict(result["layout"])
    layout.update({
        "micro_batches": result["derived"]["micro_batches"],
        "memory_total_gib": _round(mem.get("total_gib")),
        "weights_and_optimizer_gib": _round(mem.get("weights_and_optimizer_gib")),
        "activations_gib": _round(mem.get("activations_gib")),
        "fits": mem.get("fits"),
        "bubble_fraction": _round(est.get("bubble_fraction"), 4),
        "tokens_per_s_per_gpu": _round(est.get("tokens_per_s_per_gpu"), 1),
        "step_time_s": _round(est.get("step_time_s"), 3),
    })
    layout["summary"] = describe_layout(layout)
    return layout


def describe_layout(s):
    """One line: 'TP8 PP2 CP1 DP1 VPP1 MBS4 GBS64 recompute none: 112.3 GiB/GPU, fits'."""
    text = "TP%s PP%s CP%s DP%s" % (s["tp"], s["pp"], s["cp"], s["dp"])
    if s.get("vpp", 1) > 1:
        text += " VPP%s" % s["vpp"]
    text += " MBS%s GBS%s recompute %s" % (s["micro_batch_size"], s["global_batch_size"],
                                           s["recompute"])
    if s.get("memory_total_gib") is not None:
        if s.get("fits") is None:
            verdict = "fit unknown"
        else:
            verdict = "fits" if s["fits"] else "does not fit"
        text += ": %.1f GiB/GPU (weights+optimizer %.1f, activations %.1f), %s" % (
            s["memory_total_gib"], s["weights_and_optimizer_gib"], s["activations_gib"],
            verdict)
    if s.get("tokens_per_s_per_gpu") is not None:
        text += ", ~%.0f tokens/s/GPU" % s["tokens_per_s_per_gpu"]
    return text


def _round(value, digits=2):
    if value is None:
        return None
    return round(float(value), digits)


# --------------------------------------------------------------------------- search


def _divisors(n, limit=None):
    out = [i for i in range(1, n + 1) if n % i == 0]
    if limit is not None:
        out = [i for i in out if i <= limit]
    return out


def _candidates(ctx, recomputes, vary_gbs=False):
    """Yield contexts of layouts on the same cluster, model, sequence and precision."""
    world = ctx["nodes"] * ctx["gpus_per_node"]
    m = ctx["model"]
    seq = ctx["seq_length"]
    tp_limit = world if ctx["allow_tp_across_nodes"] else ctx["gpus_per_node"]
    tps = [t for t in _divisors(world, tp_limit) if m["heads"] % t == 0]
    pps = [p for p in _divisors(world) if m["layers"] % p == 0]
    if ctx["fsdp"]:
        pps = [1]
    cps = [c for c in (1, 2, 4, 8, 16, 32, 64) if c == 1 or seq % (2 * c) == 0]
    gbs0 = ctx["global_batch_size"]
    mbs0 = ctx["micro_batch_size"] if ctx["micro_batch_size"] >= 1 else 1
    mbss = sorted(set(b for b in (1, 2, 4, 8, 16, mbs0) if b >= 1))
    for t in tps:
        for p in pps:
            if world % (t * p):
                continue
            for c in cps:
                if world % (t * p * c):
                    continue
                dp = world // (t * p * c)
                vpps = [1]
                if p > (1 if ctx["overlap_p2p_comm"] else 2):
                    vpps += [v for v in _divisors(m["layers"] // p, 8) if v > 1]
                for b in mbss:
                    if gbs0 is not None and not vary_gbs:
                        if gbs0 % (b * dp):
                            continue
                        gbs = gbs0
                    elif gbs0 is not None:
                        unit = b * dp
                        gbs = max(unit, int(round(gbs0 / float(unit))) * unit)
                    else:
                        gbs = None
                    for v in vpps:
                        if v > 1:
                            nmb = (gbs if gbs is not None else b * dp) // (b * dp)
                            if nmb % p:
                                continue
                        for r in recomputes:
                            new = dict(ctx)
                            new.update({"tp": t, "pp": p, "cp": c, "vpp": v,
                                        "micro_batch_size": b, "global_batch_size": gbs,
                                        "recompute": r})
                            yield new


def _distance(ctx, base):
    d = 0.0
    for key in ("tp", "pp", "cp", "vpp", "micro_batch_size"):
        old = max(base[key], 1)
        d += abs(math.log(ctx[key] / float(old), 2))
    if (base["global_batch_size"] or 0) > 0 and (ctx["global_batch_size"] or 0) > 0:
        d += 2.0 * abs(math.log(ctx["global_batch_size"] / float(base["global_batch_size"]), 2))
    d += abs(RECOMPUTE.index(ctx["recompute"]) - RECOMPUTE.index(base["recompute"]))
    return d


def nearest_layouts(ctx, limit=5):
    """Valid layouts for the same cluster nearest to ``ctx``'s layout: those that fit
    first, then by distance (log2 steps in TP/PP/CP/VPP/MBS, recompute steps, twice the
    log2 change of GBS, which is only changed when no layout keeps it), then by lower
    memory, then by estimated throughput."""
    found = []
    heavier = [r for r in RECOMPUTE if RECOMPUTE.index(r) > RECOMPUTE.index(ctx["recompute"])]
    for vary_gbs in (False, True):
        for cand in _candidates(ctx, [ctx["recompute"]], vary_gbs):
            res = _evaluate(cand)
            # A layout that breaks only the memory rule may fit with more recomputation.
            for r in heavier:
                if not (res["violations"] and all(v.startswith("memory:")
                                                  for v in res["violations"])):
                    break
                cand = dict(cand, recompute=r)
                res = _evaluate(cand)
            if res["violations"]:
                continue
            est = res["estimate"] or {}
            mem = est.get("memory") or {}
            found.append(((mem.get("fits") is False, round(_distance(cand, ctx), 6),
                           round(mem.get("total_gib") or 0.0, 3),
                           -(est.get("tokens_per_s_per_gpu") or 0.0)), cand, res))
        if found:
            break
    found.sort(key=lambda item: item[0])
    return [_suggestion(c, r) for _key, c, r in found[:limit]]


def search(spec, limit=10):
    """Rank every valid layout that fits by estimated tokens/s per GPU (then by memory).

    Varies TP, PP, CP, VPP and micro batch size (recompute only where a layout does not fit
    without it: none, then selective, then full); keeps the model, cluster, GPU, global
    batch, sequence length, precision and optimizer settings of ``spec``."""
    ctx = normalize(spec)
    if ctx["global_batch_size"] is None:
        raise PlannerError("search needs global_batch_size: throughput depends on it")
    ranked = []
    for cand in _candidates(ctx, ["none"]):
        res = _evaluate(cand)
        # More recomputation only for layouts that do not fit without it.
        for r in ("selective", "full"):
            if not (res["violations"] and all(v.startswith("memory:")
                                              for v in res["violations"])):
                break
            cand = dict(cand, recompute=r)
            res = _evaluate(cand)
        if res["violations"] or not res["estimate"]:
            continue
        est = res["estimate"]
        if est["memory"]["fits"] is False:
            continue
        ranked.append(((-(est["tokens_per_s_per_gpu"] or 0.0), est["memory"]["total_gib"]),
                       cand, res))
    ranked.sort(key=lambda item: item[0])
    return [(c, r) for _key, c, r in ranked[:limit]]


# --------------------------------------------------------------------------- entry points


def plan(spec, max_suggestions=5):
    """Check and estimate one layout. Raises PlannerError on bad input only.

    Returns a dict: ``valid``, ``violations`` (one line per broken rule, naming it and the
    numbers), ``warnings``, ``suggestions`` (nearest valid layouts when invalid), and the
    estimates (None where the layout's arithmetic is undefined)."""
    ctx = normalize(spec)
    return _plan_from_ctx(ctx, max_suggestions)


def _plan_from_ctx(ctx, max_suggestions=5):
    res = _evaluate(ctx)
    m = ctx["model"]
    gpu = ctx["gpu"]
    est = res["estimate"]
    derived = res["derived"]
    warnings = list(gpu.get("warnings") or [])
    if est and derived["micro_batches"] and ctx["pp"] > 1 and derived["micro_batches"] < ctx["pp"]:
        warnings.append("micro_batches %s < PP %s: the pipeline never fills (bubble %.0f%%)"
                        % (derived["micro_batches"], ctx["pp"], 100 * est["bubble_fraction"]))
    if ctx["precision"] == "fp8" and not ctx["fp8_param_gather"]:
        warnings.append("fp8 without fp8_param_gather keeps 16-bit weights: no weight-memory "
                        "saving (counted as bf16)")
    if ctx["allow_tp_across_nodes"] and (ctx["tp"] > ctx["gpus_per_node"]
                                         or ctx["gpus_per_node"] % max(ctx["tp"], 1)):
        warnings.append("TP groups span nodes: TP traffic crosses the network (%s)"
                        % ctx["internode_link"])
    params = None
    if all(m[k] >= 1 for k in _MODEL_DIMS) and m["hidden"] % m["heads"] == 0:
        params = parameter_count(m["layers"], m["hidden"], m["ffn_hidden"], m["heads"],
                                 m["kv_heads"], m["vocab"], m["tie_embeddings"])
    gbs = derived["global_batch_size"]
    out = {
        "valid": not res["violations"],
        "violations": res["violations"],
        "warnings": warnings,
        "model": {
            "name": m["name"],
            "preset": m.get("preset"),
            "layers": m["layers"],
            "hidden": m["hidden"],
            "ffn_hidden": m["ffn_hidden"],
            "heads": m["heads"],
            "kv_heads": m["kv_heads"],
            "vocab": m["vocab"],
            "padded_vocab": est["padded_vocab"] if est else None,
            "max_position_embeddings": m.get("max_position_embeddings"),
            "source": m.get("source"),
        },
        "gpu": {
            "preset": gpu.get("preset"),
            "name": gpu.get("name"),
            "memory_gib": gpu.get("memory_gib"),
            "bf16_tflops": gpu.get("bf16_tflops"),
            "fp8_tflops": gpu.get("fp8_tflops"),
            "fp8": bool(gpu.get("fp8")),
            "interconnect_gbs": gpu.get("interconnect_gbs"),
            "from": gpu.get("source"),
            "sources": list(gpu.get("sources") or []),
        },
        "cluster": {"nodes": ctx["nodes"], "gpus_per_node": ctx["gpus_per_node"],
                    "world_size": derived["world_size"]},
        "layout": res["layout"],
        "data_parallel": derived["data_parallel"],
        "micro_batches": derived["micro_batches"],
        "global_batch_size": gbs,
        "tokens_per_step": gbs * ctx["seq_length"] if gbs else None,
        "parameters": params,
        "parameters_per_gpu": est["parameters_per_gpu"] if est else None,
        "bubble_fraction": _round(est["bubble_fraction"], 6) if est else None,
        "memory": _round_dict(est["memory"]) if est else None,
        "flops_per_step": est["flops_per_step"] if est else None,
        "step_time_s": _round(est["step_time_s"], 4) if est else None,
        "tokens_per_s_per_gpu": _round(est["tokens_per_s_per_gpu"], 1) if est else None,
        "tflops_per_gpu": _round(est["tflops_per_gpu"], 1) if est else None,
        "assumptions": {
            "mfu": ctx["mfu"],
            "peak_tflops": est["peak_tflops"] if est else None,
            "headroom_fraction": ctx["headroom"],
            "flash_attention": ctx["flash_attention"],
            "internode_link": ctx["internode_link"],
            "notes": [
                "memory: Megatron theoretical_memory_usage.py weights+grads+optimizer of the "
                "most loaded shard; activations by Korthikanti et al. 2022 Table 2 (16-bit)",
                "step time: (model + recompute FLOPs) / (GPUs x peak x mfu) plus "
                "non-overlapped TP collectives and CP ring-attention exchanges (half the "
                "intra-node fabric bandwidth, or the internode link when a group spans "
                "nodes), times (1 + bubble); DP and PP communication assumed overlapped; GEMM "
                "efficiency of small per-GPU shapes not modelled",
            ],
        },
        "megatron_args": _megatron_args(ctx, gbs) if not res["violations"] else [],
        "suggestions": [],
    }
    if res["violations"] and max_suggestions:
        out["suggestions"] = nearest_layouts(ctx, max_suggestions)
    return out


def _round_dict(d):
    out = {}
    for k, v in d.items():
        if isinstance(v, float) and k != "headroom_fraction":
            out[k] = round(v, 3)
        else:
            out[k] = v
    return out


def plan_search(spec, limit=10):
    """Best layout by estimated throughput: the plan of the winner plus the ranking."""
    ranked = search(spec, limit)
    if not ranked:
        ctx = normalize(spec)
        out = _plan_from_ctx(ctx, 5)
        out["layouts"] = []
        out["valid"] = False
        out["violations"] = list(out["violations"]) + [
            "search: no valid layout fits %d x %d %s for %s (global batch %s, sequence %d)"
            % (ctx["nodes"], ctx["gpus_per_node"], ctx["gpu"].get("name"),
               ctx["model"]["name"], ctx["global_batch_size"], ctx["seq_length"])]
        return out
    best_ctx = ranked[0][0]
    out = _plan_from_ctx(best_ctx, 0)
    out["layouts"] = [_suggestion(c, r) for c, r in ranked]
    return out


def format_failure(result):
    """The failure text: every violation, then the nearest valid layouts."""
    lines = ["invalid parallel layout (%d violation%s):" % (
        len(result["violations"]), "" if len(result["violations"]) == 1 else "s")]
    lines += ["- " + v for v in result["violations"]]
    if result.get("suggestions"):
        lines.append("nearest valid layouts for %d x %d GPUs:" % (
            result["cluster"]["nodes"], result["cluster"]["gpus_per_node"]))
        lines += ["- " + s["summary"] for s in result["suggestions"]]
    else:
        lines.append("no valid layout found for this cluster")
    return "\n".join(lines)
