# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Find the bad node: what operators do by hand when a multi-node result fails.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``plan_pairs(hosts)`` gives the runs that locate one slow or broken node: each node alone (the
single-node test) and the ring of pairs ``(h0,h1), (h1,h2), ..., (hn-1,h0)`` (every node in two
pairs, n runs; for two nodes the single pair, where only the single-node runs can tell).

``find_bad_nodes(checks)`` reads the verdicts of those runs (the ``busbw``/``complete``/``wrong``
checks of ``all_reduce_multi`` results over a list of nodes, and of ``all_reduce_single``
results) and names the culprit(s) with the evidence:

* a node whose single-node run failed is a culprit;
* a node that is in at least one failing group and in no passing group, while every other node
  of those failing groups is cleared by a passing group (or a passing single-node run), is a
  culprit;
* a failing group that no culprit explains is reported as undetermined: nobody is drained for it.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._validate_policy import ValidateJudgeError

__all__ = ["plan_pairs", "find_bad_nodes"]

_JUDGED = ("busbw", "complete", "wrong")


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
            entry["evidence"].append(chk.get("message") or "")
        elif chk.get("check") == "busbw" and entry["status"] == "pass":
            entry["evidence"].append(chk.get("message") or "")
    return groups


def find_bad_nodes(checks):
    """Culprits of the failing runs among ``checks`` (see the module docstring).

    Returns ``{culprits: {host: [evidence]}, cleared: [host], undetermined: [[hosts]],
    groups: [{nodes, status}]}``.
    """
    if not isinstance(checks, (list, tuple)):
        raise ValidateJudgeError("find_bad_nodes: checks must be a list")
    groups = _groups(checks)
    passing = [set(k) for k, v in groups.items() if v["status"] == "pass"]
    failing = [(set(k), v) for k, v in groups.items() if v["status"] == "fail"]
    cleared = set()
    for nodes in passing:
        cleared |= nodes
    culprits = {}
    for nodes, entry in failing:
        if len(nodes) == 1:
            host = next(iter(nodes))
            culprits.setdefault(host, []).append("alone: " + "; ".join(entry["evidence"]))
            cleared.discard(host)
    undetermined = []
    for nodes, entry in failing:
        if len(nodes) == 1:
            continue
        if nodes & set(culprits):
            for host in nodes & set(culprits):
                culprits[host].append("with %s: %s" % (", ".join(sorted(nodes - {host})) or "-",
                                                       "; ".join(entry["evidence"])))
            continue
        suspects = nodes - cleared
        if len(suspects) == 1:
            host = suspects.pop()
            cleared_peers = sorted(nodes - {host})
            culprits.setdefault(host, []).append(
                "with %s (each passes in another run): %s" % (", ".join(cleared_peers), "; ".join(entry["evidence"])))
        else:
            undetermined.append(sorted(nodes))
    # A culprit found through a pair must not also be cleared elsewhere (it would be ambiguous).
    for host in list(culprits):
        if host in cleared and not any(len(n) == 1 and host in n for n, _entry in failing):
            undetermined.append([host])
            del culprits[host]
    return {
        "culprits": dict((h, culprits[h]) for h in sorted(culprits)),
        "cleared": sorted(cleared - set(culprits)),
        "undetermined": sorted(undetermined),
        "groups": [{"nodes": list(k), "status": v["status"]} for k, v in sorted(groups.items())],
    }
