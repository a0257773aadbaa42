# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A whole validation run: every result judged, verdicts per node, drains, the bad-node search,
the Markdown report and the data of its plot.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind
from ansible_collections.gpucluster.training.plugins.module_utils._validate_bisect import find_bad_nodes
from ansible_collections.gpucluster.training.plugins.module_utils._validate_checks import (
    judge_collective, judge_health, judge_nccl_log, judge_perftest)
from ansible_collections.gpucluster.training.plugins.module_utils._validate_hardware import (
    limits, node_hardware)
from ansible_collections.gpucluster.training.plugins.module_utils._validate_policy import (
    SEARCH_REASON, TESTS, ValidateJudgeError, fmt as _fmt, format_drain_reason, parse_drain_reason, policy_of,
    public_policy)

__all__ = ["judge_run", "report_markdown", "plot_series"]

_HW_KEYS = ("gpus", "rdma", "hcas", "peer_memory", "override")


def _hardware_of(value, host):
    """A node_hardware() result, or the raw inputs of one ({gpus, rdma, hcas, peer_memory, override})."""
    if value is None:
        return node_hardware()
    if not isinstance(value, dict):
        raise ValidateJudgeError("hardware of %s must be a dict, got %s" % (host, kind(value)))
    if "gpu_preset" in value and "ports" in value:
        return value
    unknown = sorted(set(value) - set(_HW_KEYS))
    if unknown:
        raise ValidateJudgeError("hardware of %s: unknown key(s) %s (known: %s)"
                                 % (host, ", ".join(unknown), ", ".join(_HW_KEYS)))
    return node_hardware(**value)


def _undetermined_links(checks):
    """The failing ib_write_bw checks (runs from a node to its peer, tasks/run.yml's ring) that do not
    show their own node at fault: a link has two ends, and a node is shown at fault only when a run
    it sent and a run it received both failed, with two different nodes (its port, not theirs). With
    two nodes, or where the node's other link passed, the failing link is reported, nobody drained
    for it. Runs without a peer (supplied results) are charged to their node as before. Returns
    their ids, and notes the reason in each."""
    links = [c for c in checks if c.get("test") == "ib_write_bw" and c.get("status") == "fail" and c.get("peer")]
    out = set()
    for check in links:
        node = check["node"]
        sent = set(c["peer"] for c in links if c["node"] == node)
        received = set(c["node"] for c in links if c["peer"] == node)
        if sent and received and len(sent | received) >= 2:
            continue
        out.add(id(check))
        why = ("the link %s -> %s failed, and which end is at fault is not shown (%s): not drained for it"
               % (node, check["peer"], "only these two nodes were tested" if sent == received
                  else "its other link passed"))
        check["note"] = "%s; %s" % (check["note"], why) if check.get("note") else why
    return out


def _involves(check, host):
    node = check.get("node")
    return node == host or (isinstance(node, list) and host in node)


def _resume(host, reason, checks):
    """Whether a node this collection drained (Slurm reason ``reason``, made by ``judge_run``
    with ``format_drain_reason``, read back by ``parse_drain_reason``) passed in this run what it
    was drained for, and why (or why not). A node passes nothing it was not tested on: Slurm runs
    no test on a drained node, so a node drained for a measurement stays drained until it is
    resumed by hand (or supplied results pass it); one drained for its ports' state is judged
    again from the probes on every run."""
    wanted = parse_drain_reason(reason)
    if wanted is None:
        return False, "not drained by this collection"
    if not wanted:
        return False, "the drain reason names no check this version knows: resume it by hand"
    passed = [c for c in checks if (c["test"], c["check"]) in wanted and c["status"] == "pass" and _involves(c, host)]
    if passed:
        return True, "passed %s %s in this run" % (passed[0]["test"], passed[0]["check"])
    return False, ("drained for %s, which this run did not measure on it (Slurm runs no test on a drained node): "
                   "resume it by hand once fixed (scontrol update nodename=%s state=resume)"
                   % (" or ".join("%s %s" % w for w in wanted), host))


