# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the text output of ``ibstat`` (infiniband-diags).

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``parse_ibstat(text)`` returns the ``gpucluster_rdma`` fact in the same shape as
``_sysfs_rdma.parse_sysfs_rdma``::

    {source: ibstat, devices: [{name, netdev, numa_node, pci_bus_id, fw_ver, ca_type, ports:
     [{port, state, phys_state, rate_gbps, link_layer, lid, sm_lid, port_guid, gids}]}],
     peer_memory: None, warnings: [...]}

ibstat knows neither the GID table nor the netdev, NUMA node or PCI address of a device: those
are ``None`` (``gids: None`` means "unknown", unlike ``[]`` = "no usable entry"), so
``nccl_env`` can say it could not choose a GID index.  ``ibwarn:``/``ibpanic:`` lines are
kept in ``warnings``.  A CA with fewer ``Port N:`` blocks than its ``Number of ports``, or a
port without State, Physical state, Rate or Link layer, is refused as truncated
(``IbstatError``).
"""

from __future__ import annotations

import re

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import sysfs_int
from ansible_collections.gpucluster.training.plugins.module_utils._parse_text import require_text
from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_rdma import (
    SysfsRdmaError,
    normalize_link_layer,
    normalize_phys_state,
    normalize_rate,
    normalize_state,
)


class IbstatError(ValueError):
    """ibstat output that cannot be understood."""


_CA = re.compile(r"^CA '([^']+)'\s*$")
_PORT = re.compile(r"^Port (\d{1,3}):\s*$")
_FIELD_KEY = re.compile(r"^[A-Za-z][A-Za-z ]*$")
# ibstat of a host with 32 HCAs is a few KiB.
MAX_TEXT_CHARS = 4 * 1024 * 1024


def _field(line):
    """``Key: value`` (key of letters and spaces) -> (key, value) by partition (linear), else None."""
    key, sep, value = line.partition(":")
    key = key.rstrip()
    if not sep or not _FIELD_KEY.match(key):
        return None
    return key, value.strip()


_REQUIRED = ("State", "Physical state", "Rate", "Link layer")


def _int(value, where):
    # ibstat prints what sysfs holds; its numbers (LIDs, port counts) are at most 20 characters
    return sysfs_int(value, where, IbstatError, prefix="ibstat: ", max_len=20)


def _finish_port(ca, port):
    where = "CA '%s' port %s" % (ca["name"], port["number"])
    for key in _REQUIRED:
        if key not in port["fields"]:
            raise IbstatError("ibstat: %s has no '%s:' line (truncated output?)" % (where, key))
    fields = port["fields"]
    try:
        parsed = {
            "port": port["number"],
            "state": normalize_state(fields["State"], where),
            "phys_state": normalize_phys_state(fields["Physical state"], where),
            "rate_gbps": normalize_rate(fields["Rate"], where),
            "link_layer": normalize_link_layer(fields["Link layer"], where),
        }
    except SysfsRdmaError as exc:
        raise IbstatError("ibstat: %s" % exc)
    parsed["lid"] = _int(fields["Base lid"], where + " Base lid") if "Base lid" in fields else None
    parsed["sm_lid"] = _int(fields["SM lid"], where + " SM lid") if "SM lid" in fields else None
    parsed["port_guid"] = fields.get("Port GUID")
    parsed["gids"] = None
    return parsed


def _finish_ca(ca):
    declared = ca["fields"].get("Number of ports")
    if declared is not None:
        count = _int(declared, "CA '%s' Number of ports" % ca["name"])
        if count != len(ca["ports"]):
            raise IbstatError("ibstat: CA '%s' declares %d port(s) but %d were listed (truncated output?)" % (ca["name"], count, len(ca["ports"])))
    elif not ca["ports"]:
        raise IbstatError("ibstat: CA '%s' has no port (truncated output?)" % ca["name"])
    return {
        "name": ca["name"],
        "netdev": None,
        "numa_node": None,
        "pci_bus_id": None,
        "fw_ver": ca["fields"].get("Firmware version"),
        "ca_type": ca["fields"].get("CA type"),
        "ports": ca["ports"],
    }


def parse_ibstat(text):
    """Parse ``ibstat`` output; see the module docstring for the result."""
    require_text(text, MAX_TEXT_CHARS, IbstatError, "ibstat: expected the output as text, got %s",
                 "ibstat: the output is %d characters, more than the %d ibstat prints: not ibstat output")
    devices = []
    warnings = []
    ca = None
    port = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith(("ibwarn:", "ibpanic:", "ibstat:")):
            warnings.append(line)
            continue
        match = _CA.match(line)
        if match:
            if ca is not None:
                if port is not None:
                    ca["ports"].append(_finish_port(ca, port))
                devices.append(_finish_ca(ca))
            ca = {"name": match.group(1), "fields": {}, "ports": []}
            port = None
            continue
        if ca is None:
            raise IbstatError("ibstat: line %d %r comes before any \"CA '<name>'\" line: not ibstat output" % (number, line[:80]))
        match = _PORT.match(line)
        if match:
            if port is not None:
                ca["ports"].append(_finish_port(ca, port))
            port = {"number": int(match.group(1)), "fields": {}}
            continue
        match = _field(line)
        if not match:
            raise IbstatError("ibstat: line %d %r is not '<Field>: <value>'" % (number, line[:80]))
        target = port["fields"] if port is not None else ca["fields"]
        if match[0] in target:
            raise IbstatError("ibstat: line %d repeats '%s' (garbled output?)" % (number, match[0]))
        target[match[0]] = match[1]
    if ca is None:
        raise IbstatError("ibstat: no \"CA '<name>'\" line: empty or not ibstat output")
    if port is not None:
        ca["ports"].append(_finish_port(ca, port))
    devices.append(_finish_ca(ca))
    names = [dev["name"] for dev in devices]
    if len(set(names)) != len(names):
        raise IbstatError("ibstat: a CA is listed twice (garbled output?)")
    return {"source": "ibstat", "devices": devices, "peer_memory": None, "warnings": warnings}
