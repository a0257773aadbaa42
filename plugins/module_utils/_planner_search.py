# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Layout search of the parallel-layout planner: the nearest valid layouts to an invalid
one, and the ranking of every valid layout that fits by estimated throughput (in tiers: estimates
within the model's error are ties, ordered by the smaller TP x PP).

PRIVATE to the collection: not a public API, may change without notice.

The search space is bounded: TP over the divisors of the node size (or of the world size
when TP may span nodes) that divide the heads, PP over the divisors of the world size that
divide the layers, CP over powers of two up to 64, VPP over the divisors of the layers per
stage, micro batch sizes 1, 2, 4, 8 and the one given; recomputation only where a layout
does not fit without it (one escalation loop, ``_fit_with_recompute``).
"""

from __future__ import annotations

import math

from ansible_collections.gpucluster.training.plugins.module_utils._planner_estimate import (
    evaluate,
)
from ansible_collections.gpucluster.training.plugins.module_utils._planner_throughput import (
    outside_calibration,
)

RECOMPUTE = ("none", "selective", "full")


def suggestion(ctx, result):
    est = result["estimate"] or {}
    mem = est.get("memory") or {}
    layout = dict(result["layout"])
    layout.update({
        "micro_batches": result["derived"]["micro_batches"],
        "memory_total_gib": round_or_none(mem.get("total_gib")),
        "weights_and_optimizer_gib": round_or_none(mem.get("weights_and_optimizer_gib")),
        "activations_gib": round_or_none(mem.get("activations_gib")),
        "fits": mem.get("fits"),
        "bubble_fraction": round_or_none(est.get("bubble_fraction"), 4),
        "tokens_per_s_per_gpu": round_or_none(est.get("tokens_per_s_per_gpu"), 1),
        "step_time_s": round_or_none(est.get("step_time_s"), 3),
    })
    layout["extrapolated"] = outside_calibration(ctx)
    ranking = result.get("ranking") or {}
    layout["tier"] = ranking.get("tier")
    layout["tied"] = ranking.get("tied")
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
    if s.get("tier") is not None:
        text += " [tier %d%s]" % (s["tier"], ", tied" if s.get("tied") else "")
    if s.get("extrapolated"):
        text += " (extrapolated: %s)" % "; ".join(s["extrapolated"])
    return text


def round_or_none(value, digits=2):
    if value is None:
        return None
    return round(float(value), digits)


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
    mbss = sorted(set(b for b in (1, 2, 4, 8, mbs0) if b >= 1))
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
                    vpps += [v for v in _divisors(m["layers"] // p) if v > 1]
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


def _only_memory(res):
    return bool(res["violations"]) and all(v.startswith("memory:") for v in res["violations"])


def _fit_with_recompute(cand):
    """Evaluate ``cand``; while it breaks only the memory rule, try the next heavier
    recomputation (none -> selective -> full). Returns (context, result) of the last try."""
    res = evaluate(cand)
    for r in RECOMPUTE[RECOMPUTE.index(cand["recompute"]) + 1:]:
        if not _only_memory(res):
            break
        cand = dict(cand, recompute=r)
        res = evaluate(cand)
    return cand, res


def nearest_layouts(ctx, limit=5):
    """Valid layouts for the same cluster nearest to ``ctx``'s layout: those that fit
    first, then by distance (log2 steps in TP/PP/CP/VPP/MBS, recompute steps, twice the
    log2 change of GBS, which is only changed when no layout keeps it), then by lower
    memory, then by estimated throughput."""
    found = []
    for vary_gbs in (False, True):
        for cand in _candidates(ctx, [ctx["recompute"]], vary_gbs):
            cand, res = _fit_with_recompute(cand)
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
    return [suggestion(c, r) for _key, c, r in found[:limit]]


def layout_key(layout):
    """What a ranking counts as one layout: TP, PP and CP (DP follows from them); VPP,
    micro batch and recomputation are tuned per layout."""
    return (layout["tp"], layout["pp"], layout["cp"])


# Estimates closer than this are ties: about the calibration cases' mean |error| (5.0 %
# and 3.3 % in the two calibration rounds, docs/planner-calibration.md), so a smaller gap
# does not say which layout is faster.
RANK_TIE_BAND = 0.05


def _tiers(entries):
    """Order (tokens/s, memory GiB, context, result) entries in tiers: a tier is the best
    remaining estimate and every layout within ``RANK_TIE_BAND`` of it. Inside a tier the
    smaller model-parallel size TP x PP comes first, then the estimate: Narayanan et al.
    2021 (arXiv:2104.04473) section 3.3 takeaway #2, "a total model-parallel size of
    M = t . p should be used so that the model's parameters and intermediate metadata fit
    in GPU memory; data parallelism can be used to scale up training to more GPUs" (model
    parallelism adds TP collectives and pipeline bubbles the DP-overlapped layout does not
    pay). Yields (tier, tied, entry)."""
    rest = sorted(entries, key=lambda e: (-e[0], e[1]))
    tier = 0
    while rest:
        tier += 1
        floor = rest[0][0] * (1.0 - RANK_TIE_BAND)
        tied = [e for e in rest if e[0] >= floor]
        rest = [e for e in rest if e[0] < floor]
        tied.sort(key=lambda e: (e[2]["tp"] * e[2]["pp"], -e[0], e[1]))
        for entry in tied:
            yield tier, len(tied) > 1, entry


def rank(ctx, limit=10):
    """Every valid layout that fits, keeping the best VPP / micro batch / recomputation
    of each TP x PP x CP, in tiers of estimated tokens/s per GPU (``_tiers``: estimates
    within the model's error are ties, ordered by the smaller TP x PP). Layouts outside
    the range of the published runs the throughput model was fitted on
    (``outside_calibration``: their estimate is an extrapolation) come after the others.

    Varies TP, PP, CP, VPP and micro batch size (recompute only where a layout does not
    fit without it); keeps the model, cluster, GPU, global batch, sequence length,
    precision and optimizer settings of ``ctx``. Returns [(context, result)], each result
    with ``ranking`` (tier, tied, model-parallel size)."""
    best = {}
    for cand in _candidates(ctx, ["none"]):
        cand, res = _fit_with_recompute(cand)
        est = res["estimate"]
        if res["violations"] or not est or est["memory"]["fits"] is False:
            continue
        key = (-(est["tokens_per_s_per_gpu"] or 0.0), est["memory"]["total_gib"])
        layout = layout_key(cand)
        if layout not in best or key < best[layout][0]:
            best[layout] = (key, cand, res)
    ranked = []
    tier0 = 0
    for extrapolated in (False, True):
        entries = [(-key[0], key[1], c, r) for key, c, r in best.values()
                   if bool(outside_calibration(c)) == extrapolated]
        last = tier0
        for tier, tied, (_tps, _mem, c, r) in _tiers(entries):
            last = tier0 + tier
            r["ranking"] = {"tier": last, "tied": tied, "model_parallel": c["tp"] * c["pp"],
                            "tie_band": RANK_TIE_BAND}
            ranked.append((c, r))
        tier0 = last
    return ranked[:limit]
