# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Derive the NCCL / RCCL network environment of a node from its hardware facts.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``derive_nccl_env(rdma, gpus=None, network=None, policy=None)`` returns::

    {env: {NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME, NCCL_IB_DISABLE,
           NCCL_NET_GDR_LEVEL}, reasons: {<same keys>: text}, hcas: [{device, port, ...}],
     warnings: [text]}

``env`` only holds the variables that were decided; ``reasons`` explains every variable,
including the ones left unset.  RCCL reads the same ``NCCL_*`` variables.

Inputs: ``rdma`` is the ``gpucluster_rdma`` fact (``rdma_info``), ``gpus`` the
``gpucluster_gpus`` fact (``gpu_info``), ``network`` the host's Ansible facts (uses
``default_ipv4.interface``), ``policy`` a dict of:

* ``allow`` / ``deny``: lists of device names or ``device:port`` (shell wildcards allowed);
* ``link_layer``: ``InfiniBand`` or ``Ethernet`` to force the fabric;
* ``gid_index``: the GID index to use when ports disagree (RoCE);
* ``socket_ifname``: the bootstrap interface (``NCCL_SOCKET_IFNAME``): a bare name or ``,`` list is
  written with a leading ``=`` (exact match, as for ``NCCL_IB_HCA``); a value already in NCCL's
  syntax, starting with ``^`` (exclude) or ``=`` (``^=``: exclude exactly), is written as given;
* ``socket_fallback``: true to return ``NCCL_IB_DISABLE=1`` instead of failing when no RDMA
  port is usable;
* ``peer_memory``: true/false to override detection; ``gdr_level``: ``NCCL_NET_GDR_LEVEL`` when
  GPUDirect RDMA is available (unset by default: NCCL picks the level from the PCI topology).
* ``single_plane``: true to keep only the InfiniBand ports of the SM LID shared by the most ports
  (by default every active top-rate port is kept, see below);
* ``subnet``: the training subnet (CIDR, e.g. ``10.16.0.0/16``): on RoCE, the GID whose IPv4
  address is in it is used, and a port without one is an error.

RoCE GIDs are taken from the port's netdev and from the netdevs stacked on it (a VLAN such as
``ens1f0np0.100``, ``bond0`` for RoCE LAG, a macvlan), as the probe lists them in the device's
``upper_netdevs``; facts without that list accept ``<netdev>.<vlan id>`` by name.  When several
netdevs carry a RoCE v2 IPv4 GID, the one in ``policy.subnet`` wins; without a subnet the lowest
index is used and the reason names the others.

Selection of ``NCCL_IB_HCA``: active ports (state ACTIVE, physical state LinkUp when known)
allowed by the policy -> the dominant link layer (most ports; ties go to the higher total
rate, then InfiniBand) -> the highest rate -> on RoCE every port with a RoCE v2 IPv4 GID, whatever
its VLAN or subnet (one VLAN or subnet per rail is the rail-optimised design; with
``policy.subnet`` a port without a GID in it is left out, with a warning); on InfiniBand every port is kept even when the ports
sit on several planes (distinct SM LIDs: multi-plane fabrics give each rail its own subnet
manager), with a warning naming the planes, unless ``policy.single_plane`` keeps only the SM LID
shared by the most ports ->
ordered by GPU NUMA affinity (ports on the NUMA node of GPU 0 first, ...) when GPU facts know
NUMA nodes, else in natural name order.  The value is written ``=dev:port,...``: the leading
``=`` makes NCCL match names exactly (``mlx5_1`` would otherwise also select ``mlx5_10``).

``gloo_socket_ifname(nccl_socket_ifname, fallback="")`` is the one interface gloo (torch's CPU
collectives and bootstrap) takes, from NCCL's list syntax: ``=`` (exact match) dropped, the first
name of a ``,`` list, and the fallback for an ``^`` exclusion list or an empty value.

Errors (``NcclEnvError``): no usable port ("no active RDMA port", listing what was found);
RoCE ports whose RoCE v2 IPv4 GID index differs and no ``policy.gid_index``; a RoCE port whose
known GID table has no RoCE v2 IPv4-mapped entry on its netdev.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re

