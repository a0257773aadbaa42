# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Parallel-layout planner for Megatron-LM style (TP x PP x CP x DP) LLM training.

PRIVATE to the collection: not a public API, may change without notice.

Pure logic, no I/O: a dict of options in, a dict out. This module is the front door: it
coerces the input (``normalize``) and holds the entry points the parallel_plan module and
filter call (``plan``, ``plan_search``, ``search``, ``format_failure``). ``plan()`` checks
one layout against every Megatron-LM start-up rule that applies and estimates its memory,
FLOPs and throughput; when the layout is invalid it also ranks the nearest valid layouts
for the same cluster. ``search()`` ranks every valid layout that fits by estimated
throughput. The work is done by one module per concept:

- ``_planner_models``: model presets (Llama family) and ``PlannerError``;
- ``_planner_formulas``: parameters, vocabulary padding, memory, bubble, model FLOPs;
- ``_planner_rules``: the Megatron-LM start-up rules (``check``);
- ``_planner_estimate``: memory / FLOPs / time of one layout (``evaluate``);
- ``_planner_throughput``: the step-time model calibrated on published runs
  (docs/planner-calibration.md);
- ``_planner_search``: nearest valid layouts and the throughput ranking;
- GPU figures: ``_hardware``.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils import _hardware
from ansible_collections.gpucluster.training.plugins.module_utils import _planner_search
from ansible_collections.gpucluster.training.plugins.module_utils import _planner_throughput
from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind, to_bool, to_float, to_int
from ansible_collections.gpucluster.training.plugins.module_utils._planner_estimate import (
    evaluate,
    megatron_args,
)
from ansible_collections.gpucluster.training.plugins.module_utils._planner_formulas import (
    GIB,
    VOCAB_DIVISIBLE_BY,
    activation_bytes_per_layer,
    bubble_fraction,
    megatron_bytes_per_parameter,
    megatron_flops,
    padded_vocab,
    parameter_count,
    zero_model_state_bytes,
)
from ansible_collections.gpucluster.training.plugins.module_utils._planner_models import (
    MODEL_ALIASES,
    MODELS,
    PlannerError,
    model_names,
    preset_key,
)
from ansible_collections.gpucluster.training.plugins.module_utils._planner_rules import (
    LAYOUT_INTS as _LAYOUT_INTS,
    MODEL_DIMS as _MODEL_DIMS,
    check,
)
from ansible_collections.gpucluster.training.plugins.module_utils._planner_search import (
    RECOMPUTE,
    describe_layout,
    nearest_layouts,
    round_or_none as _round,
    suggestion as _suggestion,
)

# The front door's public names (the module, the filter, the tests and bench/ use them).
__all__ = [
    "GIB", "VOCAB_DIVISIBLE_BY", "MODELS", "MODEL_ALIASES", "RECOMPUTE", "PRECISIONS",
    "DEFAULT_HEADROOM", "PlannerError", "model_names", "preset_key", "parameter_count",
    "padded_vocab", "zero_model_state_bytes", "megatron_bytes_per_parameter",
    "activation_bytes_per_layer", "bubble_fraction", "megatron_flops", "check", "evaluate",
    "megatron_args", "describe_layout", "nearest_layouts", "resolve_model", "normalize",
    "plan", "plan_search", "search", "format_failure",
]

PRECISIONS = ("bf16", "fp8")

# Planning assumptions (stated in every plan, overridable): the fraction of GPU memory
# kept free. ``mfu`` is no longer a default: see _planner_throughput (an optional override
# of the calibrated GEMM efficiency).
DEFAULT_HEADROOM = 0.10

_BOOLS = ("sequence_parallel", "fsdp", "flash_attention", "allow_tp_across_nodes",
          "overlap_p2p_comm", "overlap_param_gather", "overlap_grad_reduce", "fp8_param_gather",
          "tp_comm_overlap", "require_fit", "tie_embeddings")


# --------------------------------------------------------------------------- inputs


def _int(value, name, allow_none=False):
    return to_int(value, name, PlannerError, allow_none=allow_none)


def _float(value, name, allow_none=True):
    return to_float(value, name, PlannerError, allow_none=allow_none)


