# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Judgements of single results: all_reduce_perf, NCCL logs, ib_write_bw, node health.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``all_reduce_perf``: the pass line is the published healthy bus bandwidth of the matching
reference (``_validate_refs``) x ``policy.reference_margin``; the physical ceiling (GPU
interconnect one direction for one node, selected ports x rate for several, x the hierarchical
factor) refuses impossible results. Without a reference the bandwidth is not judged (skip, with
what the site can add), only the ceiling.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._validate_hardware import (
    hierarchical_factor, limits)
from ansible_collections.gpucluster.training.plugins.module_utils._validate_policy import (
    ValidateJudgeError, check as _check, fmt as _fmt, policy_of, who as _who)

__all__ = ["judge_collective", "judge_nccl_log", "judge_perftest", "judge_health", "judged_row", "not_run"]


def not_run(node, test, tool, why, who=None):
    """The one check of a run that never started (``not_run``: what the launcher or the tool said,
    e.g. srun could not place it on nodes that became busy after sinfo, or the tool refused its
    arguments): it says nothing of the node, so it is a skip, never a failure to drain for; the run's
    verdict says it was incomplete."""
    check = _check(node, test, "complete", "skip", "%s: %s did not run (%s): nothing was measured on the node"
                   % (who or _who(node), tool, " ".join(str(why).split())[:200]))
    check["not_run"] = True
    return check


def judged_row(parsed, min_size):
    """(busbw, size, half) of the best row at or above ``min_size`` (else the largest), and a note."""
    rows = [r for r in parsed.get("rows") or [] if isinstance(r, dict)]
    if not rows:
        return None, None
    big = [r for r in rows if (r.get("size_bytes") or 0) >= min_size]
    note = None
    if not big:
        largest = max(r.get("size_bytes") or 0 for r in rows)
        big = [r for r in rows if (r.get("size_bytes") or 0) == largest]
        note = ("no message of %s bytes or more was run: judged at the largest, %s bytes, where bus "
                "bandwidth may not have reached its plateau" % (min_size, largest))
    best = None
    for row in big:
        for half in ("out_of_place", "in_place"):
            value = (row.get(half) or {}).get("busbw_gbps")
            if value is not None and (best is None or value > best[0]):
                best = (value, row.get("size_bytes"), half)
    if best is None:
        return None, note
    return best, note


def _ref_text(ref):
    return "reference %s (%s GB/s, %s)" % (ref["id"], _fmt(ref["busbw_gbs"]), ref["source"].split(" ", 1)[0])


def _ref_summary(ref):
    return dict((k, ref.get(k)) for k in ("id", "kind", "busbw_gbs", "what", "source", "nodes", "note"))


def judge_collective(parsed, test, hardware, policy=None, node=None):
    """Checks of one all_reduce_perf result: complete, wrong, nodes, busbw against the reference.

    ``test`` is ``all_reduce_single`` (one node: the GPU model's reference, the interconnect as
    ceiling) or ``all_reduce_multi`` (several nodes: the fabric's reference, the slowest node's
    ports x rate as ceiling; ``hardware`` may then be a list, one per node).
    """
    pol = policy_of(policy)
    if test not in ("all_reduce_single", "all_reduce_multi"):
        raise ValidateJudgeError("judge_collective: test must be all_reduce_single or all_reduce_multi, got %r" % (test,))
    if not isinstance(parsed, dict) or "rows" not in parsed:
        raise ValidateJudgeError("judge_collective: expected the collective_perf filter's result")
    who = _who(node)
    if parsed.get("not_run"):
        return [not_run(node, test, "all_reduce_perf", parsed["not_run"])]
    checks = []
    if not parsed.get("complete"):
        checks.append(_check(node, test, "complete", "fail",
                             "%s: all_reduce_perf did not finish (no '# Avg bus bandwidth' line): "
                             "crashed, timed out or the output was cut" % who))
    else:
        checks.append(_check(node, test, "complete", "pass", "%s: the run finished" % who))
    wrong = parsed.get("wrong_total")
    if wrong:
        checks.append(_check(node, test, "wrong", "fail",
                             "%s: %s wrong value(s) in the results (#wrong / out of bounds): data corruption"
                             % (who, wrong), measured=float(wrong), limit=None))
    elif wrong == 0:
        checks.append(_check(node, test, "wrong", "pass", "%s: no wrong value" % who))
    if test == "all_reduce_multi" and pol["expected_nodes"] and parsed.get("nodes") is not None:
        ok = parsed["nodes"] == pol["expected_nodes"]
        checks.append(_check(node, test, "nodes", "pass" if ok else "fail",
                             "%s: the run spans %s node(s), %s expected" % (who, parsed["nodes"], pol["expected_nodes"])))
    checks.append(_busbw(parsed, test, hardware, pol, node))
    return checks


