# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Judge parsed validation results against limits computed from the probed hardware.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

Answers "is this bandwidth normal?" with a limit that comes from the node's own hardware, not
one fixed number:

* inter-node ``all_reduce_perf`` bus bandwidth against the node's selected RDMA ports x their
  rate: ``sum(rate_gbps) / 8`` GB/s.  nccl-tests scales ``busbw`` so that it "should reflect the
  speed of the hardware bottleneck" (nccl-tests ``doc/PERFORMANCE.md``); for a ring all-reduce
  every node sends ``2(N-1)/N x size`` bytes through its NICs, so ``busbw`` cannot exceed the
  node's NIC bandwidth.  Hierarchical algorithms (Tree, NVLS, CollNet) send less over the network
  and can exceed that on few nodes, up to ``x (N-1)/N x n/(n-1)`` (N ranks, n nodes: 1.875 for
  2 x 8 GPUs): a result above the ring bound passes with a note, a result above the
  hierarchical bound says the hardware description looks understated;
* intra-node (one node) ``all_reduce_perf`` against the GPU interconnect of the probed model:
  half of ``interconnect_gbs`` (the aggregate bidirectional xGMI / NVLink figure of
  ``_hardware.GPUS``), i.e. one direction;
* ``ib_write_bw`` (perftest) average bandwidth against the port's rate (twice it when the test
  was bidirectional), in Gb/s;
* an ``NCCL_DEBUG=INFO`` log: ``NET/Socket`` where RDMA was expected fails and names the node and
  the log line; no ``GDRDMA`` channel where a peer-memory client is present fails likewise;
* health: the probed GPU count against the expected one, and every selected port ACTIVE/LinkUp.

Entry points: ``node_hardware`` (normalise facts), ``limits``, ``judge_collective``,
``judge_nccl_log``, ``judge_perftest``, ``judge_health`` and ``judge_run`` (all of them over a
list of results, with the verdict per node and the drain reasons).  Bad input raises
``ValidateJudgeError`` (a ``ValueError``).
"""

from __future__ import annotations

import math

from ansible_collections.gpucluster.training.plugins.module_utils import _hardware as hw

__all__ = [
    "ValidateJudgeError", "DEFAULT_POLICY", "TESTS", "node_hardware", "limits", "policy_of",
    "judge_collective", "judge_nccl_log", "judge_perftest", "judge_health", "judge_run",
]

TESTS = ("all_reduce_single", "all_reduce_multi", "nccl_log", "ib_write_bw")
DRAIN_PREFIX = "gpucluster validate: "
DEFAULT_POLICY = {
    # Measured / limit below this fails. A number applies to every test; a dict per test.
    "min_efficiency": {"all_reduce_single": 0.75, "all_reduce_multi": 0.75, "ib_write_bw": 0.9},
    # Rows at least this large are where bus bandwidth plateaus; the best of them is judged.
    "min_size_bytes": 1073741824,
    # auto: RDMA expected where the node has a selected RDMA port; true / false: the site says.
    "expect_rdma": "auto",
    # auto: GDRDMA expected where a peer-memory client is present; true / false: the site says.
    "expect_gdrdma": "auto",
    # GPUs each node must have (null: the count the hardware description gives is not judged).
    "expected_gpus": None,
    # Nodes a multi-node run must span (null: not judged).
    "expected_nodes": None,
    # Checks that drain a failing node (single-node results and health only by default: a
    # cluster-wide result does not say which node is at fault).
    "drain_checks": ["complete", "wrong", "busbw", "network", "gdrdma", "bandwidth", "gpu_count",
                     "port_state"],
    "drain_on_cluster_failure": False,
    "reason_max_chars": 180,
}


class ValidateJudgeError(ValueError):
    """Input to the judgement that cannot be understood."""


def _num(value, what, allow_none=True):
    if value is None or value == "":
        if allow_none:
            return None
        raise ValidateJudgeError("%s is required" % what)
    if isinstance(value, bool):
        raise ValidateJudgeError("%s must be a number, got %r" % (what, value))
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValidateJudgeError("%s must be a number, got %r" % (what, value))
    if not math.isfinite(out) or out < 0:
        raise ValidateJudgeError("%s must be a finite number >= 0, got %r" % (what, value))
    return out


def _tri(value, what):
    """auto / true / false."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text == "auto":
        return "auto"
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValidateJudgeError("%s must be auto, true or false, got %r" % (what, value))