def _bool(value, name, default):
    return to_bool(value, name, PlannerError, default=default)


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
        key = preset_key(name)
        if key is None:
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
        raise PlannerError("planner input must be a dict, got %s" % kind(spec))
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
                "overlap_grad_reduce", "fp8_param_gather", "tp_comm_overlap"):
        ctx[key] = _bool(spec.get(key), key, False)
    ctx["require_fit"] = _bool(spec.get("require_fit"), "require_fit", True)
    headroom = _float(spec.get("headroom"), "headroom")
    ctx["headroom"] = DEFAULT_HEADROOM if headroom is None else headroom
    if not 0.0 <= ctx["headroom"] < 1.0:
        raise PlannerError("headroom must be a fraction in [0, 1), got %r" % (spec.get("headroom"),))
    mfu = _float(spec.get("mfu"), "mfu")
    ctx["mfu"] = mfu
    if mfu is not None and not 0.0 < mfu <= 1.0:
        raise PlannerError("mfu must be in (0, 1], got %r" % (spec.get("mfu"),))
    link = spec.get("internode_link")
    link = _hardware.DEFAULT_INTERNODE_LINK if link in (None, "") else link
    try:
        ctx["internode_bytes_per_s"] = _hardware.link_bytes_per_s(link)
    except _hardware.HardwareError as exc:
        raise PlannerError(str(exc))
    ctx["internode_link"] = link
    return ctx

# --------------------------------------------------------------------------- entry points


def plan(spec, max_suggestions=5):
    """Check and estimate one layout. Raises PlannerError on bad input only.

    Returns a dict: ``valid``, ``violations`` (one line per broken rule, naming it and the
    numbers), ``warnings``, ``suggestions`` (nearest valid layouts when invalid), and the
    estimates (None where the layout's arithmetic is undefined)."""
    ctx = normalize(spec)
    return _plan_from_ctx(ctx, max_suggestions)


def _plan_from_ctx(ctx, max_suggestions=5):
    res = evaluate(ctx)
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
        "model_flops_utilization": _round(est["model_flops_utilization"], 3) if est else None,
        "step_time_parts_s": _round_dict(est["step_time_parts_s"], 4)
        if est and est["step_time_parts_s"] else None,
        "assumptions": _assumptions(ctx, est),
        "megatron_args": megatron_args(ctx, gbs) if not res["violations"] else [],
        "summary": _suggestion(ctx, res)["summary"] if est else None,
        "suggestions": [],
    }
    if res["violations"] and max_suggestions:
        out["suggestions"] = nearest_layouts(ctx, max_suggestions)
    return out


def _assumptions(ctx, est):
    level, reasons = _planner_throughput.confidence(ctx)
    return {
        "mfu": ctx["mfu"],
        "peak_tflops": est["peak_tflops"] if est else None,
        "headroom_fraction": ctx["headroom"],
        "flash_attention": ctx["flash_attention"],
        "internode_link": ctx["internode_link"],
        "throughput_confidence": level,
        "throughput_confidence_reasons": reasons,
        "calibration": dict(_planner_throughput.CALIBRATION),
        "notes": [
            "memory: Megatron theoretical_memory_usage.py weights+grads+optimizer of the "
            "most loaded shard; activations by Korthikanti et al. 2022 Table 2 (16-bit)",
            "step time: calibrated model (docs/planner-calibration.md) of the last pipeline "
            "stage: GEMMs at the dense peak of the precision times an efficiency that falls "
            "with the per-GPU matrix sizes, flash attention at the BF16 peak (FP8 speeds up "
            "GEMMs only), element-wise work at HBM bandwidth, a fixed cost per layer and "
            "micro batch, TP collectives and the CP ring over the node fabric (or the "
            "internode link), PP sends, the bubble (p-1)/v micro batches, DP reduce-scatter "
            "and all-gather over DP x CP (a ring across nodes on the NICs of its members on "
            "each node; exposed unless overlap_grad_reduce / overlap_param_gather, then what "
            "the compute after each model chunk's last backward cannot hide), optimizer step "
            "at HBM bandwidth; FP8 keeps linear-layer inputs in 1 byte",
            "search ranks in tiers: estimates within %.0f %% of a tier's best are ties, the "
            "smaller TP x PP first (Narayanan et al. 2021, takeaway 2)"
            % (100 * _planner_search.RANK_TIE_BAND),
            "mfu, when given, replaces the calibrated large-GEMM efficiency of the precision; "
            "model_flops_utilization is what the estimate implies",
        ],
    }


def _round_dict(d, digits=3):
    out = {}
    for k, v in d.items():
        if isinstance(v, float) and k != "headroom_fraction":
            out[k] = round(v, digits)
        else:
            out[k] = v
    return out


def search(spec, limit=10):
    """Rank every valid layout that fits by estimated tokens/s per GPU (then by memory),
    the best VPP / micro batch / recomputation of each TP x PP x CP; returns
    [(context, result)]. See ``_planner_search.rank``."""
    ctx = normalize(spec)
    if ctx["global_batch_size"] is None:
        raise PlannerError("search needs global_batch_size: throughput depends on it")
    return _planner_search.rank(ctx, limit)


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