def judge_run(results, hardware, policy=None, nodes=None, run=None, slurm_nodes=None, left_out=None):
    """Judge every result of a run.

    ``results``: ``[{node, test, result, port?, peer?, origin?, source?, hardware?}]`` where
    ``result`` is the parsed dict (collective_perf / nccl_log / perftest filter), ``node`` an
    inventory host (or, for ``all_reduce_multi``, a list of hosts), ``origin`` ``measured`` or
    ``supplied``, ``hardware`` an override for a supplied result (see ``node_hardware``).
    ``hardware``: ``{host: node_hardware(...)}`` or ``{host: {gpus, rdma, hcas, peer_memory,
    override}}`` (the inputs of ``node_hardware``).  ``nodes``: hosts whose health is judged
    (default: the keys of ``hardware``).  ``run``: metadata copied into the report (and its
    Markdown), e.g. ``{mode: supplied, slurm: true}``. ``slurm_nodes``: ``{node: [state, reason]}`` as
    Slurm lists them (short or inventory names); a node this collection drained (its reason starts
    with DRAIN_PREFIX; ``parse_drain_reason`` reads it) gets ``resume[host].resume`` true only where
    this run passed what it was drained for (``note`` says why or why not). ``left_out``: ``{host: why}``, the
    nodes of the cluster that this run did not judge (unreachable, failed before validation, or not in the run's
    ``--limit``): they are listed, and the run's verdict is ``incomplete`` unless something failed.

    Returns ``{verdict (pass, fail, or incomplete where a test never started), checks, nodes: {host:
    {verdict, failed, not_run, undetermined, drain, reason, limits}}, cluster: {verdict, failed},
    supplied, measured, counts, policy, run, hardware, resume: {host: {resume, note}}, markdown}``.
    """
    pol = policy_of(policy)
    if slurm_nodes is not None and not isinstance(slurm_nodes, dict):
        raise ValidateJudgeError("slurm_nodes must be a dict {node: [state, reason]}, got %s" % kind(slurm_nodes))
    if run is not None and not isinstance(run, dict):
        raise ValidateJudgeError("run must be a dict, got %s" % kind(run))
    if left_out is not None and not isinstance(left_out, dict):
        raise ValidateJudgeError("left_out must be a dict {host: why}, got %s" % kind(left_out))
    left_out = dict((str(h), str(why)) for h, why in (left_out or {}).items())
    if not isinstance(results, (list, tuple)):
        raise ValidateJudgeError("results must be a list, got %s" % kind(results))
    if not isinstance(hardware, dict):
        raise ValidateJudgeError("hardware must be a dict {host: hardware}, got %s" % kind(hardware))
    hosts = list(nodes) if nodes is not None else list(hardware)
    hardware = dict((str(h), _hardware_of(v, h)) for h, v in hardware.items())
    checks = []
    node_limits = dict((h, limits(hardware.get(h) or {}, pol["references"])) for h in hosts)
    origins = set()
    for index, item in enumerate(results):
        if not isinstance(item, dict):
            raise ValidateJudgeError("result %d must be a dict" % index)
        test = item.get("test")
        if test not in TESTS:
            raise ValidateJudgeError("result %d: test must be one of %s, got %r" % (index, ", ".join(TESTS), test))
        node = item.get("node")
        if test == "all_reduce_multi":
            node = list(node) if isinstance(node, (list, tuple)) else ([node] if node else list(hosts))
        elif not isinstance(node, str) or not node:
            raise ValidateJudgeError("result %d (%s) needs the node it belongs to" % (index, test))
        origin = item.get("origin") or "measured"
        origins.add(origin)
        override = item.get("hardware")
        if test == "all_reduce_multi":
            hws = [node_hardware(override=override) if override else hardware.get(h) or {} for h in node]
            if override:
                hws = hws[:1]
        else:
            hws = node_hardware(override=override) if override else hardware.get(node) or {}
        parsed = item.get("result")
        if test.startswith("all_reduce"):
            new = judge_collective(parsed, test, hws, pol, node)
        elif test == "nccl_log":
            new = judge_nccl_log(parsed, hws, pol, node)
        else:
            new = judge_perftest(parsed, hws, pol, node, item.get("port"), item.get("peer"))
        for check in new:
            check["origin"] = origin
            check["source"] = item.get("source")
            if test == "ib_write_bw" and item.get("peer"):
                check["peer"] = item["peer"]
            if override:
                check["hardware"] = (hws[0] if isinstance(hws, list) else hws).get("source")
        checks.extend(new)
    for host in hosts:
        for check in judge_health(hardware.get(host) or {}, pol, host):
            check["origin"] = "probed"
            check["source"] = (hardware.get(host) or {}).get("source")
            checks.append(check)

    undetermined = _undetermined_links(checks)
    per_node = {}
    for host in hosts:
        mine = [c for c in checks if c["node"] == host]
        failed = [c for c in mine if c["status"] == "fail"]
        drainable = [c for c in failed if c["check"] in pol["drain_checks"] and id(c) not in undetermined]
        reason = None
        if drainable:
            first = drainable[0]
            reason = format_drain_reason(first["test"], first["check"],
                                         first["message"].split(": ", 1)[-1] if first["message"] else None,
                                         size=pol["reason_max_chars"])
        per_node[host] = {"verdict": "fail" if failed else ("pass" if mine else "none"),
                          "failed": [c["message"] for c in failed],
                          "not_run": [c["message"] for c in checks if c.get("not_run") and _involves(c, host)],
                          "undetermined": [c["note"] for c in mine if id(c) in undetermined],
                          "drain": bool(drainable), "reason": reason,
                          "checks": len(mine), "limits": node_limits.get(host)}
    cluster_checks = [c for c in checks if isinstance(c["node"], list)]
    cluster_failed = [c for c in cluster_checks if c["status"] == "fail"]
    if cluster_failed and pol["drain_on_cluster_failure"]:
        for check in cluster_failed:
            for host in check["node"]:
                if host in per_node and not per_node[host]["drain"]:
                    per_node[host]["drain"] = True
                    per_node[host]["reason"] = format_drain_reason(check["test"], check["check"], cluster=True,
                                                                   size=pol["reason_max_chars"])
    search = find_bad_nodes(checks)
    for host, evidence in search["culprits"].items():
        # The search's evidence names the node and the runs that convict it (alone, with whom):
        # it is the drain reason even when a node-level check of its own already failed.
        if host in per_node:
            per_node[host]["drain"] = True
            per_node[host]["verdict"] = "fail"
            per_node[host]["failed"].append("%s: %s" % (SEARCH_REASON, "; ".join(evidence)))
            per_node[host]["reason"] = format_drain_reason(evidence=evidence, size=pol["reason_max_chars"])
    # Kept apart from the report's files (report_json leaves it out): it reads Slurm's state, which
    # the run changes itself (a node drained now is listed drained at the next run).
    resume = {}
    for host, entry in per_node.items():
        listed = (slurm_nodes or {}).get(host) or (slurm_nodes or {}).get(host.split(".")[0]) or []
        drained = str(listed[1]).strip() if isinstance(listed, (list, tuple)) and len(listed) > 1 else ""
        if parse_drain_reason(drained) is not None:
            ok, note = _resume(host, drained, checks)
            resume[host] = {"resume": ok and entry["verdict"] == "pass",
                            "note": note if entry["verdict"] == "pass" or not ok else "failed again in this run"}
    counts = {"pass": 0, "fail": 0, "skip": 0}
    for check in checks:
        counts[check["status"]] += 1
    # A run some of whose tests never started, or that left nodes of the cluster out, is incomplete, not a pass
    # (nobody is drained for it).
    not_started = [c for c in checks if c.get("not_run")]
    report = {
        "verdict": "fail" if counts["fail"] else ("incomplete" if not_started or left_out else "pass"),
        "left_out": left_out,
        "counts": counts,
        "checks": checks,
        "nodes": per_node,
        "cluster": {"verdict": "fail" if cluster_failed else ("pass" if cluster_checks else "none"),
                    "failed": [c["message"] for c in cluster_failed]},
        "supplied": "supplied" in origins,
        "measured": "measured" in origins,
        "bad_node_search": search,
        "plot": plot_series(results, checks),
        "policy": public_policy(pol),
        "run": dict(run or {}),
        "hardware": hardware,
        "resume": resume,
    }
    report["markdown"] = report_markdown(report)
    return report