def policy_of(policy=None):
    """DEFAULT_POLICY with the caller's keys on top, checked."""
    if policy is None:
        policy = {}
    if not isinstance(policy, dict):
        raise ValidateJudgeError("policy must be a dict, got %s" % type(policy).__name__)
    unknown = sorted(set(policy) - set(DEFAULT_POLICY))
    if unknown:
        raise ValidateJudgeError("unknown policy key(s) %s: known are %s"
                                 % (", ".join(unknown), ", ".join(sorted(DEFAULT_POLICY))))
    out = dict(DEFAULT_POLICY)
    out["min_efficiency"] = dict(DEFAULT_POLICY["min_efficiency"])
    for key, value in policy.items():
        if value is None and key not in ("expected_gpus", "expected_nodes"):
            continue
        if key == "min_efficiency":
            if isinstance(value, dict):
                for test, eff in value.items():
                    if test not in TESTS:
                        raise ValidateJudgeError("min_efficiency names unknown test %r" % (test,))
                    out["min_efficiency"][test] = _num(eff, "min_efficiency.%s" % test, False)
            else:
                eff = _num(value, "min_efficiency", False)
                out["min_efficiency"] = dict((test, eff) for test in out["min_efficiency"])
        elif key in ("expect_rdma", "expect_gdrdma"):
            out[key] = _tri(value, key)
        elif key in ("expected_gpus", "expected_nodes", "min_size_bytes", "reason_max_chars"):
            out[key] = None if value is None else int(_num(value, key, False))
        elif key == "drain_checks":
            if not isinstance(value, (list, tuple)):
                raise ValidateJudgeError("drain_checks must be a list")
            out[key] = [str(item) for item in value]
        elif key == "drain_on_cluster_failure":
            out[key] = bool(_tri(value, key) is True)
    for test, eff in out["min_efficiency"].items():
        if eff > 1.5:
            raise ValidateJudgeError("min_efficiency.%s=%s: give a fraction (0.75), not a percentage"
                                     % (test, eff))
    return out


# ---------------------------------------------------------------------------------------------
# Hardware

def _port_label(device, port):
    return "%s:%s" % (device, port)


def _ports_from_rdma(rdma, hcas):
    """Selected ports of a gpucluster_rdma fact: those named in hcas, else every ACTIVE one."""
    if rdma is None:
        return None
    if not isinstance(rdma, dict):
        raise ValidateJudgeError("gpucluster_rdma must be a dict, got %s" % type(rdma).__name__)
    found = []
    for device in rdma.get("devices") or []:
        if not isinstance(device, dict) or not device.get("name"):
            raise ValidateJudgeError("every gpucluster_rdma device needs a name")
        for port in device.get("ports") or []:
            if not isinstance(port, dict) or port.get("port") is None:
                raise ValidateJudgeError("device %s has a port without a number" % device["name"])
            found.append({
                "name": _port_label(device["name"], port["port"]),
                "rate_gbps": _num(port.get("rate_gbps"), "rate of %s" % device["name"]),
                "link_layer": port.get("link_layer"),
                "state": str(port.get("state") or "unknown").upper(),
                "phys_state": str(port.get("phys_state") or "unknown"),
            })
    if hcas:
        wanted = []
        for item in hcas:
            text = str(item).strip()
            wanted.append(text if ":" in text else text + ":1")
        chosen = [p for p in found if p["name"] in wanted]
        missing = [w for w in wanted if w not in [p["name"] for p in found]]
        for name in missing:
            chosen.append({"name": name, "rate_gbps": None, "link_layer": None, "state": "MISSING",
                           "phys_state": "absent"})
        return chosen
    return [p for p in found if p["state"] == "ACTIVE"]


