# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA devices, ports and GID tables from a sysfs tree (``/sys/class/infiniband``).

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``parse_sysfs_rdma(files)`` takes the tree as ``{relative path: text}``, paths relative to the
sysfs root, in three kinds of entry (the ``ls -F`` convention):

* a regular file: ``class/infiniband/mlx5_0/ports/1/state`` -> ``"4: ACTIVE\\n"``;
* a directory listing: a path ending in ``/`` -> the entry names, one per line
  (``class/infiniband/mlx5_0/device/net/`` -> ``"ens3np0\\n"``);
* a symbolic link: a path ending in ``@`` -> the link target
  (``class/infiniband/mlx5_0/device@`` -> ``"../../../0000:0c:00.0"``).

It returns the ``gpucluster_rdma`` fact::

    {source: sysfs, devices: [{name, netdev, numa_node, pci_bus_id, fw_ver, ports: [{port,
     state, phys_state, rate_gbps, link_layer, lid, sm_lid, gids: [{index, gid, type,
     netdev, ipv4}]}], upper_netdevs: [{name, kind, vlan_id, lowers}]}],
     peer_memory: [module names], peer_memory_markers: [sysfs paths], dma_buf: [driver names]}

Read per port: ``state``, ``phys_state``, ``rate``, ``link_layer`` (required; ``rate`` only on
an ACTIVE port: without a link the kernel cannot read it, and ``rate_gbps`` is then None), ``lid``,
``sm_lid``, and the GID table ``gids/<i>`` with ``gid_attrs/types/<i>`` and
``gid_attrs/ndevs/<i>``.  Unused GID entries (all-zero, or ``fe80::`` with a zero interface id)
are skipped; an entry whose type cannot be read (absent from the tree: the kernel answers
EINVAL for it) or whose text is not a GID is skipped, not fatal.  GID ``type`` is ``IB``,
``RoCEv1`` or ``RoCEv2``; ``ipv4`` is the address of an IPv4-mapped GID (``::ffff:a.b.c.d``).
``peer_memory`` lists the GPUDirect peer-memory modules present under ``module/``
(``nvidia_peermem``, ``nv_peer_mem``, ``ib_peer_mem``, ``amdp2p``); ``peer_memory_markers`` the
peer-memory clients' ``version`` files present (``PEER_MEMORY_MARKERS``, a key per path in the tree,
e.g. ``kernel/mm/memory_peers/nv_mem/version``); ``dma_buf`` lists GPU drivers
that give GPUDirect RDMA through DMA-BUF instead (``nvidia-open``: ``proc/driver/nvidia/version``
names the open kernel module).

Stacked netdevs (RoCE on a VLAN, a bond for RoCE LAG, a macvlan): a GID's netdev may be an upper
device of the port's PCI netdev.  The tree may hold, for any netdev X, ``class/net/X/`` (a listing
whose ``lower_<Y>`` entries are the kernel's links to the devices X is stacked on),
``class/net/X/uevent`` (``DEVTYPE=vlan|bond|macvlan``), ``class/net/X/bonding/slaves`` and the
file ``proc/net/vlan/config`` (VLAN ids).  Each device then gets ``upper_netdevs``: the GID
netdevs stacked (directly or through several layers) on one of its own netdevs, as
``[{name, kind, vlan_id, lowers}]``; ``kind`` is ``vlan``, ``bond``, ``macvlan`` or ``other``.

``parse_vlan_config(text)`` parses ``/proc/net/vlan/config`` into ``{vlan netdev: {vlan_id, lower}}``.

``parse_show_gids(text)`` parses the listing of Mellanox's ``show_gids`` script into rows
``{device, port, index, gid, ipv4, version, netdev}``.