def report_markdown(report, title="gpucluster validate", plot_file="report.png"):
    """A Markdown summary of a ``judge_run`` result (plus ``run`` metadata when present)."""
    if not isinstance(report, dict) or "checks" not in report or "nodes" not in report:
        raise ValidateJudgeError("report_markdown: expected the result of judge_run")
    out = ["# %s: %s" % (title, report.get("verdict", "?").upper()), ""]
    run = report.get("run") or {}
    if report.get("supplied"):
        out.append("**Results were SUPPLIED (captured elsewhere and given to the role), not measured on "
                   "this cluster.** Each check below names its origin and source.")
        out.append("")
    for key in sorted(run):
        value = run[key]
        if isinstance(value, (list, tuple)):
            value = ", ".join(str(v) for v in value)
        out.append("- %s: %s" % (key, value))
    if run:
        out.append("")
    counts = report.get("counts") or {}
    out.append("Checks: %s passed, %s failed, %s skipped." % (counts.get("pass", 0), counts.get("fail", 0),
                                                              counts.get("skip", 0)))
    out.append("")
    out.append("## Nodes")
    out.append("")
    out.append("| node | verdict | drained | limits | reason |")
    out.append("|---|---|---|---|---|")
    for host in sorted(report["nodes"]):
        entry = report["nodes"][host]
        lim = entry.get("limits") or {}
        parts = []
        if lim.get("intra_reference"):
            ref = lim["intra_reference"]
            parts.append("single-node reference %s GB/s (%s)" % (_fmt(ref["busbw_gbs"]), ref["id"]))
        if lim.get("intra_node_gbs"):
            parts.append("single-node ceiling %s GB/s" % _fmt(lim["intra_node_gbs"]))
        if lim.get("inter_reference"):
            ref = lim["inter_reference"]
            parts.append("fabric reference %s GB/s (%s)" % (_fmt(ref["busbw_gbs"]), ref["id"]))
        if lim.get("inter_node_gbs"):
            parts.append("ring ceiling %s GB/s" % _fmt(lim["inter_node_gbs"]))
        reason = entry.get("reason") or "; ".join((entry.get("not_run") or []) + (entry.get("undetermined") or [])) or "-"
        out.append("| %s | %s | %s | %s | %s |" % (
            host, entry.get("verdict"), "yes" if entry.get("drain") else "no", ", ".join(parts) or "-",
            reason.replace("|", "/")))
    for host, why in sorted((report.get("left_out") or {}).items()):
        out.append("| %s | not judged | - | - | %s |" % (host, why.replace("|", "/")))
    cluster = report.get("cluster") or {}
    out.append("")
    out.append("Cluster-wide (multi-node) verdict: %s" % cluster.get("verdict", "none"))
    out.append("")
    if plot_file and (report.get("plot") or {}).get("series"):
        out.append("![bus bandwidth against message size](%s)" % plot_file)
        out.append("")
    search = report.get("bad_node_search") or {}
    if search.get("culprits") or search.get("undetermined"):
        out.append("## Bad-node search")
        out.append("")
        for host, evidence in sorted((search.get("culprits") or {}).items()):
            out.append("- **%s** is the culprit: %s" % (host, " | ".join(evidence).replace("|", "/")))
        for text in search.get("advice") or ["the failing run of %s is not explained by one node (run each "
                                             "node alone and in pairs to tell)" % ", ".join(nodes)
                                             for nodes in search.get("undetermined") or []]:
            out.append("- undetermined: %s" % text)
        if search.get("cleared"):
            out.append("- cleared (pass in at least one run): %s" % ", ".join(search["cleared"]))
        out.append("")
    out.append("## Checks")
    out.append("")
    out.append("| node | test | check | status | measured | limit | efficiency | origin | message |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for check in report["checks"]:
        node = check["node"]
        node = "+".join(node) if isinstance(node, list) else node
        unit = check.get("unit") or ""
        msg = check.get("message") or ""
        if check.get("note"):
            msg += " (note: %s)" % check["note"]
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            node, check["test"], check["check"], check["status"].upper(),
            ("%s %s" % (_fmt(check["measured"]), unit)) if check.get("measured") is not None else "-",
            ("%s %s" % (_fmt(check["limit"]), unit)) if check.get("limit") is not None else "-",
            ("%.0f%%" % (check["efficiency"] * 100)) if check.get("efficiency") is not None else "-",
            check.get("origin") or "-", msg.replace("|", "/")))
    used = {}
    for chk in report["checks"]:
        ref = chk.get("reference")
        if ref:
            used[ref["id"]] = ref
    if used:
        out.append("")
        out.append("## References used")
        out.append("")
        for ref_id in sorted(used):
            ref = used[ref_id]
            out.append("- %s: %s GB/s, %s. Source: %s" % (ref_id, _fmt(ref["busbw_gbs"]), ref["what"], ref["source"]))
    sources = [c.get("source") for c in report["checks"] if c.get("source")]
    if sources:
        out.append("")
        out.append("## Sources of the results")
        out.append("")
        for src in sorted(set(sources)):
            out.append("- %s" % src)
    out.append("")
    return "\n".join(out)