def node_hardware(gpus=None, rdma=None, hcas=None, peer_memory=None, override=None):
    """Normalise what is known of one node.

    ``gpus``: the gpucluster_gpus fact (or a preset name); ``rdma``: the gpucluster_rdma fact;
    ``hcas``: the ports the RDMA role selected (``["mlx5_0:1", ...]``, else every ACTIVE port);
    ``peer_memory``: true/false/None (None: from ``rdma.peer_memory``); ``override``: the
    hardware a supplied result was measured on: ``{gpu, gpu_count, ports, rate_gbps,
    link_layer, peer_memory, source}`` (``ports`` a count or a list of names).
    """
    out = {"gpu_preset": None, "gpu_name": None, "gpu_count": None, "interconnect": None,
           "interconnect_gbs": None, "gpu_sources": [], "ports": None, "peer_memory": None,
           "source": "probed facts"}
    if isinstance(gpus, str) and gpus:
        gpus = {"slurm_type": gpus, "model": gpus}
    if gpus is not None and not isinstance(gpus, dict):
        raise ValidateJudgeError("gpucluster_gpus must be a dict, got %s" % type(gpus).__name__)
    if gpus:
        try:
            preset = hw.preset_for_gpu_info(gpus)
        except hw.HardwareError as exc:
            raise ValidateJudgeError(str(exc))
        out["gpu_name"] = gpus.get("model") or gpus.get("slurm_type")
        count = gpus.get("count")
        out["gpu_count"] = None if count in (None, "") else int(_num(count, "gpu count", False))
        if preset:
            entry = hw.GPUS[preset]
            out.update(gpu_preset=preset, interconnect=entry["interconnect"],
                       interconnect_gbs=entry["interconnect_gbs"],
                       gpu_sources=list(entry["sources"]))
            out["gpu_name"] = out["gpu_name"] or entry["name"]
    out["ports"] = _ports_from_rdma(rdma, hcas)
    if peer_memory is None and isinstance(rdma, dict) and rdma.get("peer_memory") is not None:
        peer_memory = bool(rdma.get("peer_memory"))
    out["peer_memory"] = None if peer_memory is None else bool(peer_memory)
    if override:
        if not isinstance(override, dict):
            raise ValidateJudgeError("hardware override must be a dict, got %s" % type(override).__name__)
        if override.get("gpu") not in (None, ""):
            sub = node_hardware(gpus={"slurm_type": override["gpu"], "model": override["gpu"],
                                      "count": override.get("gpu_count")})
            if sub["gpu_preset"] is None:
                try:
                    sub_preset = hw.gpu_preset(str(override["gpu"]))["preset"]
                except hw.HardwareError as exc:
                    raise ValidateJudgeError(str(exc))
                entry = hw.GPUS[sub_preset]
                sub.update(gpu_preset=sub_preset, interconnect=entry["interconnect"],
                           interconnect_gbs=entry["interconnect_gbs"],
                           gpu_sources=list(entry["sources"]), gpu_name=entry["name"])
            for key in ("gpu_preset", "gpu_name", "interconnect", "interconnect_gbs", "gpu_sources"):
                out[key] = sub[key]
        if override.get("gpu_count") not in (None, ""):
            out["gpu_count"] = int(_num(override["gpu_count"], "gpu_count", False))
        if override.get("ports") not in (None, ""):
            rate = _num(override.get("rate_gbps"), "rate_gbps", False)
            names = override["ports"]
            if not isinstance(names, (list, tuple)):
                names = ["port%d" % (i + 1) for i in range(int(_num(names, "ports", False)))]
            out["ports"] = [{"name": str(n), "rate_gbps": rate, "link_layer": override.get("link_layer"),
                             "state": "ACTIVE", "phys_state": "LinkUp"} for n in names]
        if override.get("peer_memory") is not None:
            out["peer_memory"] = bool(_tri(override["peer_memory"], "peer_memory") is True)
        out["source"] = str(override.get("source") or "hardware given with the supplied result")
    elif isinstance(gpus, dict) and gpus.get("simulated"):
        out["source"] = "SIMULATED facts (gpucluster_gpus marked simulated: no GPU behind them)"
    return out