from ansible_collections.gpucluster.training.plugins.module_utils._natural import natural_key


class NcclEnvError(ValueError):
    """Facts or policy from which no consistent NCCL environment can be derived."""


_KNOWN_POLICY = ("allow", "deny", "link_layer", "gid_index", "socket_ifname", "socket_fallback", "peer_memory", "gdr_level",
                 "subnet", "single_plane")


def _describe(dev, port):
    return "%s:%s %s/%s %s %s Gb/s" % (dev.get("name"), port.get("port"), port.get("state"), port.get("phys_state"),
                                       port.get("link_layer"), port.get("rate_gbps"))


def _matches(patterns, dev, port):
    for pattern in patterns:
        if fnmatch.fnmatchcase(dev["name"], str(pattern)) or fnmatch.fnmatchcase("%s:%s" % (dev["name"], port["port"]), str(pattern)):
            return True
    return False


def _check_inputs(rdma, gpus, network, policy):
    if not isinstance(rdma, dict) or not isinstance(rdma.get("devices"), list):
        raise NcclEnvError("nccl_env: the input must be the gpucluster_rdma fact (a dict with a 'devices' list)")
    for dev in rdma["devices"]:
        if not isinstance(dev, dict) or not isinstance(dev.get("name"), str) or not isinstance(dev.get("ports"), list):
            raise NcclEnvError("nccl_env: every RDMA device needs a 'name' and a 'ports' list")
        if not _opt(dev.get("netdev"), str) or not _opt(dev.get("numa_node"), int):
            raise NcclEnvError("nccl_env: device %s: 'netdev' must be text and 'numa_node' an integer (or null)" % dev["name"])
        uppers = dev.get("upper_netdevs")
        if uppers is not None and (not isinstance(uppers, list) or not all(
                isinstance(up, dict) and isinstance(up.get("name"), str) and _opt(up.get("vlan_id"), int) for up in uppers)):
            raise NcclEnvError("nccl_env: device %s: 'upper_netdevs' must be a list of {name, kind, vlan_id, lowers}" % dev["name"])
        for port in dev["ports"]:
            if not isinstance(port, dict) or not isinstance(port.get("port"), int) or not isinstance(port.get("state"), str) \
                    or port.get("link_layer") not in ("InfiniBand", "Ethernet"):
                raise NcclEnvError("nccl_env: every port of %s needs an integer 'port', a 'state' and a 'link_layer' "
                                   "(InfiniBand or Ethernet)" % dev["name"])
            if not _opt(port.get("rate_gbps"), (int, float)) or not _opt(port.get("sm_lid"), int) or not _opt(port.get("phys_state"), str):
                raise NcclEnvError("nccl_env: port %s:%s: rate_gbps must be a number, sm_lid an integer" % (dev["name"], port["port"]))
            gids = port.get("gids")
            if gids is not None and (not isinstance(gids, list) or not all(_valid_gid(gid) for gid in gids)):
                raise NcclEnvError("nccl_env: port %s:%s: gids must be a list of {index, gid, type, netdev, ipv4}" % (dev["name"], port["port"]))
    for name, value in (("gpus", gpus), ("network", network), ("policy", policy)):
        if value is not None and not isinstance(value, dict):
            raise NcclEnvError("nccl_env: %s must be a dict" % name)
    for key in (policy or {}):
        if key not in _KNOWN_POLICY:
            raise NcclEnvError("nccl_env: unknown policy key %r (known: %s)" % (key, ", ".join(_KNOWN_POLICY)))
    policy = policy or {}
    for key in ("allow", "deny"):
        if not _opt(policy.get(key), list):
            raise NcclEnvError("nccl_env: policy %s must be a list of device or device:port patterns" % key)
    if not _opt(policy.get("single_plane"), bool):
        raise NcclEnvError("nccl_env: policy single_plane must be true or false")
    for key in ("link_layer", "socket_ifname", "gdr_level", "subnet"):
        if not _opt(policy.get(key), str):
            raise NcclEnvError("nccl_env: policy %s must be text" % key)
    if policy.get("subnet") is not None:
        try:
            ipaddress.ip_network(policy["subnet"], strict=False)
        except ValueError:
            raise NcclEnvError("nccl_env: policy subnet %r is not a network in CIDR notation (10.16.0.0/16)" % policy["subnet"])
    if gpus is not None and not _opt(gpus.get("devices"), list):
        raise NcclEnvError("nccl_env: gpus must be the gpucluster_gpus fact (with a 'devices' list)")
    default = (network or {}).get("default_ipv4")
    if default is not None and (not isinstance(default, dict) or not _opt(default.get("interface"), str)):
        raise NcclEnvError("nccl_env: network default_ipv4 must be a dict with an 'interface'")
    if not _opt(rdma.get("peer_memory"), list):
        raise NcclEnvError("nccl_env: rdma peer_memory must be a list of module names (or null)")
    if not _opt(rdma.get("dma_buf"), list) or not all(isinstance(item, str) for item in rdma.get("dma_buf") or []):
        raise NcclEnvError("nccl_env: rdma dma_buf must be a list of driver names (or null)")