Both raise ``SysfsRdmaError`` on input they cannot understand.
"""

from __future__ import annotations

import re

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind, sysfs_int
from ansible_collections.gpucluster.training.plugins.module_utils._natural import natural_key


class SysfsRdmaError(ValueError):
    """A sysfs RDMA tree or show_gids listing that cannot be understood."""


PEER_MEMORY_MODULES = ("nvidia_peermem", "nv_peer_mem", "ib_peer_mem", "amdp2p")
# GPUDirect RDMA markers as NCCL and RCCL test them (NVIDIA/nccl src/transport/net_ib*, ROCm/rccl
# src/transport/net_ib.cc): a peer-memory client registered with the RDMA core (MLNX_OFED / DOCA
# kernels) has a ``version`` file under one of these paths, relative to the sysfs root.
PEER_MEMORY_MARKERS = (
    "kernel/mm/memory_peers/nv_mem/version",
    "kernel/mm/memory_peers/nv_mem_nc/version",
    "kernel/mm/memory_peers/amdkfd/version",
    "kernel/memory_peers/amdkfd/version",
    "memory_peers/amdkfd/version",
)

_STATES = {"1": "DOWN", "2": "INIT", "3": "ARMED", "4": "ACTIVE", "5": "ACTIVE_DEFER"}
_STATE_WORDS = {"DOWN": "DOWN", "INIT": "INIT", "INITIALIZING": "INIT", "ARMED": "ARMED", "ACTIVE": "ACTIVE", "ACTIVE_DEFER": "ACTIVE_DEFER"}
_PHYS = {"1": "Sleep", "2": "Polling", "3": "Disabled", "4": "PortConfigurationTraining", "5": "LinkUp",
         "6": "LinkErrorRecovery", "7": "Phy Test"}
_PHYS_WORDS = dict((value.lower().replace(" ", ""), value) for value in _PHYS.values())
_LINK_LAYERS = {"infiniband": "InfiniBand", "ethernet": "Ethernet"}
_GID = re.compile(r"^[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}$")
_DEV_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
_PCI = re.compile(r"([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])/*$")


def _from_table(value, where, what, pattern, numbered, word_key, words):
    """A sysfs ``"<n>: <name>"`` value by its number, or an ibstat word by its name."""
    text = (value or "").strip()
    match = re.match(pattern, text)
    if match:
        if match.group(1) not in numbered:
            raise SysfsRdmaError("%s: unknown %s %r" % (where, what, text))
        return numbered[match.group(1)]
    key = word_key(text)
    if key not in words:
        raise SysfsRdmaError("%s: unknown %s %r" % (where, what, text[:40]))
    return words[key]


def normalize_state(value, where):
    """``"4: ACTIVE"`` (sysfs) or ``"Active"`` (ibstat) -> ``"ACTIVE"``."""
    return _from_table(value, where, "port state", r"^(\d+)\s*:\s*(\S+)$", _STATES, str.upper, _STATE_WORDS)


def normalize_phys_state(value, where):
    """``"5: LinkUp"`` (sysfs) or ``"LinkUp"`` (ibstat) -> ``"LinkUp"``."""
    return _from_table(value, where, "physical state", r"^(\d+)\s*:\s*(.+)$", _PHYS,
                       lambda text: text.lower().replace(" ", ""), _PHYS_WORDS)


def normalize_rate(value, where):
    """``"400 Gb/sec (4X NDR)"`` (sysfs) or ``"400"`` / ``"2.5"`` (ibstat) -> 400 / 2.5."""
    text = (value or "").strip()
    match = re.match(r"^(\d{1,6}(?:\.\d{1,6})?)(?:[ \t]*Gb/sec\b.*)?$", text)
    if not match:
        raise SysfsRdmaError("%s: rate %r is not '<n> Gb/sec'" % (where, text[:40]))
    number = float(match.group(1))
    return int(number) if number == int(number) else number


def normalize_link_layer(value, where):
    text = (value or "").strip()
    if text.lower() not in _LINK_LAYERS:
        raise SysfsRdmaError("%s: unknown link layer %r" % (where, text[:40]))
    return _LINK_LAYERS[text.lower()]


def parse_int(value, where):
    return sysfs_int(value, where, SysfsRdmaError)


def _small_int(text):
    """A non-negative ASCII decimal of at most 9 digits, else None."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None