def _hierarchical_factor(ranks, nodes):
    if not ranks or not nodes or nodes < 2 or ranks < nodes:
        return None
    return (ranks - 1.0) / ranks * nodes / (nodes - 1.0)


def limits(hardware):
    """Limits of one node: inter-node GB/s (ports x rate / 8), intra-node GB/s, per-port Gb/s."""
    ports = hardware.get("ports") or []
    rates = [p["rate_gbps"] for p in ports if p.get("rate_gbps")]
    inter = sum(rates) / 8.0 if rates and len(rates) == len(ports) else None
    intra = None
    if hardware.get("interconnect_gbs") and (hardware.get("gpu_count") or 2) >= 2:
        intra = hardware["interconnect_gbs"] / 2.0
    return {
        "inter_node_gbs": inter,
        "inter_node_basis": ("%d port(s) x %s Gb/s = %s Gb/s = %s GB/s (ring all-reduce bound)"
                             % (len(ports), _fmt(rates[0]) if len(set(rates)) == 1 else "+".join(_fmt(r) for r in rates),
                                _fmt(sum(rates)), _fmt(inter))) if inter else None,
        "intra_node_gbs": intra,
        "intra_node_basis": ("%s %s %s GB/s aggregate bidirectional per GPU / 2 = %s GB/s one direction"
                             % (hardware.get("gpu_name"), hardware.get("interconnect"),
                                _fmt(hardware["interconnect_gbs"]), _fmt(intra))) if intra else None,
        "port_gbps": dict((p["name"], p.get("rate_gbps")) for p in ports),
        "sources": list(hardware.get("gpu_sources") or []),
    }


def _fmt(value):
    if value is None:
        return "n/a"
    value = float(value)
    return ("%d" % value) if value == int(value) else ("%.2f" % value).rstrip("0").rstrip(".")


def _check(node, test, check, status, message, measured=None, limit=None, unit=None,
           threshold=None, line=None, note=None):
    eff = None
    if measured is not None and limit:
        eff = round(measured / limit, 4)
    return {"node": node, "test": test, "check": check, "status": status, "measured": measured,
            "limit": limit, "unit": unit, "efficiency": eff, "threshold": threshold,
            "line": line, "message": message, "note": note}


def _who(node):
    if isinstance(node, (list, tuple)):
        return "cluster (%s)" % ", ".join(node)
    return "node %s" % node


# ---------------------------------------------------------------------------------------------
# Judgements

def _judged_row(parsed, min_size):
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