def _opt(value, kind):
    """True when value is None or of the kind (booleans are not numbers)."""
    if value is None:
        return True
    if isinstance(value, bool) and kind is not bool:
        return False
    return isinstance(value, kind)


def _valid_gid(gid):
    return (isinstance(gid, dict) and isinstance(gid.get("index"), int) and not isinstance(gid.get("index"), bool)
            and isinstance(gid.get("gid"), str) and _opt(gid.get("type"), str) and _opt(gid.get("netdev"), str)
            and _opt(gid.get("ipv4"), str))


def _port_netdevs(dev):
    """The port's netdev and the netdevs stacked on it (VLAN, bond, macvlan)."""
    netdev = dev.get("netdev")
    names = [netdev] if netdev else []
    names.extend(up["name"] for up in dev.get("upper_netdevs") or [] if up["name"] not in names)
    return names


def _on_port(dev, name):
    netdev = dev.get("netdev")
    if netdev is None or name is None or name in _port_netdevs(dev):
        return True
    # facts without upper_netdevs (older probe): a VLAN named <netdev>.<id>
    return dev.get("upper_netdevs") is None and re.match(r"^%s\.\d+$" % re.escape(netdev), name) is not None


def _in_subnet(address, subnet):
    try:
        return ipaddress.ip_address(address) in ipaddress.ip_network(subnet, strict=False)
    except ValueError:
        return False


def _roce_gids(dev, port, subnet=None):
    """RoCE v2 GIDs with an IPv4-mapped address on the port's netdev or a netdev stacked on it (in the
    subnet when one is given); None if the table is unknown."""
    gids = port.get("gids")
    if gids is None:
        return None
    found = []
    for gid in gids:
        if gid.get("type") == "RoCEv2" and gid.get("ipv4") and _on_port(dev, gid.get("netdev")):
            if subnet is None or _in_subnet(gid["ipv4"], subnet):
                found.append(gid)
    return found


def _vlan(dev, netdev):
    for up in dev.get("upper_netdevs") or []:
        if up["name"] == netdev and up.get("vlan_id") is not None:
            return up["vlan_id"]
    match = re.match(r"^.+\.(\d+)$", netdev or "")
    return int(match.group(1)) if match else None


def _numa_order(gpus):
    order = []
    for dev in (gpus or {}).get("devices") or []:
        if isinstance(dev, dict) and dev.get("counted", True) and isinstance(dev.get("numa_node"), int):
            if dev["numa_node"] not in order:
                order.append(dev["numa_node"])
    return order


