# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for an NCCL / RCCL log written with ``NCCL_DEBUG=INFO``.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``parse_nccl_log(text)`` answers "which network did this job really use?"::

    {version, library, network, rdma, gdrdma, socket_fallback, hcas, gid_index,
     oob_interface, hosts, channels: [...], socket_lines: [...]}

* ``version``: ``2.16.5+cuda11.8`` from ``NCCL version ...`` / ``RCCL version ...``; ``library``
  is ``NCCL`` or ``RCCL``.
* ``network``: what NCCL chose (``Using network IB`` / ``Socket`` / a plugin name such as
  ``AWS Libfabric``); older NCCL (< 2.12) does not print that line, so the transport of the
  inter-node channels (or the ``NET/... : Using`` line) is used instead.
* ``channels``: one entry per inter-node channel line (``Channel 00/0 : 1[1] -> 0[0] [receive]
  via NET/IB/1/GDRDMA``; NCCL < 2.5 says ``Ring 00 : 3 -> 10 [send] via NET/IB/0/GDRDMA``): ``{host, line, channel, from_rank, to_rank, direction, transport,
  device, gdrdma, shared}``; ``line`` is the 1-based line number in the text, ``transport`` the
  name after ``NET/`` (``IB``, ``IBext_v8``, ``Socket``, ``Libfabric`` ...).
* ``gdrdma``: any inter-node channel used GPUDirect RDMA; without such channels (a single-node
  log) it falls back to ``GPU Direct RDMA Enabled/Disabled for HCA`` lines, else ``None``.
* ``rdma``: the network is RDMA (anything but ``Socket``); ``socket_fallback``: ``Using network
  Socket`` or a channel ``via NET/Socket``; ``socket_lines`` lists those lines
  ``{host, line, text}`` so a report can name the node and the line.
* ``hcas``: ``dev:port`` of every port NCCL listed (``NET/IB : Using [0]mlx5_0:1/RoCE``),
  in order of first appearance; ``gid_index`` from ``NCCL_IB_GID_INDEX set by environment``
  (or the ``GID n`` of ``NET/IB: Dev`` lines); ``oob_interface`` from ``; OOB ib0:...`` (or
  the ``Bootstrap : Using`` interface).

