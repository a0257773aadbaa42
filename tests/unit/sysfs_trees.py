# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ONE builder of an RDMA sysfs tree from a real ``show_gids`` listing, for the unit tests.

show_gids prints a device's GID table (gids/<i>, gid_attrs/types/<i>, gid_attrs/ndevs/<i>) but
not its port state, rate or link layer: the test says which (``port``; default ``ROCE_100G``, an
ACTIVE/LinkUp 100 Gb/s Ethernet port, set by the test) and where they come from.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_rdma import parse_show_gids

ROCE_100G = {"state": "4: ACTIVE\n", "phys_state": "5: LinkUp\n", "rate": "100 Gb/sec (4X EDR)\n", "link_layer": "Ethernet\n"}


def gid_tree(text, port=None, pci_netdevs=None, flip_v2=()):
    """sysfs files ``{relative path: text}`` from the show_gids listing ``text``.

    ``port``: the port attribute files ``{attr: text}`` of every port, or a function of the device
    name giving them; ``pci_netdevs``: ``{device: [its PCI netdevs]}`` (default: the netdev of the
    device's GID rows); ``flip_v2``: ``(device, port)`` pairs whose GIDs are typed RoCE v2
    (synthetic, the test says so).
    """
    files = {}
    for row in parse_show_gids(text):
        base = "class/infiniband/%s" % row["device"]
        pbase = "%s/ports/%d" % (base, row["port"])
        attrs = port(row["device"]) if callable(port) else (port or ROCE_100G)
        assert attrs["link_layer"].strip() in ("Ethernet", "InfiniBand")
        for attr, value in attrs.items():
            files["%s/%s" % (pbase, attr)] = value
        files["%s/gids/%d" % (pbase, row["index"])] = row["gid"] + "\n"
        v2 = row["version"] == "v2" or (row["device"], row["port"]) in flip_v2
        files["%s/gid_attrs/types/%d" % (pbase, row["index"])] = "RoCE v2\n" if v2 else "IB/RoCE v1\n"
        if row["netdev"]:
            files["%s/gid_attrs/ndevs/%d" % (pbase, row["index"])] = row["netdev"] + "\n"
        if pci_netdevs is not None:
            files[base + "/device/net/"] = "\n".join(pci_netdevs[row["device"]])
        elif row["netdev"]:
            files[base + "/device/net/"] = row["netdev"] + "\n"
    return files