def _select_link_layer(candidates, policy, reasons):
    forced = policy.get("link_layer")
    if forced:
        if forced not in ("InfiniBand", "Ethernet"):
            raise NcclEnvError("nccl_env: policy link_layer must be InfiniBand or Ethernet, not %r" % forced)
        chosen = [c for c in candidates if c[1]["link_layer"] == forced]
        if not chosen:
            raise NcclEnvError("nccl_env: policy link_layer %s but no active port has it (active: %s)"
                               % (forced, ", ".join(_describe(d, p) for d, p in candidates)))
        return forced, chosen, "link layer %s set by policy" % forced
    groups = {}
    for dev, port in candidates:
        groups.setdefault(port["link_layer"], []).append((dev, port))
    ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), -sum(pair[1].get("rate_gbps") or 0 for pair in item[1]),
                                                      0 if item[0] == "InfiniBand" else 1))
    layer, chosen = ranked[0]
    text = "dominant link layer %s (%d active port(s)" % (layer, len(chosen))
    if len(ranked) > 1:
        text += "; left out %s" % ", ".join("%d %s" % (len(ports), name) for name, ports in ranked[1:])
    return layer, chosen, text + ")"


def derive_nccl_env(rdma, gpus=None, network=None, policy=None):
    """Derive NCCL/RCCL settings; see the module docstring."""
    _check_inputs(rdma, gpus, network, policy)
    policy = policy or {}
    env = {}
    reasons = {}
    found = [(dev, port) for dev in rdma["devices"] for port in dev["ports"]]
    allow = policy.get("allow") or []
    deny = policy.get("deny") or []
    candidates = []
    for dev, port in found:
        if port.get("state") != "ACTIVE" or port.get("phys_state") not in (None, "LinkUp"):
            continue
        if allow and not _matches(allow, dev, port):
            continue
        if deny and _matches(deny, dev, port):
            continue
        candidates.append((dev, port))
    socket_ifname = _socket_ifname(rdma, network, policy, reasons)
    if socket_ifname:
        env["NCCL_SOCKET_IFNAME"] = _exact_ifname(socket_ifname)
    if not candidates:
        listing = ", ".join(_describe(d, p) for d, p in found) or "no RDMA device at all"
        if policy.get("socket_fallback"):
            env["NCCL_IB_DISABLE"] = "1"
            reasons["NCCL_IB_DISABLE"] = "no active RDMA port (found: %s); policy socket_fallback: NCCL uses TCP sockets" % listing
            reasons["NCCL_IB_HCA"] = "unset: no active RDMA port"
            reasons["NCCL_IB_GID_INDEX"] = "unset: no active RDMA port"
            reasons["NCCL_NET_GDR_LEVEL"] = "unset: no RDMA"
            return {"env": env, "reasons": reasons, "hcas": [], "warnings": []}
        raise NcclEnvError("nccl_env: no active RDMA port (found: %s)%s" % (
            listing, "; allow/deny policy applied" if (allow or deny) else ""))
    layer, chosen, layer_text = _select_link_layer(candidates, policy, reasons)
    top_rate = max(pair[1].get("rate_gbps") or 0 for pair in chosen)
    slower = [c for c in chosen if (c[1].get("rate_gbps") or 0) != top_rate]
    chosen = [c for c in chosen if (c[1].get("rate_gbps") or 0) == top_rate]
    text = "%s; highest rate %s Gb/s" % (layer_text, top_rate)
    if slower:
        text += " (left out slower: %s)" % ", ".join("%s:%s" % (d["name"], p["port"]) for d, p in slower)
    warnings = []
    chosen, subnet_text = _one_subnet(layer, chosen, policy.get("subnet"), policy.get("single_plane"), warnings)
    text += "; " + subnet_text
    numa_order = _numa_order(gpus)

    def order_key(item):
        dev, port = item
        numa = dev.get("numa_node")
        rank = numa_order.index(numa) if numa in numa_order else len(numa_order)
        return (rank, natural_key(dev["name"]), port["port"])

    chosen.sort(key=order_key)
    if numa_order:
        text += "; ordered by GPU NUMA affinity (GPU NUMA nodes in order: %s)" % ", ".join(str(n) for n in numa_order)
    else:
        text += "; in name order (no GPU NUMA facts)"
    if allow or deny:
        text += "; allow/deny policy applied"
    env["NCCL_IB_HCA"] = "=" + ",".join("%s:%s" % (d["name"], p["port"]) for d, p in chosen)
    reasons["NCCL_IB_HCA"] = text + "; '=' makes NCCL match the names exactly"
    env["NCCL_IB_DISABLE"] = "0"
    reasons["NCCL_IB_DISABLE"] = "%d RDMA port(s) selected" % len(chosen)
    if layer == "Ethernet":
        _gid_index(chosen, policy, env, reasons)
    else:
        reasons["NCCL_IB_GID_INDEX"] = "unset: InfiniBand ports address by LID, no GID index needed"
    _gdr(rdma, gpus, policy, env, reasons)
    hcas = [{"device": d["name"], "port": p["port"], "link_layer": p["link_layer"], "rate_gbps": p.get("rate_gbps"),
             "numa_node": d.get("numa_node"), "netdev": d.get("netdev"), "roce_netdev": _roce_netdev(d, p, policy.get("subnet"))}
            for d, p in chosen]
    return {"env": env, "reasons": reasons, "hcas": hcas, "warnings": warnings}


