#!/usr/bin/python
# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rdma_info
short_description: Probe the RDMA devices, ports and GID tables of a node
version_added: 0.1.0
description:
  - Reads C(class/infiniband) under O(sysfs_root), or parses a captured C(ibstat) output, and returns the
    C(gpucluster_rdma) fact. The filter P(gpucluster.training.nccl_env#filter) derives the NCCL settings from it.
  - Per port it reads C(state), C(phys_state), C(rate), C(link_layer), C(lid), C(sm_lid) and the GID table
    (C(gids/<i>) with C(gid_attrs/types/<i>) and C(gid_attrs/ndevs/<i>)). Unused all-zero GID entries are
    skipped. Entries whose attributes cannot be read are skipped too; they do not fail the module.
  - Per device it reads the netdev, the NUMA node, the PCI address and the firmware version. It also lists the
    GPUDirect peer-memory kernel modules that are loaded.
  - For a GID whose netdev is stacked on the port's netdev (RoCE on a VLAN, on a bond for RoCE LAG, on a
    macvlan) it reads the C(lower_*) links, C(uevent) DEVTYPE and C(bonding/slaves) under C(class/net), and
    C(net/vlan/config) under O(procfs_root), and lists those netdevs as the device's C(upper_netdevs).
  - On a host with no RDMA device the module succeeds with no devices and says so.
options:
  sysfs_root:
    description: Where sysfs is mounted.
    type: path
    default: /sys
  procfs_root:
    description: Where procfs is mounted (read for C(net/vlan/config), the VLAN ids, and C(driver/nvidia/version), DMA-BUF).
    type: path
    default: /proc
  ibstat_output:
    description:
      - Text of a captured C(ibstat) run, parsed instead of reading sysfs. ibstat shows no GID table, netdev,
        NUMA node or PCI address, so those come back as null.
    type: str
extends_documentation_fragment:
  - gpucluster.training.probe
attributes:
  platform:
    description: Linux hosts; reads sysfs.
    support: full
    platforms: posix
author:
  - gpucluster.training maintainers (@gpucluster)
"""

EXAMPLES = r"""
- name: Probe the RDMA ports of this node
  gpucluster.training.rdma_info:

- name: Derive NCCL settings from the facts
  ansible.builtin.set_fact:
    training_nccl: "{{ ansible_facts.gpucluster_rdma | gpucluster.training.nccl_env(network=ansible_facts) }}"

- name: Plan from a captured ibstat
  gpucluster.training.rdma_info:
    ibstat_output: "{{ lookup('ansible.builtin.file', 'captures/node1-ibstat.txt') }}"
  delegate_to: localhost
"""

RETURN = r"""
msg:
  description: One line saying what was found.
  returned: always
  type: str
  sample: "2 RDMA device(s), 2 active port(s): mlx5_0:1 Ethernet 100 Gb/s, mlx5_1:1 Ethernet 100 Gb/s"
