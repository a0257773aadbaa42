# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Validation policy: the error class, the test names, the drain reasons and the policy keys.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.
The ONE place for ``TESTS`` and ``DRAIN_PREFIX`` (the role's vars repeat them; a unit test keeps
them equal), and for the text of a drain reason: ``format_drain_reason`` writes it, and
``parse_drain_reason`` reads it back from Slurm.
"""

from __future__ import annotations

import re

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind, to_float, to_tri

__all__ = ["ValidateJudgeError", "TESTS", "DRAIN_PREFIX", "SEARCH_REASON", "SEARCH_CHECKS", "DEFAULT_POLICY",
           "policy_of", "format_drain_reason", "parse_drain_reason"]

TESTS = ("all_reduce_single", "all_reduce_multi", "nccl_log", "ib_write_bw")
# Slurm reason prefix of every drain the collection makes. Only nodes whose reason starts with it
# are ever resumed by the collection: an operator's drain is never undone.
DRAIN_PREFIX = "gpucluster validate: "
# What follows the prefix in a reason of the bad-node search (its evidence after ": "), and the
# checks whose passing again resumes a node it drained (the search convicts on all_reduce runs).
SEARCH_REASON = "bad-node search"
SEARCH_CHECKS = (("all_reduce_single", "busbw"), ("all_reduce_multi", "busbw"))
# "<test> <check> failed..." or "cluster <test> <check> failed..." after the prefix. Reasons on
# Slurm nodes outlive the version that wrote them: what this reads must not change.
_REASON_CHECK = re.compile(r"(?:cluster )?(\S+) (\S+) failed")
DEFAULT_POLICY = {
    # all_reduce: pass line = the published healthy bus bandwidth of the matching reference
    # (_validate_refs.py) x this margin. A number, or a dict per all_reduce test.
    "reference_margin": {"all_reduce_single": 0.9, "all_reduce_multi": 0.9},
    # ib_write_bw: measured / port rate below this fails (perftest reaches line rate on a healthy
    # link; the port rate is the reference there).
    "min_efficiency": {"ib_write_bw": 0.9},
    # Site references on top of the published ones: [{kind: intra, gpu, gpu_count, busbw_gbs,
    # source} | {kind: inter, link_layer, ports, rate_gbps, nodes, busbw_gbs, source}].
    "references": [],
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
    # cluster-wide result does not say which node is at fault; the bad-node search does).
    "drain_checks": ["complete", "wrong", "busbw", "network", "gdrdma", "bandwidth", "gpu_count",
                     "port_state"],
    "drain_on_cluster_failure": False,
    "reason_max_chars": 180,
}
_TRI_KEYS = ("expect_rdma", "expect_gdrdma")
_INT_KEYS = ("expected_gpus", "expected_nodes", "min_size_bytes", "reason_max_chars")


class ValidateJudgeError(ValueError):
    """Input to the judgement that cannot be understood."""


def num(value, what, allow_none=True):
    """A finite number >= 0 (bool, nan, inf, negative and 1e999 refused), or None."""
    if isinstance(value, str) and len(value) > 40:
        raise ValidateJudgeError("%s must be a number, got a %d-character text" % (what, len(value)))
    return to_float(value, what, ValidateJudgeError, allow_none=allow_none, minimum=0)


def tri(value, what):
    """auto / true / false."""
    return to_tri(value, what, ValidateJudgeError)


def _per_test(value, key, known):
    out = dict(DEFAULT_POLICY[key])
    if isinstance(value, dict):
        for test, eff in value.items():
            if test not in known:
                raise ValidateJudgeError("%s names unknown test %r (known: %s)" % (key, test, ", ".join(known)))
            out[test] = num(eff, "%s.%s" % (key, test), False)
    else:
        eff = num(value, key, False)
        out = dict((test, eff) for test in out)
    for test, eff in out.items():
        if eff > 1.5:
            raise ValidateJudgeError("%s.%s=%s: give a fraction (0.9), not a percentage" % (key, test, eff))
    return out


def policy_of(policy=None):
    """DEFAULT_POLICY with the caller's keys on top, checked."""
    from ansible_collections.gpucluster.training.plugins.module_utils import _validate_refs as refs

    if policy is None:
        policy = {}
    if not isinstance(policy, dict):
        raise ValidateJudgeError("policy must be a dict, got %s" % kind(policy))
    if policy.get("_checked") is True:
        return policy
    unknown = sorted(set(policy) - set(DEFAULT_POLICY))
    if unknown:
        raise ValidateJudgeError("unknown policy key(s) %s: known are %s"
                                 % (", ".join(unknown), ", ".join(sorted(DEFAULT_POLICY))))
    out = dict(DEFAULT_POLICY)
    for key in ("reference_margin", "min_efficiency"):
        out[key] = dict(DEFAULT_POLICY[key])
    for key, value in policy.items():
        if value is None and key not in ("expected_gpus", "expected_nodes"):
            continue
        if key == "reference_margin":
            out[key] = _per_test(value, key, ("all_reduce_single", "all_reduce_multi"))
        elif key == "min_efficiency":
            out[key] = _per_test(value, key, ("ib_write_bw",))
        elif key == "references":
            out[key] = refs.site_references(value)
        elif key in _TRI_KEYS:
            out[key] = tri(value, key)
        elif key in _INT_KEYS:
            out[key] = None if value is None else int(num(value, key, False))
        elif key == "drain_checks":
            if not isinstance(value, (list, tuple)):
                raise ValidateJudgeError("drain_checks must be a list")
            out[key] = [str(item) for item in value]
        elif key == "drain_on_cluster_failure":
            out[key] = bool(tri(value, key) is True)
    out["_checked"] = True
    return out