def _plane_rank(item):
    """Most ports first; on a tie the lower SM LID (the documented rule of single_plane), compared as a
    number: as text, SM LID 12 would come before 3. An unknown SM LID comes last."""
    key, ports = item
    return (-len(ports), key[1] is None, key[1] or 0)


def _roce_rails(chosen, subnet, warnings):
    """RoCE: every port with a RoCE v2 IPv4 GID is a rail, whatever its VLAN or IPv4 subnet. Rail-
    optimised fabrics put each rail on its own VLAN or subnet; NCCL only needs rail i of one node to
    reach rail i of the others, so no port is left out for being on another VLAN than the rest (that
    dropped all rails but one, silently). With a training subnet, a port without a GID in it is not on
    the training network: left out, named in the reason and a warning. Otherwise a port without a RoCE
    v2 IPv4 GID stays, and the GID index step fails naming it (its address was forgotten: better a
    clear failure than a node with one rail fewer)."""
    keep, left = [], []
    for dev, port in chosen:
        gids = _roce_gids(dev, port, subnet)
        (left if gids == [] and subnet else keep).append((dev, port))
    if not keep:
        return list(chosen), "no port has a RoCE v2 IPv4 GID in the training subnet %s" % subnet
    vlans = sorted(set(_vlan(dev, (_roce_gids(dev, port, subnet) or [{}])[0].get("netdev") or dev.get("netdev"))
                       for dev, port in keep), key=lambda v: (v is None, v or 0))
    shown = ", ".join("none" if v is None else str(v) for v in vlans)
    where = "" if vlans == [None] else " on VLAN%s %s" % ("s" if len(vlans) > 1 else "", shown)
    text = "RoCE rails: %d port(s)%s" % (len(keep), where)
    if left:
        names = ", ".join("%s:%s" % (d["name"], p["port"]) for d, p in left)
        text += " (left out, no RoCE v2 IPv4 GID in the training subnet %s: %s)" % (subnet, names)
        if warnings is not None:
            warnings.append("RoCE port(s) %s have no RoCE v2 IPv4 GID in the training subnet %s: left out of NCCL_IB_HCA "
                            "(give them an address in it, or rdma_hca_deny them to silence this)" % (names, subnet))
    return keep, text