def judge_collective(parsed, test, hardware, policy=None, node=None):
    """Checks of one all_reduce_perf result: complete, wrong, nodes, busbw against the limit.

    ``test`` is ``all_reduce_single`` (one node: the GPU interconnect limit) or
    ``all_reduce_multi`` (several nodes: the slowest node's ports x rate; ``hardware`` may then
    be a list, one per node).
    """
    pol = policy_of(policy)
    if test not in ("all_reduce_single", "all_reduce_multi"):
        raise ValidateJudgeError("judge_collective: test must be all_reduce_single or all_reduce_multi, got %r" % (test,))
    if not isinstance(parsed, dict) or "rows" not in parsed:
        raise ValidateJudgeError("judge_collective: expected the collective_perf filter's result")
    who = _who(node)
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

    hws = hardware if isinstance(hardware, (list, tuple)) else [hardware]
    lims = [limits(h) for h in hws if h]
    threshold = pol["min_efficiency"][test]
    if test == "all_reduce_single":
        values = [l["intra_node_gbs"] for l in lims]
        limit = min(values) if values and all(values) else None
        basis = lims[0]["intra_node_basis"] if limit is not None else None
        missing = "the GPU model has no interconnect figure in _hardware.py (or fewer than 2 GPUs)"
    else:
        values = [l["inter_node_gbs"] for l in lims]
        limit = min(values) if values and all(v is not None for v in values) else None
        basis = None
        if limit is not None:
            basis = [l["inter_node_basis"] for l in lims if l["inter_node_gbs"] == limit][0]
            if len(lims) > 1:
                basis += ", slowest of %d nodes" % len(lims)
        missing = "no selected RDMA port with a known rate"
    best, note = _judged_row(parsed, pol["min_size_bytes"])
    if best is None:
        checks.append(_check(node, test, "busbw", "fail" if parsed.get("rows") == [] else "skip",
                             "%s: no bus bandwidth to judge" % who, unit="GB/s"))
        return checks
    measured, size, half = best
    at = "%s GB/s at %s bytes (%s)" % (_fmt(measured), size, half.replace("_", "-"))
    if limit is None:
        checks.append(_check(node, test, "busbw", "skip",
                             "%s: bus bandwidth %s not judged: %s" % (who, at, missing),
                             measured=measured, unit="GB/s", threshold=threshold, note=note))
        return checks
    eff = measured / limit
    notes = [note] if note else []
    if test == "all_reduce_multi" and eff > 1.0:
        factor = _hierarchical_factor(parsed.get("ranks"), parsed.get("nodes"))
        if factor and measured > limit * factor * 1.02:
            notes.append("above even the hierarchical bound (%s GB/s): the ports or rate in the hardware "
                         "description look understated" % _fmt(round(limit * factor, 2)))
        else:
            notes.append("above the ring bound: NCCL used a hierarchical algorithm (Tree/NVLS/CollNet), "
                         "which sends less over the network%s"
                         % ((" (bound for %s ranks on %s nodes: %s GB/s)"
                             % (parsed.get("ranks"), parsed.get("nodes"), _fmt(round(limit * factor, 2))))
                            if factor else ""))
    if test == "all_reduce_single" and eff > 1.0:
        notes.append("above one direction of the GPU interconnect: an in-switch reduction (NVLS) "
                     "or a wrong GPU model in the hardware description")
    status = "pass" if eff >= threshold else "fail"
    msg = ("%s: all_reduce bus bandwidth %s is %.0f%% of the %s GB/s limit (%s); threshold %.0f%%"
           % (who, at, eff * 100, _fmt(limit), basis, threshold * 100))
    checks.append(_check(node, test, "busbw", status, msg, measured=measured, limit=limit,
                         unit="GB/s", threshold=threshold, note="; ".join(notes) or None))
    return checks


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


def _short(text, size):
    text = " ".join(str(text).split())
    return text if len(text) <= size else text[: size - 3] + "..."


_HW_KEYS = ("gpus", "rdma", "hcas", "peer_memory", "override")


def _hardware_of(value, host):
    """A node_hardware() result, or the raw inputs of one ({gpus, rdma, hcas, peer_memory, override})."""
    if value is None:
        return node_hardware()
    if not isinstance(value, dict):
        raise ValidateJudgeError("hardware of %s must be a dict, got %s" % (host, type(value).__name__))
    if "gpu_preset" in value and "ports" in value:
        return value
    unknown = sorted(set(value) - set(_HW_KEYS))
    if unknown:
        raise ValidateJudgeError("hardware of %s: unknown key(s) %s (known: %s)"
                                 % (host, ", ".join(unknown), ", ".join(_HW_KEYS)))
    return node_hardware(**value)


