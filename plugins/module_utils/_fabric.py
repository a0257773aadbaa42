# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Cross-host fabric checks: do the RDMA ports every node selected for NCCL/RCCL agree?

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``check_fabric(nodes, checks=None, expect=None)`` takes one entry per host, in play order::

    [{host: "gpu1", rdma: <gpucluster_rdma fact>, env: <nccl_env result (NCCL_* keys)>}, ...]

(a dict ``{host: {rdma, env}}`` is accepted too, in its own order).  For each node it resolves
the ports named by ``NCCL_IB_HCA`` in that node's own ``gpucluster_rdma`` fact and reports:

* ``port_state``: every selected port is ``ACTIVE`` and ``LinkUp`` (checked per node);
* ``link_layer``: every node uses one link layer (InfiniBand or Ethernet/RoCE);
* ``rate``: every selected port of every node runs at one rate (Gb/s);
* ``ports``: every node selected as many ports (rails): one with fewer (a port down, an address
  missing) slows every job it is in, NCCL using fewer rails there;
* ``plane``: every InfiniBand node selected ports on the same planes (the SM LIDs of its ports,
  one subnet manager per plane): a node on another plane cannot reach the others at all;
* ``gid_index``: every RoCE node uses one ``NCCL_IB_GID_INDEX``.  NCCL picks its own GID per
  process, but launchers that export one environment to every rank (``mpirun -x``,
  ``sbatch --export``, a value copied from the submit host) give every node the SAME index, which
  is wrong on a node whose table differs (NVIDIA/nccl#890, #1427).

A node with ``NCCL_IB_DISABLE=1`` (no usable RDMA port) disagrees with a fabric that uses RDMA.
The value the fabric "should" have is ``expect[<check>]`` when given, else the value most nodes
have; on a tie, the value of the first node in play order.  Within one node, mixed link layers or
rates are a difference of that node alone.

Returns::

    {ok, checks, reference: {link_layer, rate_gbps, ports, planes, gid_index, rdma},
     nodes: {host: {ok, hca: ["mlx5_0:1", ...], link_layer, rate_gbps, ports, planes, gid_index, rdma,
                    differences: [text]}},
     disagreeing: [host], messages: ["<host>: <difference>", ...]}

Raises ``FabricError`` (a ``ValueError``) on input it cannot understand.
"""

from __future__ import annotations

import re

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind
from ansible_collections.gpucluster.training.plugins.module_utils._natural import natural_key

CHECKS = ("port_state", "link_layer", "rate", "ports", "plane", "gid_index")
_EXPECT_KEYS = ("link_layer", "rate_gbps", "gid_index")
_HCA_ITEM = re.compile(r"^([A-Za-z0-9_.\-]+)(?::(\d+))?$")


class FabricError(ValueError):
    """Input to the fabric check that cannot be understood."""


def _text(value):
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value).strip()


def parse_hca(value):
    """``NCCL_IB_HCA`` -> (mode, [(device, port or None)]).

    mode is ``include`` (prefix match, NCCL's default), ``exact`` (leading ``=``) or ``exclude``
    (leading ``^``).  An empty or missing value selects every port (mode ``all``).
    """
    text = _text(value) or ""
    mode = "include"
    if text.startswith("^"):
        mode, text = "exclude", text[1:]
    elif text.startswith("="):
        mode, text = "exact", text[1:]
    items = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        match = _HCA_ITEM.match(part)
        if not match:
            raise FabricError("NCCL_IB_HCA item %r is not '<device>[:<port>]'" % part[:60])
        items.append((match.group(1), int(match.group(2)) if match.group(2) else None))
    if not items:
        return "all", []
    return mode, items


def _ports(rdma, where):
    if not isinstance(rdma, dict):
        raise FabricError("%s: gpucluster_rdma must be a dict, got %s" % (where, kind(rdma)))
    devices = rdma.get("devices") or []
    if not isinstance(devices, (list, tuple)):
        raise FabricError("%s: gpucluster_rdma.devices must be a list" % where)
    found = []
    for device in devices:
        if not isinstance(device, dict) or not isinstance(device.get("name"), str):
            raise FabricError("%s: every RDMA device needs a name" % where)
        for port in device.get("ports") or []:
            if not isinstance(port, dict) or "port" not in port:
                raise FabricError("%s: device %s has a port entry without a port number" % (where, device["name"]))
            try:
                number = int(port["port"])
            except (TypeError, ValueError):
                raise FabricError("%s: device %s port %r is not a number" % (where, device["name"], port["port"]))
            found.append((device["name"], number, port))
    return found


def _matches(name, wanted, mode):
    # NCCL matches NCCL_IB_HCA names as prefixes unless the list starts with '='.
    return name == wanted if mode == "exact" else name.startswith(wanted)


def _selected(found, mode, items):
    """Ports selected by NCCL_IB_HCA: in the list's order (include, exact), else in name order."""
    ordered = sorted(found, key=lambda item: (natural_key(item[0]), item[1]))
    if mode == "all":
        return ordered
    if mode == "exclude":
        return [(name, number, port) for name, number, port in ordered
                if not any(_matches(name, dev, mode) and (want is None or want == number) for dev, want in items)]
    chosen = []
    for dev, want in items:
        for name, number, port in ordered:
            if _matches(name, dev, mode) and (want is None or want == number) and (name, number) not in [(c[0], c[1]) for c in chosen]:
                chosen.append((name, number, port))
    return chosen


def _rate(value):
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise FabricError("rate %r is not a number" % (value,))
    return int(number) if number == int(number) else number


def node_summary(host, rdma, env):
    """What one node selected: ports, link layer, rate, GID index and its own problems."""
    where = "host %s" % host
    if not isinstance(env, dict):
        raise FabricError("%s: the NCCL environment must be a dict, got %s" % (where, kind(env)))
    disabled = _text(env.get("NCCL_IB_DISABLE")) == "1"
    summary = {"ok": True, "hca": [], "link_layer": None, "rate_gbps": None, "ports": 0, "planes": None,
               "gid_index": None, "rdma": not disabled, "differences": []}
    if disabled:
        return summary
    mode, items = parse_hca(env.get("NCCL_IB_HCA"))
    found = _ports(rdma, where)
    chosen = _selected(found, mode, items)
    problems = []
    if mode in ("include", "exact"):
        for dev, want in items:
            if not any(_matches(name, dev, mode) and (want is None or want == number) for name, number, _p in found):
                problems.append("NCCL_IB_HCA names %s%s, which this node does not have" % (dev, "" if want is None else ":%d" % want))
    if not chosen:
        problems.append("NCCL_IB_HCA=%s selects no RDMA port on this node" % (_text(env.get("NCCL_IB_HCA")) or ""))
    layers = []
    rates = []
    states = []
    for name, number, port in chosen:
        label = "%s:%d" % (name, number)
        summary["hca"].append(label)
        layer = _text(port.get("link_layer"))
        if layer is not None and layer not in layers:
            layers.append(layer)
        rate = _rate(port.get("rate_gbps"))
        if rate is not None and rate not in rates:
            rates.append(rate)
        state = str(port.get("state") or "unknown").upper()
        phys = str(port.get("phys_state") or "unknown")
        if state != "ACTIVE" or phys.lower() != "linkup":
            states.append("%s is %s/%s, not ACTIVE/LinkUp" % (label, state, phys))
    summary["ports"] = len(chosen)
    # The InfiniBand planes of the selected ports: their subnet managers' LIDs (None where unknown).
    lids = [port.get("sm_lid") for _n, _p, port in chosen if _text(port.get("link_layer")) == "InfiniBand"]
    if lids and all(isinstance(lid, int) and not isinstance(lid, bool) for lid in lids):
        summary["planes"] = tuple(sorted(set(lids)))
    summary["link_layer"] = layers[0] if len(layers) == 1 else (None if not layers else "mixed")
    summary["rate_gbps"] = rates[0] if len(rates) == 1 else (None if not rates else "mixed")
    gid = _text(env.get("NCCL_IB_GID_INDEX"))
    summary["gid_index"] = gid if gid not in (None, "") else None
    summary["_problems"] = problems
    summary["_states"] = states
    summary["_layers"] = layers
    summary["_rates"] = rates
    return summary


def _normalize_nodes(nodes):
    if isinstance(nodes, dict):
        entries = []
        for host, value in nodes.items():
            if not isinstance(value, dict):
                raise FabricError("host %s: expected {rdma, env}, got %s" % (host, kind(value)))
            entries.append({"host": host, "rdma": value.get("rdma"), "env": value.get("env")})
        return entries
    if not isinstance(nodes, (list, tuple)):
        raise FabricError("nodes must be a list of {host, rdma, env} or a dict {host: {rdma, env}}, got %s" % kind(nodes))
    entries = []
    for entry in nodes:
        if not isinstance(entry, dict) or not isinstance(entry.get("host"), str) or not entry["host"]:
            raise FabricError("every node entry needs a host name: %r" % (entry,))
        entries.append(entry)
    return entries


def _reference(values, order):
    """Most common value; on a tie the one of the first node in ``order``."""
    counts = {}
    for host in order:
        value = values[host]
        counts[value] = counts.get(value, 0) + 1
    if not counts:
        return None
    best = max(counts.values())
    for host in order:
        if counts[values[host]] == best:
            return values[host]
    return None  # pragma: no cover


def _fmt_rate(value):
    return "%s Gb/s" % value


def check_fabric(nodes, checks=None, expect=None):
    """Compare the fabric every node selected; see the module docstring."""
    entries = _normalize_nodes(nodes)
    if checks is None:
        checks = list(CHECKS)
    if not isinstance(checks, (list, tuple)):
        raise FabricError("checks must be a list out of %s" % ", ".join(CHECKS))
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise FabricError("unknown fabric check(s) %s; known: %s" % (", ".join(map(str, unknown)), ", ".join(CHECKS)))
    expect = expect or {}
    if not isinstance(expect, dict):
        raise FabricError("expect must be a dict with keys out of %s" % ", ".join(_EXPECT_KEYS))
    bad = [k for k in expect if k not in _EXPECT_KEYS]
    if bad:
        raise FabricError("unknown expect key(s) %s; known: %s" % (", ".join(map(str, bad)), ", ".join(_EXPECT_KEYS)))
    expect = dict((k, v) for k, v in expect.items() if v not in (None, ""))
    if "rate_gbps" in expect:
        expect["rate_gbps"] = _rate(expect["rate_gbps"])
    if "gid_index" in expect:
        expect["gid_index"] = _text(expect["gid_index"])

    summaries = {}
    order = []
    for entry in entries:
        host = entry["host"]
        if host in summaries:
            raise FabricError("host %s is listed twice" % host)
        rdma = entry.get("rdma")
        summaries[host] = node_summary(host, {} if rdma is None else rdma, entry.get("env"))
        order.append(host)

    differences = dict((host, []) for host in order)
    rdma_hosts = [h for h in order if summaries[h]["rdma"]]
    # 1. per node: ports it names, their state, one link layer and one rate within the node
    for host in rdma_hosts:
        s = summaries[host]
        differences[host].extend(s["_problems"])
        if "port_state" in checks:
            differences[host].extend(s["_states"])
        if "link_layer" in checks and len(s["_layers"]) > 1:
            differences[host].append("selected ports mix link layers %s" % " and ".join(s["_layers"]))
        if "rate" in checks and len(s["_rates"]) > 1:
            differences[host].append("selected ports mix rates %s" % ", ".join(_fmt_rate(r) for r in s["_rates"]))

    # 2. across nodes: RDMA on or off, link layer, rate, RoCE GID index
    reference = {"rdma": bool(rdma_hosts) or not order, "link_layer": None, "rate_gbps": None, "ports": None,
                 "planes": None, "gid_index": None}
    if rdma_hosts:
        for host in order:
            if not summaries[host]["rdma"]:
                differences[host].append("has no usable RDMA port (NCCL_IB_DISABLE=1) while %s use RDMA" % ", ".join(rdma_hosts))

    def compare(check, key, hosts, label, fmt):
        if check not in checks or not hosts:
            return
        values = dict((h, summaries[h][key]) for h in hosts)
        expected = key in expect
        ref = expect[key] if expected else _reference(values, hosts)
        reference[key] = ref
        holders = [h for h in hosts if values[h] == ref]
        for host in hosts:
            value = values[host]
            if value == "mixed" or value == ref:
                continue
            shown = "unset" if value is None else fmt(value)
            wanted = "unset" if ref is None else fmt(ref)
            if expected:
                other = "the expected %s" % wanted
            elif holders:
                other = "%s on %s" % (wanted, ", ".join(holders))
            else:
                other = wanted  # pragma: no cover
            detail = "%s %s (%s) differs from %s" % (label, shown, ", ".join(summaries[host]["hca"]) or "no port", other)
            if key == "gid_index":
                detail += ("; a launcher that exports one NCCL_IB_GID_INDEX to every rank (mpirun -x, sbatch --export)"
                           " would give this node a wrong GID")
            differences[host].append(detail)

    compare("link_layer", "link_layer", rdma_hosts, "link layer", str)
    compare("rate", "rate_gbps", rdma_hosts, "rate", _fmt_rate)
    compare("ports", "ports", rdma_hosts, "selected port count", str)
    infiniband = [h for h in rdma_hosts if summaries[h]["planes"] is not None]
    compare("plane", "planes", infiniband, "InfiniBand plane(s), SM LID", lambda lids: ", ".join(str(lid) for lid in lids))
    roce = [h for h in rdma_hosts if summaries[h]["link_layer"] == "Ethernet"]
    compare("gid_index", "gid_index", roce, "NCCL_IB_GID_INDEX", str)

    reference["planes"] = list(reference["planes"]) if reference["planes"] is not None else None
    result_nodes = {}
    messages = []
    disagreeing = []
    for host in order:
        s = summaries[host]
        node = dict((k, v) for k, v in s.items() if not k.startswith("_"))
        node["planes"] = list(node["planes"]) if node["planes"] is not None else None
        node["differences"] = differences[host]
        node["ok"] = not differences[host]
        result_nodes[host] = node
        if differences[host]:
            disagreeing.append(host)
            messages.extend("%s: %s" % (host, text) for text in differences[host])
    return {
        "ok": not disagreeing,
        "checks": list(checks),
        "reference": reference,
        "nodes": result_nodes,
        "disagreeing": disagreeing,
        "messages": messages,
    }