def _one_subnet(layer, chosen, subnet=None, single_plane=False, warnings=None):
    if layer != "InfiniBand":
        return _roce_rails(chosen, subnet, warnings)
    groups = {}
    for dev, port in chosen:
        groups.setdefault(("sm_lid", port.get("sm_lid")), []).append((dev, port))
    ranked = sorted(groups.items(), key=_plane_rank)
    key, best = ranked[0]
    if layer == "InfiniBand" and len(ranked) > 1 and not single_plane:
        planes = "; ".join("SM LID %s: %s" % (k[1], ", ".join(sorted(("%s:%s" % (d["name"], p["port"]) for d, p in ports), key=natural_key)))
                           for k, ports in ranked)
        if warnings is not None:
            warnings.append("InfiniBand ports on %d planes (%s): all are kept in NCCL_IB_HCA. Every node must see the same planes on "
                            "the same rails, or set policy single_plane / allow to restrict them" % (len(ranked), planes))
        return list(chosen), "%d planes kept (%s)" % (len(ranked), planes)
    text = "one subnet: SM LID %s%s" % (key[1], " (policy single_plane)" if len(ranked) > 1 else "")
    if len(ranked) > 1:
        text += " (left out other subnets: %s)" % ", ".join("%s:%s" % (d["name"], p["port"]) for _key, ports in ranked[1:] for d, p in ports)
    return list(best), text


def _roce_netdev(dev, port, subnet):
    """The netdev of the RoCE v2 IPv4 GID in use (a VLAN or bond stacked on the port's netdev), else None."""
    if port.get("link_layer") != "Ethernet":
        return None
    gids = _roce_gids(dev, port, subnet)
    return gids[0].get("netdev") if gids else None


def _gid_index(chosen, policy, env, reasons):
    indexes = {}
    unknown = []
    subnet = policy.get("subnet")
    several = []
    for dev, port in chosen:
        gids = _roce_gids(dev, port, subnet)
        if gids is None:
            unknown.append("%s:%s" % (dev["name"], port["port"]))
            continue
        if not gids:
            listing = ", ".join("%s %s %s %s" % (g.get("index"), g.get("type"), g.get("ipv4") or g.get("gid"), g.get("netdev") or "-")
                                for g in port.get("gids") or []) or "no entry"
            raise NcclEnvError("nccl_env: RoCE port %s:%s has no RoCE v2 GID with an IPv4-mapped address%s on netdev %s or a netdev "
                               "stacked on it (%s) (its GID table: %s); configure an IPv4 address on that interface or its VLAN/bond" % (
                                   dev["name"], port["port"], " in subnet %s" % subnet if subnet else "", dev.get("netdev"),
                                   ", ".join(_port_netdevs(dev)[1:]) or "none known", listing))
        netdevs = sorted(set(g.get("netdev") or "-" for g in gids))
        if len(netdevs) > 1:
            several.append("%s:%s on %s" % (dev["name"], port["port"], ", ".join(netdevs)))
        indexes["%s:%s" % (dev["name"], port["port"])] = gids[0]["index"]
    forced = policy.get("gid_index")
    if forced is not None:
        if not isinstance(forced, int) or isinstance(forced, bool) or forced < 0:
            raise NcclEnvError("nccl_env: policy gid_index must be a non-negative integer, not %r" % (forced,))
        env["NCCL_IB_GID_INDEX"] = str(forced)
        reasons["NCCL_IB_GID_INDEX"] = "GID index %d set by policy (table shows: %s)" % (
            forced, ", ".join("%s=%s" % item for item in sorted(indexes.items())) or "unknown")
        return
    if unknown:
        reasons["NCCL_IB_GID_INDEX"] = ("unset: the GID table of %s is not known (facts from ibstat?); NCCL then picks a RoCE v2 GID itself "
                                        "(NCCL >= 2.21) or set policy gid_index" % ", ".join(unknown))
        return
    values = sorted(set(indexes.values()))
    if len(values) > 1:
        raise NcclEnvError("nccl_env: the RoCE v2 IPv4 GID index differs between ports (%s) and NCCL_IB_GID_INDEX takes one value; "
                           "set policy gid_index" % ", ".join("%s=%s" % item for item in sorted(indexes.items())))
    env["NCCL_IB_GID_INDEX"] = str(values[0])
    reasons["NCCL_IB_GID_INDEX"] = "index %d is the RoCE v2 GID with an IPv4-mapped address%s on %s" % (
        values[0], " in the training subnet %s" % subnet if subnet else "", ", ".join(sorted(indexes, key=natural_key)))
    if several:
        reasons["NCCL_IB_GID_INDEX"] += ("; RoCE v2 IPv4 GIDs on several netdevs (%s): the lowest index was taken, set policy subnet "
                                         "to the training subnet" % "; ".join(several))