def _busbw(parsed, test, hardware, pol, node):
    who = _who(node)
    hws = hardware if isinstance(hardware, (list, tuple)) else [hardware]
    lims = [limits(h, pol["references"]) for h in hws if h]
    margin = pol["reference_margin"][test]
    if test == "all_reduce_single":
        ceilings = [l["intra_node_gbs"] for l in lims]
        ceiling = min(ceilings) if ceilings and all(ceilings) else None
        basis = lims[0]["intra_node_basis"] if ceiling is not None else None
        ref_list = [l["intra_reference"] for l in lims]
        missing = ("no published single-node reference for this GPU model and count (add one with "
                   "validate_policy.references)")
    else:
        ceilings = [l["inter_node_gbs"] for l in lims]
        ceiling = min(ceilings) if ceilings and all(v is not None for v in ceilings) else None
        basis = None
        if ceiling is not None:
            basis = [l["inter_node_basis"] for l in lims if l["inter_node_gbs"] == ceiling][0]
            if len(lims) > 1:
                basis += ", slowest of %d nodes" % len(lims)
            factor = hierarchical_factor(parsed.get("ranks"), parsed.get("nodes"))
            if factor:
                basis += "; x %.3g for hierarchical algorithms on %s ranks / %s nodes" % (
                    factor, parsed.get("ranks"), parsed.get("nodes"))
                ceiling = round(ceiling * factor, 2)
        ref_list = [l["inter_reference"] for l in lims]
        missing = ("no published reference for this fabric (link layer, port count and rate of the "
                   "selected ports; add one with validate_policy.references)")
    refs_found = [r for r in ref_list if r]
    reference = None
    if refs_found and len(refs_found) == len(ref_list):
        reference = min(refs_found, key=lambda r: r["busbw_gbs"])
    best, note = judged_row(parsed, pol["min_size_bytes"])
    if best is None:
        return _check(node, test, "busbw", "fail" if parsed.get("rows") == [] else "skip",
                      "%s: no bus bandwidth to judge" % who, unit="GB/s")
    measured, size, half = best
    at = "%s GB/s at %s bytes (%s)" % (_fmt(measured), size, half.replace("_", "-"))
    notes = [note] if note else []
    if ceiling is not None and measured > ceiling * 1.02:
        return _check(node, test, "ceiling", "fail",
                      "%s: bus bandwidth %s is IMPOSSIBLE for the described hardware: above its physical "
                      "ceiling %s GB/s (%s). The hardware description is wrong or the result is not from "
                      "this hardware" % (who, at, _fmt(ceiling), basis),
                      measured=measured, limit=None, unit="GB/s", ceiling=ceiling, note="; ".join(notes) or None)
    if reference is None:
        return _check(node, test, "busbw", "skip",
                      "%s: bus bandwidth %s not judged: %s%s" % (
                          who, at, missing,
                          "; physical ceiling %s GB/s (%s)" % (_fmt(ceiling), basis) if ceiling else ""),
                      measured=measured, unit="GB/s", threshold=margin, ceiling=ceiling,
                      note="; ".join(notes) or None)
    line = reference["busbw_gbs"] * margin
    if test == "all_reduce_multi" and reference.get("nodes") and parsed.get("nodes") \
            and parsed["nodes"] != reference["nodes"]:
        notes.append("the reference was measured on %s nodes, this run spans %s"
                     % (reference["nodes"], parsed["nodes"]))
    status = "pass" if measured >= line else "fail"
    msg = ("%s: all_reduce bus bandwidth %s is %.0f%% of the published healthy %s GB/s (%s); pass line "
           "%s GB/s = %.0f%% of it%s" % (
               who, at, measured / reference["busbw_gbs"] * 100, _fmt(reference["busbw_gbs"]), reference["what"],
               _fmt(round(line, 2)), margin * 100,
               "; physical ceiling %s GB/s" % _fmt(ceiling) if ceiling else ""))
    notes.append(_ref_text(reference))
    return _check(node, test, "busbw", status, msg, measured=measured, limit=round(line, 2), unit="GB/s",
                  threshold=margin, note="; ".join(notes), reference=_ref_summary(reference), ceiling=ceiling)