def gid_ipv4(gid):
    """Dotted IPv4 address of an IPv4-mapped GID, else None."""
    parts = gid.lower().split(":")
    if len(parts) == 8 and parts[:5] == ["0000"] * 5 and parts[5] == "ffff":
        value = int(parts[6] + parts[7], 16)
        return "%d.%d.%d.%d" % (value >> 24, (value >> 16) & 255, (value >> 8) & 255, value & 255)
    return None


def gid_unused(gid):
    parts = gid.lower().split(":")
    return all(part == "0000" for part in parts) or (parts[0] == "fe80" and all(part == "0000" for part in parts[1:]))


def gid_type(raw, link_layer):
    """``"RoCE v2"`` -> ``RoCEv2``; ``"IB/RoCE v1"`` -> ``IB`` on InfiniBand, ``RoCEv1`` on Ethernet."""
    text = (raw or "").strip().lower().replace(" ", "")
    if text in ("rocev2", "v2"):
        return "RoCEv2"
    if text in ("ib/rocev1", "rocev1", "v1", "ib"):
        return "IB" if link_layer == "InfiniBand" else "RoCEv1"
    return None


def _listing(files, path):
    text = files.get(path + "/")
    if text is None:
        return None
    return [name.strip() for name in text.splitlines() if name.strip()]


def parse_sysfs_rdma(files):
    """Parse a sysfs tree (see the module docstring) into the ``gpucluster_rdma`` fact."""
    if not isinstance(files, dict):
        raise SysfsRdmaError("sysfs: expected a dict of {relative path: text}, got %s" % kind(files))
    for key, value in files.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise SysfsRdmaError("sysfs: every path and content must be text (%r)" % (key,))
    ports = {}
    gid_indexes = {}    # one pass over the paths: {port base: {gid index}} (linear in the tree size)
    for key in files:
        match = re.match(r"^class/infiniband/([^/]+)/ports/([^/]+)/", key)
        if match:
            if not _DEV_NAME.match(match.group(1)) or _small_int(match.group(2)) is None:
                raise SysfsRdmaError("sysfs: unexpected RDMA path %r" % key)
            ports.setdefault(match.group(1), set()).add(int(match.group(2)))
            rest = key[match.end():]
            if rest.startswith("gids/") and _small_int(rest[5:]) is not None:
                pbase = "class/infiniband/%s/ports/%d" % (match.group(1), int(match.group(2)))
                gid_indexes.setdefault(pbase, set()).add(int(rest[5:]))
    for key in files:
        match = re.match(r"^class/infiniband/([^/]+)/", key)
        if match and _DEV_NAME.match(match.group(1)):
            ports.setdefault(match.group(1), set())
    devices = []
    for name in sorted(ports, key=natural_key):
        base = "class/infiniband/%s" % name
        netdevs = _listing(files, base + "/device/net") or []
        link = files.get(base + "/device@")
        pci = _PCI.search(link.strip()) if link else None
        numa_text = files.get(base + "/device/numa_node")
        numa = parse_int(numa_text, base + "/device/numa_node") if numa_text is not None else None
        fw = files.get(base + "/fw_ver")
        device = {
            "name": name,
            "netdev": sorted(netdevs, key=natural_key)[0] if netdevs else None,
            "numa_node": numa if numa is not None and numa >= 0 else None,
            "pci_bus_id": pci.group(1).lower() if pci else None,
            "fw_ver": fw.strip() if fw is not None and fw.strip() else None,
            "ports": [],
        }
        for number in sorted(ports[name]):
            device["ports"].append(_parse_port(files, base, number, gid_indexes))
        if device["netdev"] is None:
            ndevs = [gid["netdev"] for port in device["ports"] for gid in port["gids"] if gid["netdev"]]
            device["netdev"] = ndevs[0] if ndevs else None
        device["upper_netdevs"] = _upper_netdevs(files, set(netdevs) | set([device["netdev"]] if device["netdev"] else []),
                                                 [gid["netdev"] for port in device["ports"] for gid in port["gids"] if gid["netdev"]])
        devices.append(device)
    peer = [mod for mod in PEER_MEMORY_MODULES if ("module/%s/" % mod) in files or ("module/%s" % mod) in files]
    markers = [marker for marker in PEER_MEMORY_MARKERS if marker in files]
    return {"source": "sysfs", "devices": devices, "peer_memory": peer, "peer_memory_markers": markers,
            "dma_buf": dma_buf_drivers(files)}


