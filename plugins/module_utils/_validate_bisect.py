# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Find the bad node: what operators do by hand when a multi-node result fails.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``plan_pairs(hosts)`` gives the multi-node runs that locate one slow or broken node: the ring of
pairs ``(h0,h1), (h1,h2), ..., (hn-1,h0)`` (every node in two pairs, n runs; for two nodes the
single pair). The search also needs each node alone (the single-node test): with two nodes the
pair alone can never tell which side is at fault.

``find_bad_nodes(checks)`` reads the verdicts of those runs (the ``busbw``/``complete``/``wrong``
checks of ``all_reduce_multi`` results over a list of nodes, and of ``all_reduce_single``
results) and names the culprit(s) with the evidence:

* a node whose single-node run failed is a culprit;
* a node that is in at least one failing group and in no passing group, while every other node
  of those failing groups is cleared by a passing MULTI-node group, is a culprit. A passing
  single-node run does not clear a node here: it never used the node's network adapters, so a
  failing pair whose other node only passed alone stays undetermined;
* a failing group that no culprit explains is reported as undetermined, with what would tell
  (``advice``): nobody is drained for it.
"""

from __future__ import annotations

import re

from ansible_collections.gpucluster.training.plugins.module_utils._validate_policy import ValidateJudgeError

__all__ = ["plan_pairs", "find_bad_nodes"]

_JUDGED = ("busbw", "complete", "wrong")
# The "who" of a check message ("node gpu2: ", "cluster (gpu1, gpu2): "): the evidence says it already.
_WHO = re.compile(r"^(?:node [^ :]+|cluster \([^)]{0,4000}\)): ")


def plan_pairs(hosts):
    """Pairs for the bad-node search: a ring over the hosts (order kept, duplicates dropped)."""
    if not isinstance(hosts, (list, tuple)):
        raise ValidateJudgeError("plan_pairs: hosts must be a list")
    seen = []
    for host in hosts:
        if not isinstance(host, str) or not host:
            raise ValidateJudgeError("plan_pairs: every host must be a name, got %r" % (host,))
        if host not in seen:
            seen.append(host)
    if len(seen) < 2:
        return []
    if len(seen) == 2:
        return [[seen[0], seen[1]]]
    return [[seen[i], seen[(i + 1) % len(seen)]] for i in range(len(seen))]


def _groups(checks):
    """{tuple(nodes): {'status': pass|fail, 'evidence': [message]}} of the judged runs."""
    groups = {}
    for chk in checks:
        if chk.get("check") not in _JUDGED or chk.get("status") not in ("pass", "fail"):
            continue
        if chk.get("test") == "all_reduce_multi" and isinstance(chk.get("node"), (list, tuple)):
            key = tuple(sorted(chk["node"]))
        elif chk.get("test") == "all_reduce_single" and isinstance(chk.get("node"), str):
            key = (chk["node"],)
        else:
            continue
        entry = groups.setdefault(key, {"status": "pass", "evidence": []})
        if chk["status"] == "fail":
            entry["status"] = "fail"
            entry["evidence"].append(_WHO.sub("", chk.get("message") or "", count=1))
        elif chk.get("check") == "busbw" and entry["status"] == "pass":
            entry["evidence"].append(_WHO.sub("", chk.get("message") or "", count=1))
    return groups


def _summary(host, evidence):
    """One line first in a culprit's evidence (and so in its drain reason): why this node."""
    alone = any(e.startswith("alone: ") for e in evidence)
    peers = [e[len("with "):].split(":", 1)[0].split(" (", 1)[0] for e in evidence if e.startswith("with ")]
    if alone:
        return "%s fails alone%s" % (host, " and with %s" % ", ".join(peers) if peers else "")
    return "%s fails with %s, which pass%s in other runs" % (host, " and with ".join(peers),
                                                             "es" if len(peers) == 1 else "")


def find_bad_nodes(checks):
    """Culprits of the failing runs among ``checks`` (see the module docstring).

    Returns ``{culprits: {host: [evidence]}, cleared: [host], undetermined: [[hosts]],
    advice: [text], groups: [{nodes, status}]}``.
    """
    if not isinstance(checks, (list, tuple)):
        raise ValidateJudgeError("find_bad_nodes: checks must be a list")
    groups = _groups(checks)
    passing = [set(k) for k, v in groups.items() if v["status"] == "pass"]
    failing = [(set(k), v) for k, v in groups.items() if v["status"] == "fail"]
    alone_pass = set()
    cleared = set()  # by a passing multi-node run: the node, its adapters and its links work
    for nodes in passing:
        if len(nodes) == 1:
            alone_pass |= nodes
        else:
            cleared |= nodes
    culprits = {}
    for nodes, entry in failing:
        if len(nodes) == 1:
            host = next(iter(nodes))
            culprits.setdefault(host, []).append("alone: " + "; ".join(entry["evidence"]))
            cleared.discard(host)
            alone_pass.discard(host)
    undetermined = []
    advice = []
    for nodes, entry in failing:
        if len(nodes) == 1:
            continue
        if nodes & set(culprits):
            for host in sorted(nodes & set(culprits)):
                culprits[host].append("with %s: %s" % (
                    ", ".join(sorted(nodes - {host})) or "-", "; ".join(entry["evidence"])))
            continue
        suspects = nodes - cleared
        if len(suspects) == 1:
            host = suspects.pop()
            cleared_peers = sorted(nodes - {host})
            culprits.setdefault(host, []).append(
                "with %s: %s" % (", ".join(cleared_peers), "; ".join(entry["evidence"])))
            continue
        undetermined.append(sorted(nodes))
        untested = sorted(suspects - alone_pass)
        if untested:
            advice.append("the run of %s fails and %s has no single-node result: test %s alone"
                          % (", ".join(sorted(nodes)), ", ".join(untested),
                             "it" if len(untested) == 1 else "each"))
        else:
            advice.append("the run of %s fails while %s pass%s alone: the fault is on the path between "
                          "them (an adapter, cable or switch port); test each with a node that passes "
                          "in a pair" % (", ".join(sorted(nodes)), ", ".join(sorted(suspects)),
                                         "es" if len(suspects) == 1 else ""))
    # A culprit found through a pair must not also be cleared elsewhere (it would be ambiguous).
    for host in list(culprits):
        if host in cleared and not any(len(n) == 1 and host in n for n, _entry in failing):
            undetermined.append([host])
            advice.append("%s is in failing and passing multi-node runs: rerun to tell" % host)
            del culprits[host]
    return {
        "culprits": dict((h, [_summary(h, culprits[h])] + culprits[h]) for h in sorted(culprits)),
        "cleared": sorted((cleared | alone_pass) - set(culprits)),
        "undetermined": sorted(undetermined),
        "advice": advice,
        "groups": [{"nodes": list(k), "status": v["status"]} for k, v in sorted(groups.items())],
    }