def plot_series(results, checks):
    """Data of the report's plot: bus bandwidth against message size, one series per run, with
    its pass line (reference x margin) and physical ceiling.

    ``[{label, test, nodes, points: [[size_bytes, busbw_gbps], ...], limit, ceiling, reference}]``
    (the best of out-of-place / in-place per size).
    """
    series = []
    busbw = {}
    failed = set()
    for chk in checks:
        if chk.get("status") == "fail" and str(chk.get("test", "")).startswith("all_reduce"):
            failed.add((chk["test"], tuple(chk["node"]) if isinstance(chk["node"], list) else (chk["node"],)))
        if chk.get("check") in ("busbw", "ceiling") and str(chk.get("test", "")).startswith("all_reduce"):
            key = tuple(chk["node"]) if isinstance(chk["node"], list) else (chk["node"],)
            busbw[(chk["test"], key)] = chk
    for item in results or []:
        if not isinstance(item, dict) or not str(item.get("test", "")).startswith("all_reduce"):
            continue
        parsed = item.get("result") or {}
        node = item.get("node")
        nodes = list(node) if isinstance(node, (list, tuple)) else [node]
        points = []
        for row in parsed.get("rows") or []:
            if not isinstance(row, dict) or not row.get("size_bytes"):
                continue
            values = [(row.get(h) or {}).get("busbw_gbps") for h in ("out_of_place", "in_place")]
            values = [v for v in values if v is not None]
            if values:
                points.append([row["size_bytes"], max(values)])
        if not points:
            continue
        chk = busbw.get((item["test"], tuple(nodes))) or {}
        series.append({
            "label": "%s %s" % ("+".join(str(n) for n in nodes), item["test"].replace("all_reduce_", "")),
            "test": item["test"], "nodes": nodes, "points": points,
            "limit": chk.get("limit"), "ceiling": chk.get("ceiling"),
            "reference": (chk.get("reference") or {}).get("id"),
            "reference_gbs": (chk.get("reference") or {}).get("busbw_gbs"),
            "verdict": "fail" if (item["test"], tuple(nodes)) in failed else "pass",
        })
    return {"x": "message size (bytes)", "y": "bus bandwidth (GB/s)", "series": series}