def dma_buf_drivers(files):
    """GPU drivers that export device memory as DMA-BUF for GPUDirect RDMA without a peer-memory module.

    NVIDIA's open kernel modules (``/proc/driver/nvidia/version`` says "Open Kernel Module")
    do, with CUDA 11.7+ and a kernel with DMA-BUF RDMA support (5.12+); the proprietary
    modules need ``nvidia_peermem``.
    """
    version = files.get("proc/driver/nvidia/version")
    if version is not None and "open kernel module" in version.lower():
        return ["nvidia-open"]
    return []


def _lowers(files, netdev):
    """Netdevs that ``netdev`` is stacked on: its ``lower_*`` links, bonding slaves, /proc/net/vlan/config."""
    lowers = []
    for name in _listing(files, "class/net/%s" % netdev) or []:
        if name.startswith("lower_") and len(name) > 6:
            lowers.append(name[6:].rstrip("@"))
    slaves = files.get("class/net/%s/bonding/slaves" % netdev)
    if slaves is not None:
        lowers.extend(slaves.split())
    vlan = _vlan_config(files).get(netdev)
    if vlan:
        lowers.append(vlan["lower"])
    seen = []
    for name in lowers:
        if name not in seen and name != netdev:
            seen.append(name)
    return seen


def _vlan_config(files):
    text = files.get("proc/net/vlan/config")
    return parse_vlan_config(text) if text is not None else {}


def _devtype(files, netdev):
    for line in (files.get("class/net/%s/uevent" % netdev) or "").splitlines():
        if line.startswith("DEVTYPE="):
            return line.split("=", 1)[1].strip()
    return None


def _upper_netdevs(files, own, gid_netdevs):
    """GID netdevs stacked (transitively) on one of the device's own netdevs."""
    uppers = []
    for name in gid_netdevs:
        if name in own or any(entry["name"] == name for entry in uppers):
            continue
        todo, seen, reached = [name], set(), False
        while todo and len(seen) < 64:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            for lower in _lowers(files, current):
                if lower in own:
                    reached = True
                todo.append(lower)
        if not reached:
            continue
        vlan = _vlan_config(files).get(name)
        kind = _devtype(files, name)
        if kind not in ("vlan", "bond", "macvlan"):
            kind = "vlan" if vlan else ("bond" if ("class/net/%s/bonding/slaves" % name) in files else "other")
        uppers.append({"name": name, "kind": kind, "vlan_id": vlan["vlan_id"] if vlan else None,
                       "lowers": _lowers(files, name)})
    return uppers


def parse_vlan_config(text):
    """``/proc/net/vlan/config`` -> ``{vlan netdev: {vlan_id, lower}}``."""
    if not isinstance(text, str):
        raise SysfsRdmaError("vlan config: expected text, got %s" % kind(text))
    result = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("VLAN Dev name") or line.startswith("Name-Type"):
            continue
        fields = [field.strip() for field in line.split("|")]
        if len(fields) != 3 or not fields[1].isdigit() or not fields[0] or not fields[2]:
            raise SysfsRdmaError("vlan config: line %d %r is not 'name | id | device'" % (number, line[:100]))
        vlan_id = int(fields[1])
        if not 0 <= vlan_id <= 4095:
            raise SysfsRdmaError("vlan config: line %d: VLAN id %d is out of range" % (number, vlan_id))
        result[fields[0]] = {"vlan_id": vlan_id, "lower": fields[2]}
    return result