def judge_nccl_log(parsed, hardware, policy=None, node=None):
    """Checks of one NCCL_DEBUG=INFO log: the network used, and GDRDMA where peer memory is present."""
    pol = policy_of(policy)
    if not isinstance(parsed, dict) or "socket_fallback" not in parsed:
        raise ValidateJudgeError("judge_nccl_log: expected the nccl_log filter's result")
    hardware = hardware or {}
    who = _who(node)
    checks = []
    expect_rdma = pol["expect_rdma"]
    if expect_rdma == "auto":
        expect_rdma = bool(hardware.get("ports"))
    channels = parsed.get("channels") or []
    if parsed.get("socket_fallback"):
        first = (parsed.get("socket_lines") or [{}])[0]
        line = first.get("line")
        where = " (log host %s, line %s)" % (first.get("host"), line) if line else ""
        status = "fail" if expect_rdma else "pass"
        checks.append(_check(node, "nccl_log", "network", status,
                             "%s: %s fell back to NET/Socket (TCP)%s%s" % (
                                 who, parsed.get("library") or "NCCL",
                                 " where RDMA was expected" if expect_rdma else "; RDMA not expected", where),
                             line=line,
                             note=("log line %s: %s" % (line, (first.get("text") or "").strip())) if line else None))
    elif expect_rdma and not parsed.get("rdma"):
        checks.append(_check(node, "nccl_log", "network", "fail",
                             "%s: the log shows no RDMA network (network %r) where RDMA was expected"
                             % (who, parsed.get("network"))))
    else:
        checks.append(_check(node, "nccl_log", "network", "pass",
                             "%s: %s used network %s%s" % (who, parsed.get("library") or "NCCL",
                                                           parsed.get("network"),
                                                           (" over " + ", ".join(parsed.get("hcas") or []))
                                                           if parsed.get("hcas") else "")))
    expect_gdr = pol["expect_gdrdma"]
    if expect_gdr == "auto":
        expect_gdr = bool(hardware.get("peer_memory"))
    gdr = parsed.get("gdrdma")
    if not expect_gdr:
        checks.append(_check(node, "nccl_log", "gdrdma", "skip",
                             "%s: GDRDMA not expected (no peer-memory client reported)%s"
                             % (who, "; the log shows GDRDMA %s" % ("in use" if gdr else "unused") if gdr is not None else "")))
    elif gdr is None:
        checks.append(_check(node, "nccl_log", "gdrdma", "skip",
                             "%s: the log has no inter-node channel line to tell GDRDMA" % who))
    elif gdr:
        checks.append(_check(node, "nccl_log", "gdrdma", "pass", "%s: inter-node channels use GDRDMA" % who))
    else:
        first = [c for c in channels if c.get("transport") != "Socket" and not c.get("gdrdma")][:1]
        line = first[0].get("line") if first else None
        where = (" (log host %s, line %s)" % (first[0].get("host"), line)) if first else ""
        checks.append(_check(node, "nccl_log", "gdrdma", "fail",
                             "%s: peer memory is present but no channel used GDRDMA%s: data is staged "
                             "through host memory" % (who, where), line=line,
                             note=("log line %s: channel %s via NET/%s without GDRDMA"
                                   % (line, first[0].get("channel"), first[0].get("transport"))) if first else None))
    return checks