Launcher prefixes (``srun --label``, ``mpirun --tag-output``, Horovod ``[0]<stdout>:``) and CRLF
are handled.  Text with no NCCL/RCCL log line at all raises ``NcclLogParseError``.
"""

from __future__ import annotations

import re

from ansible_collections.gpucluster.training.plugins.module_utils._parse_text import require_text

__all__ = ["NcclLogParseError", "parse_nccl_log"]


class NcclLogParseError(ValueError):
    """The text is not an NCCL / RCCL debug log."""


_PREFIX_RE = re.compile(r"^(?:\s*\d+:\s?|\[\d+(?:,\d+)?\]<std(?:out|err)>:)")
# "host:pid:tid [cudaDev] NCCL INFO ..."; the host may be empty in some pastes.
_LINE_RE = re.compile(
    r"(?:^|\s)(?P<host>[^\s:\[\]]*):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] "
    r"(?:NCCL|RCCL) (?P<level>INFO|WARN|TRACE|ABORT)\s?(?P<msg>.*)$"
)
_VERSION_RE = re.compile(r"\b(?P<lib>NCCL|RCCL) version ?:? ?(?P<version>[0-9][\w.+\-]*)")
_HCA_RE = re.compile(r"\[\d+\](?P<dev>[^\s:\[\]]+):(?P<port>\d+)(?:/(?P<ll>\w+))?")
_OOB_RE = re.compile(r";\s*OOB\s+(?P<iface>[^\s:]+):")
_BOOTSTRAP_RE = re.compile(r"^Bootstrap\s*: Using (?P<iface>[^\s:]+):")
_GID_ENV_RE = re.compile(r"^NCCL_IB_GID_INDEX set by environment to (?P<gid>-?\d+)")
_GID_DEV_RE = re.compile(r"^NET/IB: Dev \d+ .*\bGID (?P<gid>\d+)")
_GDR_HCA_RE = re.compile(r"GPU Direct RDMA (?P<state>Enabled|Disabled) for HCA")
_CHANNEL_RE = re.compile(
    r"^(?:Channel|Ring) (?P<channel>\d{1,6})(?:/\d{1,6})? : (?P<src>\d{1,9})(?:\[[^\]]{0,64}\])? -> (?P<dst>\d{1,9})"
    r"(?:\[[^\]]{0,64}\])?(?: \[(?P<dir>send|receive)\])? via NET/"
)
_DEVICE_RE = re.compile(r"^(?P<device>\d{1,6})(?:\(\d{1,6}\))?$")
# Texts larger than this are refused (an NCCL_DEBUG=INFO log of a 1000-rank job is ~100 MB).
MAX_TEXT_CHARS = 256 * 1024 * 1024
# Lines longer than this are no NCCL log line (they are skipped, not parsed).
MAX_LINE_CHARS = 4096


def _lines(text: str):
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if len(raw) > MAX_LINE_CHARS:
            yield ""
            continue
        yield _PREFIX_RE.sub("", raw, count=1)


def _channel_transport(rest):
    """``NCCL RDMA Plugin v6/0(2)/GDRDMA/Shared`` -> (transport, device, flags).

    The transport is the text up to the first ``/`` (a plugin name may hold spaces); the device the
    next segment when it is a number (``0`` or ``0(2)``); flags the segments after it, up to the
    first space.
    """
    parts = rest.split("/")
    transport = parts[0].strip()
    device = None
    tail = parts[1:]
    if tail:
        match = _DEVICE_RE.match(tail[0].split(" ", 1)[0])
        if match:
            device = int(match.group("device"))
            tail = tail[1:]
    flags = []
    for part in tail:
        word = part.split(" ", 1)
        flags.append(word[0])
        if len(word) > 1:
            break
    return transport, device, flags


def parse_nccl_log(text: str) -> dict:
    """Parse an ``NCCL_DEBUG=INFO`` log; see the module docstring."""
    require_text(text, MAX_TEXT_CHARS, NcclLogParseError, "expected the text of an NCCL log, got %s",
                 "the log is %d characters, more than the %d this parser reads: give the "
                 "log of fewer ranks (NCCL_DEBUG_FILE per rank) or a part of it")

    version = library = None
    networks = []
    net_using = []          # transports named by "NET/<x> : Using" lines
    hcas = []
    link_layers = {}
    gid_env = gid_dev = None
    oob = bootstrap = None
    hosts = []
    channels = []
    socket_lines = []
    gdr_hca = []
    seen_log_line = False

    for number, line in enumerate(_lines(text), start=1):
        host = None
        msg = line.strip()
        match = _LINE_RE.search(line)
        if match:
            seen_log_line = True
            host = match.group("host")
            msg = match.group("msg").strip()
            if host and host not in hosts:
                hosts.append(host)
        match = _VERSION_RE.search(msg)
        if match and version is None:
            version, library = match.group("version"), match.group("lib")
            seen_log_line = True
            continue
        if not msg:
            continue
        if msg.startswith("Using network "):
            name = msg[len("Using network "):].strip()
            if name not in networks:
                networks.append(name)
            if name == "Socket":
                socket_lines.append({"host": host, "line": number, "text": line.strip()})
            continue
        match = _CHANNEL_RE.match(msg)
        if match:
            transport, device, flags = _channel_transport(msg[match.end():])
            channel = {
                "host": host,
                "line": number,
                "channel": int(match.group("channel")),
                "from_rank": int(match.group("src")),
                "to_rank": int(match.group("dst")),
                "direction": match.group("dir"),
                "transport": transport,
                "device": device,
                "gdrdma": "GDRDMA" in flags,
                "shared": "Shared" in flags,
            }
            channels.append(channel)
            if transport == "Socket":
                socket_lines.append({"host": host, "line": number, "text": line.strip()})
            continue
        if msg.startswith("NET/") and ": Using " in msg:
            name, rest = msg[4:].split(": Using ", 1)
            name = name.strip()
            if name not in net_using:
                net_using.append(name)
            if name != "Socket":
                for hca in _HCA_RE.finditer(rest.split(";")[0]):
                    key = "%s:%s" % (hca.group("dev"), hca.group("port"))
                    if key not in hcas:
                        hcas.append(key)
                        link_layers[key] = hca.group("ll")
            oob_match = _OOB_RE.search(rest)
            if oob_match and oob is None:
                oob = oob_match.group("iface")
            continue
        match = _GID_ENV_RE.match(msg)
        if match:
            gid_env = int(match.group("gid")) if gid_env is None else gid_env
            continue
        match = _GID_DEV_RE.match(msg)
        if match:
            gid_dev = int(match.group("gid")) if gid_dev is None else gid_dev
            continue
        match = _BOOTSTRAP_RE.match(msg)
        if match:
            bootstrap = bootstrap or match.group("iface")
            continue
        match = _GDR_HCA_RE.search(msg)
        if match:
            gdr_hca.append(match.group("state") == "Enabled")

    if not seen_log_line:
        raise NcclLogParseError(
            "no NCCL/RCCL log line found (expected 'host:pid:tid [dev] NCCL INFO ...' lines "
            "from a run with NCCL_DEBUG=INFO)"
        )

    net_channels = channels
    if networks:
        network = ", ".join(networks)
    elif net_channels:
        network = ", ".join(sorted({c["transport"] for c in net_channels}))
    elif net_using:
        # NET/IB that found no device still prints "NET/IB : Using [RO]"; prefer what has ports.
        network = "IB" if hcas else net_using[-1]
    else:
        network = None

    socket_fallback = "Socket" in networks or any(
        c["transport"] == "Socket" for c in net_channels
    )
    if network is None:
        rdma = None
    else:
        rdma_channels = [c for c in net_channels if c["transport"] != "Socket"]
        rdma = bool(rdma_channels) or (
            not net_channels and any(n != "Socket" for n in network.split(", "))
        )

    if net_channels:
        gdrdma = any(c["gdrdma"] for c in net_channels)
    elif gdr_hca:
        gdrdma = any(gdr_hca)
    else:
        gdrdma = None

    return {
        "version": version,
        "library": library,
        "network": network,
        "rdma": rdma,
        "gdrdma": gdrdma,
        "socket_fallback": socket_fallback,
        "hcas": hcas,
        "hca_link_layers": link_layers,
        "gid_index": gid_env if gid_env is not None else gid_dev,
        "oob_interface": oob or bootstrap,
        "hosts": hosts,
        "channels": channels,
        "socket_lines": socket_lines,
    }