def _exact_ifname(value):
    """NCCL_SOCKET_IFNAME from a name or list: bare names are made exact (NCCL matches a bare name as a
    prefix: ``eth1`` would also select ``eth10``); a value already starting with NCCL's ``^`` (exclude)
    or ``=`` (exact) says what the site wants and is kept: prepending ``=`` would make ``^docker0`` the
    name of an interface to use."""
    return value if value.startswith(("^", "=")) else "=" + value


def _socket_ifname(rdma, network, policy, reasons):
    if policy.get("socket_ifname"):
        value = str(policy["socket_ifname"])
        if value.startswith(("^", "=")):
            reasons["NCCL_SOCKET_IFNAME"] = "%s set by policy, in NCCL's syntax (written as given)" % value
        else:
            reasons["NCCL_SOCKET_IFNAME"] = "interface %s set by policy; '=' makes NCCL match it exactly" % value
        return value
    rdma_netdevs = set(d.get("netdev") for d in rdma["devices"] if d.get("netdev"))
    for dev in rdma["devices"]:
        for port in dev["ports"]:
            for gid in port.get("gids") or []:
                if gid.get("netdev"):
                    rdma_netdevs.add(gid["netdev"])
    default = ((network or {}).get("default_ipv4") or {}).get("interface")
    if not default:
        reasons["NCCL_SOCKET_IFNAME"] = "unset: no network facts with a default-route interface were given"
        return None
    if default in rdma_netdevs:
        reasons["NCCL_SOCKET_IFNAME"] = ("unset: the default-route interface %s is an RDMA netdev; set policy socket_ifname "
                                         "to the management interface" % default)
        return None
    reasons["NCCL_SOCKET_IFNAME"] = "default-route interface %s (not an RDMA netdev); '=' makes NCCL match it exactly" % default
    return default


def _gdr(rdma, gpus, policy, env, reasons):
    forced = policy.get("peer_memory")
    modules = rdma.get("peer_memory")
    if forced is not None:
        available = bool(forced)
        why = "policy peer_memory %s" % ("true" if available else "false")
    elif modules or rdma.get("dma_buf"):
        available = True
        why = "; ".join(part for part in (
            "peer-memory module(s) loaded: %s" % ", ".join(modules) if modules else "",
            "DMA-BUF: %s" % ", ".join(rdma["dma_buf"]) if rdma.get("dma_buf") else "") if part)
    else:
        available = False
        why = "no peer-memory module and no DMA-BUF GPU driver found" if modules is not None else "peer-memory support unknown (facts from ibstat)"
    if available and gpus is not None and not (isinstance(gpus.get("count"), int) and gpus["count"] > 0):
        available = False
        why += ", but the GPU facts show no GPU"
    if available and policy.get("gdr_level"):
        env["NCCL_NET_GDR_LEVEL"] = str(policy["gdr_level"])
        reasons["NCCL_NET_GDR_LEVEL"] = "GPUDirect RDMA available (%s): policy gdr_level %s" % (why, env["NCCL_NET_GDR_LEVEL"])
    elif available:
        reasons["NCCL_NET_GDR_LEVEL"] = ("unset: GPUDirect RDMA available (%s); NCCL picks the GDR level from the PCI topology "
                                         "(set policy gdr_level to force one)" % why)
    else:
        reasons["NCCL_NET_GDR_LEVEL"] = "unset: %s" % why


def gloo_socket_ifname(nccl_socket_ifname, fallback=""):
    """The interface for GLOO_SOCKET_IFNAME from an NCCL_SOCKET_IFNAME value; see the module docstring."""
    value = nccl_socket_ifname if isinstance(nccl_socket_ifname, str) else ""
    value = value.strip()
    if value.startswith("="):
        value = value[1:]
    first = value.split(",")[0].strip()
    if not first or first.startswith("^"):
        return fallback if isinstance(fallback, str) else ""
    return first
