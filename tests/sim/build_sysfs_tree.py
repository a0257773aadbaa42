# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build a stand-in sysfs tree (class/infiniband/...) from real captured outputs.

TEST TOOL of the Molecule scenarios rdma and rdma_mismatch and of the lab; never used on a real node. The
containers have no RDMA device, so each gets a tree made from captures of real machines in
tests/fixtures (see tests/fixtures/SOURCES.md):

* ``--ibstat``: device names, firmware, and per port the state, physical state, rate, link layer,
  LID and SM LID, exactly as that ibstat printed them;
* ``--show-gids`` (optional): the GID table (index, GID, v1/v2, netdev) as show_gids printed it;
  with it, only the devices the listing shows are kept (ibstat and show_gids of the same kind of
  card, named in the scenario), the other indexes below the highest are written all-zero and
  without a type (the kernel answers EINVAL for those), like the unused entries of a real table;
* without ``--show-gids``, an InfiniBand port gets GID 0 = fe80::/64 + its Port GUID (how an IB
  port forms its default GID) and an Ethernet port no GID table;
* ``--marker PATH``: an empty file or directory (path ending in /) relative to the root, to stand
  in for kernel state such as a loaded peer-memory module. The scenario names each as simulated.

Parsing here is deliberately independent of the collection's parsers (module_utils/_ibstat.py,
_sysfs_rdma.py), so the module under test reads a tree it did not write itself.
Writes a .tar.gz whose members are relative to the sysfs root.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import tarfile

STATES = {"down": "1: DOWN", "initializing": "2: INIT", "init": "2: INIT", "armed": "3: ARMED", "active": "4: ACTIVE"}
PHYS = {"sleep": "1: Sleep", "polling": "2: Polling", "disabled": "3: Disabled", "linkup": "5: LinkUp"}
ZERO_GID = ":".join(["0000"] * 8)


def parse_ibstat(text):
    devices = []
    device = port = None
    for line in text.splitlines():
        line = line.strip()
        match = re.match(r"^CA '([^']+)'$", line)
        if match:
            device = {"name": match.group(1), "fw": None, "ports": []}
            devices.append(device)
            continue
        match = re.match(r"^Port (\d+):$", line)
        if match and device is not None:
            port = {"port": int(match.group(1))}
            device["ports"].append(port)
            continue
        if ":" not in line or device is None:
            continue
        key, value = [part.strip() for part in line.split(":", 1)]
        if key == "Firmware version":
            device["fw"] = value
        elif port is not None:
            port[key] = value
    return devices


def parse_show_gids(text):
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 5 or not fields[1].isdigit() or not fields[2].isdigit():
            continue
        rest = fields[4:]
        if re.match(r"^\d+\.\d+\.\d+\.\d+$", rest[0]):
            rest = rest[1:]
        rows.append({"device": fields[0], "port": int(fields[1]), "index": int(fields[2]), "gid": fields[3],
                     "version": rest[0], "netdev": rest[1] if len(rest) > 1 else None})
    return rows


def build(ibstat_text, gids_text=None, markers=()):
    files = {}  # relative path -> text; a path ending in "/" is a directory
    rows = parse_show_gids(gids_text) if gids_text else None
    keep = set(row["device"] for row in rows) if rows is not None else None
    for device in parse_ibstat(ibstat_text):
        if keep is not None and device["name"] not in keep:
            continue
        base = "class/infiniband/%s" % device["name"]
        if device["fw"]:
            files[base + "/fw_ver"] = device["fw"] + "\n"
        files[base + "/device/"] = ""
        netdevs = sorted(set(r["netdev"] for r in rows or [] if r["device"] == device["name"] and r["netdev"]))
        for netdev in netdevs:
            files["%s/device/net/%s/" % (base, netdev)] = ""
        for port in device["ports"]:
            pbase = "%s/ports/%d" % (base, port["port"])
            files[pbase + "/state"] = STATES[port["State"].lower()] + "\n"
            files[pbase + "/phys_state"] = PHYS[port["Physical state"].lower()] + "\n"
            files[pbase + "/rate"] = "%s Gb/sec\n" % port["Rate"]
            files[pbase + "/link_layer"] = port["Link layer"] + "\n"
            files[pbase + "/lid"] = "0x%x\n" % int(port.get("Base lid", "0"), 0)
            files[pbase + "/sm_lid"] = "0x%x\n" % int(port.get("SM lid", "0"), 0)
            files[pbase + "/gids/"] = ""
            files[pbase + "/gid_attrs/types/"] = ""
            files[pbase + "/gid_attrs/ndevs/"] = ""
            if rows is not None:
                mine = [r for r in rows if r["device"] == device["name"] and r["port"] == port["port"]]
                table = dict((r["index"], r) for r in mine)
            elif port["Link layer"] == "InfiniBand" and int(port.get("Port GUID", "0"), 16):
                guid = "%016x" % int(port["Port GUID"], 16)
                gid = "fe80:0000:0000:0000:%s:%s:%s:%s" % (guid[0:4], guid[4:8], guid[8:12], guid[12:16])
                table = {0: {"gid": gid, "version": "v1", "netdev": None}}
            else:
                table = {}
            for index in range(max(table) + 1 if table else 0):
                row = table.get(index)
                files["%s/gids/%d" % (pbase, index)] = (row["gid"] if row else ZERO_GID) + "\n"
                if row:
                    files["%s/gid_attrs/types/%d" % (pbase, index)] = ("RoCE v2" if row["version"] == "v2" else "IB/RoCE v1") + "\n"
                    if row["netdev"]:
                        files["%s/gid_attrs/ndevs/%d" % (pbase, index)] = row["netdev"] + "\n"
    for marker in markers:
        files[marker] = ""
        if not marker.endswith("/"):
            files[marker] = "stand-in\n"
    return files


def write_tar(files, out):
    with tarfile.open(out, "w:gz") as tar:
        dirs = set()
        for path in sorted(files):
            parts = path.rstrip("/").split("/")
            for depth in range(1, len(parts)):
                dirs.add("/".join(parts[:depth]))
            if path.endswith("/"):
                dirs.add(path.rstrip("/"))
        for path in sorted(dirs):
            info = tarfile.TarInfo(path)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
            tar.addfile(info)
        for path in sorted(p for p in files if not p.endswith("/")):
            data = files[path].encode()
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o444, 0
            tar.addfile(info, io.BytesIO(data))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--ibstat", required=True)
    parser.add_argument("--show-gids")
    parser.add_argument("--marker", action="append", default=[])
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    with open(args.ibstat) as handle:
        ibstat = handle.read()
    gids = None
    if args.show_gids:
        with open(args.show_gids) as handle:
            gids = handle.read()
    files = build(ibstat, gids, args.marker)
    write_tar(files, args.out)
    sys.stdout.write("%d entries\n" % len(files))


if __name__ == "__main__":
    main()