def public_policy(pol):
    """The policy as reported (without the internal marker)."""
    return dict((k, v) for k, v in pol.items() if not k.startswith("_"))


def fmt(value):
    """A number without useless decimals (12.5, 400, 1.23)."""
    if value is None:
        return "n/a"
    value = float(value)
    return ("%d" % value) if value == int(value) else ("%.2f" % value).rstrip("0").rstrip(".")


def short(text, size):
    text = " ".join(str(text).split())
    return text if len(text) <= size else text[: size - 3] + "..."


def format_drain_reason(test=None, check=None, detail=None, cluster=False, evidence=None,
                        size=DEFAULT_POLICY["reason_max_chars"]):
    """The Slurm reason of a drain by this collection (``parse_drain_reason`` reads it back).

    DRAIN_PREFIX + ``"<test> <check> failed[: <detail>]"`` for a check of the node,
    ``"cluster <test> <check> failed[: <detail>]"`` for a cluster-wide one (``cluster``), or
    ``"bad-node search: <evidence>"`` where ``evidence`` (the search's lines, joined by "; ") is
    given. Whitespace runs become one space, and the text is cut to ``size`` characters ("..." at
    its end): keep ``size`` well above the prefix and the names, or the reason no longer parses.
    """
    if evidence is not None:
        lines = [evidence] if isinstance(evidence, str) else evidence
        body = "%s: %s" % (SEARCH_REASON, "; ".join(lines))
    else:
        for what, name in (("test", test), ("check", check)):
            if not isinstance(name, str) or not name or name != "".join(name.split()):
                raise ValidateJudgeError("drain reason: %s must be a name without spaces, got %r" % (what, name))
        body = "%s%s %s failed" % ("cluster " if cluster else "", test, check)
        if detail is not None:
            body += ": %s" % detail
    return short(DRAIN_PREFIX + body, size)


def parse_drain_reason(reason):
    """The (test, check) pairs a Slurm reason written by ``format_drain_reason`` names: what must
    pass again before the node is resumed.

    ``None`` where the reason is not this collection's (it does not start with DRAIN_PREFIX: an
    operator's drain); ``()`` where it is, but names no check this version knows; SEARCH_CHECKS
    for a drain by the bad-node search; else ``((test, check),)``.
    """
    if not isinstance(reason, str) or not reason.startswith(DRAIN_PREFIX):
        return None
    body = reason[len(DRAIN_PREFIX):]
    # the search's reason first: its evidence starts with a host name, which may itself start with
    # "failed" ("bad-node search: failover1 ..." would read as test "bad-node", check "search:")
    if body.startswith(SEARCH_REASON):
        return SEARCH_CHECKS
    match = _REASON_CHECK.match(body)
    if match:
        return ((match.group(1), match.group(2)),)
    return ()


def who(node):
    if isinstance(node, (list, tuple)):
        return "cluster (%s)" % ", ".join(node)
    return "node %s" % node


def check(node, test, name, status, message, measured=None, limit=None, unit=None,
          threshold=None, line=None, note=None, reference=None, ceiling=None):
    """One check of a verdict. ``limit`` is the pass line; ``reference`` the published figure it
    came from ({id, busbw_gbs, source, ...}); ``ceiling`` the physical maximum."""
    eff = None
    if measured is not None and limit:
        eff = round(measured / limit, 4)
    return {"node": node, "test": test, "check": name, "status": status, "measured": measured,
            "limit": limit, "unit": unit, "efficiency": eff, "threshold": threshold,
            "line": line, "message": message, "note": note, "reference": reference,
            "ceiling": ceiling}