def _parse_port(files, base, number, gid_indexes):
    pbase = "%s/ports/%d" % (base, number)
    values = {}
    for attr in ("state", "phys_state", "rate", "link_layer"):
        path = "%s/%s" % (pbase, attr)
        if path not in files and attr != "rate":
            raise SysfsRdmaError("sysfs: %s is missing (every RDMA port has it)" % path)
        values[attr] = files.get(path)
    link_layer = normalize_link_layer(values["link_layer"], pbase + "/link_layer")
    state = normalize_state(values["state"], pbase + "/state")
    if values["rate"] is None and state == "ACTIVE":
        raise SysfsRdmaError("sysfs: %s/rate is missing (every ACTIVE RDMA port has it)" % pbase)
    port = {
        "port": number,
        "state": state,
        "phys_state": normalize_phys_state(values["phys_state"], pbase + "/phys_state"),
        # A port with no link (no cable or QSFP in the cage: DOWN/Polling) has no link width,
        # and the kernel's rate_show answers EINVAL for it: the file cannot be read, the rate is
        # unknown (None). Such a port carries no traffic; an ACTIVE one always has a rate.
        "rate_gbps": normalize_rate(values["rate"], pbase + "/rate") if values["rate"] is not None else None,
        "link_layer": link_layer,
        "lid": parse_int(files[pbase + "/lid"], pbase + "/lid") if pbase + "/lid" in files else None,
        "sm_lid": parse_int(files[pbase + "/sm_lid"], pbase + "/sm_lid") if pbase + "/sm_lid" in files else None,
        "gids": [],
    }
    for index in sorted(gid_indexes.get(pbase, ())):
        gid = files["%s/gids/%d" % (pbase, index)].strip().lower()
        if not _GID.match(gid) or gid_unused(gid):
            continue
        raw_type = files.get("%s/gid_attrs/types/%d" % (pbase, index))
        kind = gid_type(raw_type, link_layer) if raw_type is not None else None
        if kind is None:
            continue
        ndev = files.get("%s/gid_attrs/ndevs/%d" % (pbase, index))
        ndev = ndev.strip() if ndev is not None and ndev.strip() else None
        port["gids"].append({"index": index, "gid": gid, "type": kind, "netdev": ndev, "ipv4": gid_ipv4(gid)})
    return port


def parse_show_gids(text):
    """Parse the ``show_gids`` listing: ``[{device, port, index, gid, ipv4, version, netdev}]``."""
    if not isinstance(text, str):
        raise SysfsRdmaError("show_gids: expected text, got %s" % kind(text))
    rows = []
    header = False
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if fields[0] == "DEV" and "GID" in fields:
            header = True
            continue
        if set(line.strip()) <= set("- \t"):
            continue
        if fields[0].startswith("n_gids_found="):
            count = fields[0].split("=", 1)[1]
            if _small_int(count) is None or int(count) != len(rows):
                raise SysfsRdmaError("show_gids: n_gids_found=%s but %d rows were read (truncated listing?)" % (count, len(rows)))
            continue
        if len(fields) < 5 or _small_int(fields[1]) is None or _small_int(fields[2]) is None or not _GID.match(fields[3]):
            raise SysfsRdmaError("show_gids: line %d %r is not 'DEV PORT INDEX GID [IPv4] VER [DEV]'" % (number, line[:100]))
        rest = fields[4:]
        ipv4 = None
        if rest and re.match(r"^\d{1,3}(?:\.\d{1,3}){3}$", rest[0]):
            ipv4 = rest.pop(0)
        if not rest or rest[0] not in ("v1", "v2"):
            raise SysfsRdmaError("show_gids: line %d has no v1/v2 version column" % number)
        if len(rest) > 2:
            raise SysfsRdmaError("show_gids: line %d has extra columns" % number)
        rows.append({"device": fields[0], "port": int(fields[1]), "index": int(fields[2]), "gid": fields[3].lower(),
                     "ipv4": ipv4, "version": rest[0], "netdev": rest[1] if len(rest) > 1 else None})
    if not header and not rows:
        raise SysfsRdmaError("show_gids: no header and no GID row: not a show_gids listing")
    return rows