def judge_perftest(parsed, hardware, policy=None, node=None, port=None, peer=None):
    """Checks of one ib_write_bw result: finished, and average bandwidth against the port rate."""
    pol = policy_of(policy)
    if not isinstance(parsed, dict) or "bw_average_max_gbps" not in parsed:
        raise ValidateJudgeError("judge_perftest: expected the perftest filter's result")
    hardware = hardware or {}
    who = _who(node) + (" port %s" % port if port else "") + (" to %s" % peer if peer else "")
    if parsed.get("not_run"):
        return [not_run(node, "ib_write_bw", "ib_write_bw", parsed["not_run"], who)]
    checks = []
    if not parsed.get("complete"):
        checks.append(_check(node, "ib_write_bw", "complete", "fail",
                             "%s: ib_write_bw did not finish (no closing line)" % who))
    ports = hardware.get("ports") or []
    rate = None
    if port:
        wanted = port if ":" in str(port) else "%s:1" % port
        rate = [p.get("rate_gbps") for p in ports if p["name"] in (port, wanted)]
        rate = rate[0] if rate else None
    elif ports and len(set(p.get("rate_gbps") for p in ports)) == 1:
        rate = ports[0].get("rate_gbps")
    measured = parsed.get("bw_average_max_gbps")
    threshold = pol["min_efficiency"]["ib_write_bw"]
    if measured is None:
        checks.append(_check(node, "ib_write_bw", "bandwidth", "fail", "%s: no bandwidth row" % who))
        return checks
    if not rate:
        checks.append(_check(node, "ib_write_bw", "bandwidth", "skip",
                             "%s: %s Gb/s not judged: the port's rate is unknown" % (who, _fmt(measured)),
                             measured=measured, unit="Gb/s", threshold=threshold))
        return checks
    both = parsed.get("bidirectional")
    limit = rate * (2 if both else 1)
    eff = measured / limit
    if eff > 1.05:
        checks.append(_check(
            node, "ib_write_bw", "ceiling", "fail",
            "%s: ib_write_bw%s average %s Gb/s is IMPOSSIBLE: above the %s Gb/s line rate of the port "
            "(rate %s Gb/s%s). The port rate in the hardware description is wrong or the result is not "
            "from this port" % (who, " bidirectional" if both else "", _fmt(measured), _fmt(limit), _fmt(rate),
                                " x 2 directions" if both else ""),
            measured=measured, unit="Gb/s", ceiling=limit))
        return checks
    status = "pass" if eff >= threshold else "fail"
    checks.append(_check(
        node, "ib_write_bw", "bandwidth", status,
        "%s: ib_write_bw%s average %s Gb/s is %.0f%% of the %s Gb/s limit (port rate %s Gb/s%s); threshold %.0f%%"
        % (who, " bidirectional" if both else "", _fmt(measured), eff * 100, _fmt(limit), _fmt(rate),
           " x 2 directions" if both else "", threshold * 100),
        measured=measured, limit=limit, unit="Gb/s", threshold=threshold))
    return checks


def judge_health(hardware, policy=None, node=None, expected_gpus=None):
    """GPU count and state of the selected ports of one node."""
    pol = policy_of(policy)
    hardware = hardware or {}
    who = _who(node)
    checks = []
    want = expected_gpus if expected_gpus is not None else pol["expected_gpus"]
    have = hardware.get("gpu_count")
    if want is not None:
        ok = have is not None and int(have) == int(want)
        checks.append(_check(node, "health", "gpu_count", "pass" if ok else "fail",
                             "%s: %s GPU(s) found, %s expected" % (who, "no" if have is None else have, want),
                             measured=None if have is None else float(have), limit=float(want), unit="GPUs"))
    ports = hardware.get("ports")
    if ports is not None:
        bad = ["%s is %s/%s" % (p["name"], p.get("state"), p.get("phys_state")) for p in ports
               if p.get("state") != "ACTIVE" or str(p.get("phys_state")).lower() != "linkup"]
        if bad:
            checks.append(_check(node, "health", "port_state", "fail",
                                 "%s: selected RDMA port(s) not ACTIVE/LinkUp: %s" % (who, ", ".join(bad))))
        elif ports:
            checks.append(_check(node, "health", "port_state", "pass",
                                 "%s: %d selected RDMA port(s) ACTIVE/LinkUp" % (who, len(ports))))
    return checks