ansible_facts:
  description: Facts set by the module.
  returned: always
  type: dict
  contains:
    gpucluster_rdma:
      description: The RDMA devices of the node.
      returned: always
      type: dict
      contains:
        source:
          description: V(sysfs) or V(ibstat).
          type: str
          sample: sysfs
        dma_buf:
          description:
            - GPU drivers giving GPUDirect RDMA through DMA-BUF without a peer-memory module (V(nvidia-open) when
              C(/proc/driver/nvidia/version) names NVIDIA's open kernel module). Absent from ibstat facts.
          type: list
          elements: str
          sample: [nvidia-open]
        peer_memory:
          description: Loaded GPUDirect peer-memory modules (null when unknown, from ibstat).
          type: list
          elements: str
          sample: [nvidia_peermem]
        peer_memory_markers:
          description:
            - GPUDirect peer-memory clients registered with the RDMA core (MLNX_OFED / DOCA kernels), as the
              paths of their C(version) files under O(sysfs_root) (for example
              C(kernel/mm/memory_peers/nv_mem/version)). Absent from ibstat facts.
          type: list
          elements: str
          sample: [kernel/mm/memory_peers/nv_mem/version]
        warnings:
          description: C(ibwarn)/C(ibpanic) lines of a captured ibstat (only with O(ibstat_output)).
          type: list
          elements: str
          sample: []
        devices:
          description:
            - One entry per RDMA device with C(name), C(netdev), C(numa_node), C(pci_bus_id), C(fw_ver) and C(ports).
            - C(upper_netdevs) lists C({name, kind, vlan_id, lowers}) for each GID netdev stacked on the device's netdev,
              with C(kind) one of V(vlan), V(bond), V(macvlan) or V(other).
            - Each port has C(port), C(state) (V(ACTIVE), V(DOWN) ...), C(phys_state) (V(LinkUp) ...), C(rate_gbps),
              C(link_layer) (V(InfiniBand) or V(Ethernet)), C(lid), C(sm_lid) and C(gids).
            - C(rate_gbps) is null on a port that is not V(ACTIVE) whose rate the kernel cannot read (no link width,
              no cable or QSFP in the cage); an V(ACTIVE) port always has it.
            - C(gids) lists C({index, gid, type, netdev, ipv4}), with C(type) one of V(IB), V(RoCEv1) or V(RoCEv2);
              it is null when the table is unknown (from ibstat).
          type: list
          elements: dict
          sample:
            - name: mlx5_0
              netdev: ens1f0
              numa_node: 0
              pci_bus_id: "0000:0c:00.0"
              fw_ver: 22.32.2004
              upper_netdevs: []
              ports:
                - port: 1
                  state: ACTIVE
                  phys_state: LinkUp
                  rate_gbps: 100
                  link_layer: Ethernet
                  lid: 0
                  sm_lid: 0
                  gids:
                    - {index: 3, gid: "0000:0000:0000:0000:0000:ffff:ac13:003c", type: RoCEv2, netdev: ens1f0, ipv4: 172.19.0.60}
"""

import os
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucluster.training.plugins.module_utils._ibstat import IbstatError, parse_ibstat
from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_rdma import (
    PEER_MEMORY_MARKERS, PEER_MEMORY_MODULES, SysfsRdmaError, parse_sysfs_rdma,
)
from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_read import listdir, read_text

PORT_FILES = ("state", "phys_state", "rate", "link_layer", "lid", "sm_lid")


def read_tree(root, proc_root=None):
    """Read the RDMA part of sysfs into {relative path: text} (see module_utils/_sysfs_rdma.py)."""
    files = {}

    def put(rel, text):
        if text is not None:
            files[rel] = text

    for module_name in PEER_MEMORY_MODULES:
        if os.path.isdir(os.path.join(root, "module", module_name)):
            files["module/%s/" % module_name] = ""
    for marker in PEER_MEMORY_MARKERS:
        if os.path.exists(os.path.join(root, marker)):
            files[marker] = ""
    base = os.path.join(root, "class", "infiniband")
    for dev in listdir(base) or []:
        rel = "class/infiniband/%s" % dev
        path = os.path.join(base, dev)
        put(rel + "/fw_ver", read_text(os.path.join(path, "fw_ver")))
        try:
            files[rel + "/device@"] = os.readlink(os.path.join(path, "device"))
        except OSError:
            pass
        put(rel + "/device/numa_node", read_text(os.path.join(path, "device", "numa_node")))
        net = listdir(os.path.join(path, "device", "net"))
        if net is not None:
            files[rel + "/device/net/"] = "\n".join(net)
        for port in listdir(os.path.join(path, "ports")) or []:
            prel = "%s/ports/%s" % (rel, port)
            ppath = os.path.join(path, "ports", port)
            for name in PORT_FILES:
                put("%s/%s" % (prel, name), read_text(os.path.join(ppath, name)))
            for index in listdir(os.path.join(ppath, "gids")) or []:
                gid = read_text(os.path.join(ppath, "gids", index))
                if gid is None:
                    continue
                files["%s/gids/%s" % (prel, index)] = gid
                if set(gid.strip().replace(":", "")) <= set("0") or gid.strip().startswith("fe80:0000:0000:0000:0000:0000:0000:0000"):
                    continue
                put("%s/gid_attrs/types/%s" % (prel, index), read_text(os.path.join(ppath, "gid_attrs", "types", index)))
                put("%s/gid_attrs/ndevs/%s" % (prel, index), read_text(os.path.join(ppath, "gid_attrs", "ndevs", index)))
    read_stacking(root, files, proc_root)
    return files


def read_stacking(root, files, proc_root=None):
    """Lower links, DEVTYPE and bond slaves of the GID netdevs and what they are stacked on (VLAN, bond, macvlan)."""
    todo = [text.strip() for key, text in files.items() if "/gid_attrs/ndevs/" in key and text.strip()]
    seen = set()
    while todo and len(seen) < 256:
        name = todo.pop()
        if name in seen or "/" in name or name.startswith("."):
            continue
        seen.add(name)
        path = os.path.join(root, "class", "net", name)
        entries = listdir(path)
        if entries is None:
            continue
        lowers = [entry for entry in entries if entry.startswith("lower_")]
        files["class/net/%s/" % name] = "\n".join(lowers + (["bonding"] if "bonding" in entries else []))
        uevent = read_text(os.path.join(path, "uevent"))
        if uevent is not None:
            files["class/net/%s/uevent" % name] = "\n".join(line for line in uevent.splitlines() if line.startswith("DEVTYPE="))
        slaves = read_text(os.path.join(path, "bonding", "slaves"))
        if slaves is not None:
            files["class/net/%s/bonding/slaves" % name] = slaves
        todo.extend(entry[6:] for entry in lowers)
    vlan = read_text(os.path.join(proc_root, "net", "vlan", "config")) if proc_root else None
    if vlan is not None:
        files["proc/net/vlan/config"] = vlan
    nvidia = read_text(os.path.join(proc_root, "driver", "nvidia", "version")) if proc_root else None
    if nvidia is not None:
        files["proc/driver/nvidia/version"] = nvidia


def summary(fact):
    devices = fact["devices"]
    if not devices:
        return "no RDMA device found (no class/infiniband entries)"
    ordered = sorted(devices, key=lambda dev: [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", dev["name"])])
    active = ["%s:%s %s %s Gb/s" % (dev["name"], port["port"], port["link_layer"], port["rate_gbps"])
              for dev in ordered for port in dev["ports"] if port["state"] == "ACTIVE"]
    return "%d RDMA device(s), %d active port(s)%s" % (len(devices), len(active), (": " + ", ".join(active)) if active else "")


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_root=dict(type="path", default="/sys"),
            procfs_root=dict(type="path", default="/proc"),
            ibstat_output=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    try:
        if module.params["ibstat_output"] is not None:
            fact = parse_ibstat(module.params["ibstat_output"])
        else:
            fact = parse_sysfs_rdma(read_tree(module.params["sysfs_root"], module.params["procfs_root"]))
    except (IbstatError, SysfsRdmaError) as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, msg=summary(fact), ansible_facts={"gpucluster_rdma": fact})


if __name__ == "__main__":
    main()