def judge_run(results, hardware, policy=None, nodes=None, run=None):
    """Judge every result of a run.

    ``results``: ``[{node, test, result, port?, peer?, origin?, source?, hardware?}]`` where
    ``result`` is the parsed dict (collective_perf / nccl_log / perftest filter), ``node`` an
    inventory host (or, for ``all_reduce_multi``, a list of hosts), ``origin`` ``measured`` or
    ``supplied``, ``hardware`` an override for a supplied result (see ``node_hardware``).
    ``hardware``: ``{host: node_hardware(...)}`` or ``{host: {gpus, rdma, hcas, peer_memory,
    override}}`` (the inputs of ``node_hardware``).  ``nodes``: hosts whose health is judged
    (default: the keys of ``hardware``).  ``run``: metadata copied into the report (and its
    Markdown), e.g. ``{mode: supplied, slurm: true}``.

    Returns ``{verdict, checks, nodes: {host: {verdict, failed, drain, reason, limits}},
    cluster: {verdict, failed}, supplied, measured, counts, policy, run, hardware, markdown}``.
    """
    pol = policy_of(policy)
    if run is not None and not isinstance(run, dict):
        raise ValidateJudgeError("run must be a dict, got %s" % type(run).__name__)
    if not isinstance(results, (list, tuple)):
        raise ValidateJudgeError("results must be a list, got %s" % type(results).__name__)
    if not isinstance(hardware, dict):
        raise ValidateJudgeError("hardware must be a dict {host: hardware}, got %s" % type(hardware).__name__)
    hosts = list(nodes) if nodes is not None else list(hardware)
    hardware = dict((str(h), _hardware_of(v, h)) for h, v in hardware.items())
    checks = []
    node_limits = dict((h, limits(hardware.get(h) or {})) for h in hosts)
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
            if override:
                check["hardware"] = (hws[0] if isinstance(hws, list) else hws).get("source")
        checks.extend(new)
    for host in hosts:
        for check in judge_health(hardware.get(host) or {}, pol, host):
            check["origin"] = "probed"
            check["source"] = (hardware.get(host) or {}).get("source")
            checks.append(check)

    per_node = {}
    for host in hosts:
        mine = [c for c in checks if c["node"] == host]
        failed = [c for c in mine if c["status"] == "fail"]
        drainable = [c for c in failed if c["check"] in pol["drain_checks"]]
        reason = None
        if drainable:
            first = drainable[0]
            reason = _short(DRAIN_PREFIX + "%s %s failed%s" % (
                first["test"], first["check"],
                (": %s" % first["message"].split(": ", 1)[-1]) if first["message"] else ""),
                pol["reason_max_chars"])
        per_node[host] = {"verdict": "fail" if failed else ("pass" if mine else "none"),
                          "failed": [c["message"] for c in failed],
                          "drain": bool(drainable), "reason": reason,
                          "checks": len(mine), "limits": node_limits.get(host)}
    cluster_checks = [c for c in checks if isinstance(c["node"], list)]
    cluster_failed = [c for c in cluster_checks if c["status"] == "fail"]
    if cluster_failed and pol["drain_on_cluster_failure"]:
        for check in cluster_failed:
            for host in check["node"]:
                if host in per_node and not per_node[host]["drain"]:
                    per_node[host]["drain"] = True
                    per_node[host]["reason"] = _short(DRAIN_PREFIX + "cluster %s %s failed"
                                                      % (check["test"], check["check"]), pol["reason_max_chars"])
    counts = {"pass": 0, "fail": 0, "skip": 0}
    for check in checks:
        counts[check["status"]] += 1
    report = {
        "verdict": "fail" if counts["fail"] else "pass",
        "counts": counts,
        "checks": checks,
        "nodes": per_node,
        "cluster": {"verdict": "fail" if cluster_failed else ("pass" if cluster_checks else "none"),
                    "failed": [c["message"] for c in cluster_failed]},
        "supplied": "supplied" in origins,
        "measured": "measured" in origins,
        "policy": pol,
        "run": dict(run or {}),
        "hardware": hardware,
    }
    report["markdown"] = report_markdown(report)
    return report


def report_markdown(report, title="gpucluster validate"):
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
        if lim.get("inter_node_gbs"):
            parts.append("inter-node %s GB/s" % _fmt(lim["inter_node_gbs"]))
        if lim.get("intra_node_gbs"):
            parts.append("intra-node %s GB/s" % _fmt(lim["intra_node_gbs"]))
        out.append("| %s | %s | %s | %s | %s |" % (
            host, entry.get("verdict"), "yes" if entry.get("drain") else "no", ", ".join(parts) or "-",
            (entry.get("reason") or "-").replace("|", "/")))
    cluster = report.get("cluster") or {}
    out.append("")
    out.append("Cluster-wide (multi-node) verdict: %s" % cluster.get("verdict", "none"))
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
    sources = [c.get("source") for c in report["checks"] if c.get("source")]
    if sources:
        out.append("")
        out.append("## Sources of the results")
        out.append("")
        for src in sorted(set(sources)):
            out.append("- %s" % src)
    out.append("")
    return "\n".join(out)
