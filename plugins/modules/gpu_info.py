#!/usr/bin/python
# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: gpu_info
short_description: Probe the GPUs of a node (AMD through rocminfo, NVIDIA through nvidia-smi)
version_added: 0.1.0
description:
  - Runs C(rocminfo) or C(nvidia-smi -q -x) with C(LANG=C), or parses a captured output given as an
    option, and returns the C(gpucluster_gpus) fact.
  - Counts the GPUs usable for training. rocminfo's CPU agents are not GPUs. Integrated graphics
    without a unique id, such as C(AMD Radeon Graphics), are listed but not counted.
  - MI300X compute partitions (CPX and others) and MI250X GCDs are logical GPUs, each counted, and
    C(physical_count) counts the packages behind them. NVIDIA MIG instances are the
    devices of a GPU in MIG mode.
  - PCI bus id, NUMA node and render node of AMD GPUs come from sysfs (C(/sys/class/kfd)), not from guesses.
  - On a host with no GPU the module succeeds with C(count=0) and says so. It fails only when
    O(expected_count) requires GPUs, or when GPU hardware is present but its driver does not answer.
options:
  vendor:
    description:
      - Which tool to use. V(auto) uses the captured output given, else the tool that exists on the host.
    type: str
    choices: [auto, amd, nvidia]
    default: auto
  rocminfo_output:
    description:
      - Text of a captured C(rocminfo) run, parsed instead of running the tool (plan from offline captures).
    type: str
  nvidia_smi_output:
    description:
      - XML of a captured C(nvidia-smi -q -x) run, parsed instead of running the tool.
    type: str
  mig_minors_output:
    description:
      - Text of a captured C(/proc/driver/nvidia-caps/mig-minors). On a live host the file is read when a GPU is in MIG
        mode. It gives each MIG instance its C(/dev/nvidia-caps/nvidia-cap<N>) files (C(mig.cap_files)), which gres.conf
        needs without Slurm's NVML autodetection.
    type: str
  expected_count:
    description:
      - Number of GPUs this node must have; the module fails, naming found and expected, when they differ.
    type: int
  sysfs_root:
    description:
      - Where sysfs is mounted, read for KFD topology, render nodes and NUMA nodes of AMD GPUs, the PCI NUMA node of
        NVIDIA GPUs and the number of NUMA nodes (C(devices/system/node/online)).
      - Not read when a captured output is given, unless set explicitly.
    type: path
extends_documentation_fragment:
  - gpucluster.training.probe
attributes:
  platform:
    description: Linux hosts; reads sysfs and runs rocminfo or nvidia-smi.
    support: full
    platforms: posix
author:
  - gpucluster.training maintainers (@gpucluster)
"""

EXAMPLES = r"""
- name: Probe the GPUs of this node
  gpucluster.training.gpu_info:
    expected_count: 8

- name: Plan from a captured rocminfo of an MI300X node
  gpucluster.training.gpu_info:
    rocminfo_output: "{{ lookup('ansible.builtin.file', 'captures/node1-rocminfo.txt') }}"
  delegate_to: localhost

- name: Use the facts
  ansible.builtin.debug:
    msg: "{{ ansible_facts.gpucluster_gpus.count }} x {{ ansible_facts.gpucluster_gpus.slurm_type }}"
"""

RETURN = r"""
msg:
  description: One line saying what was found.
  returned: always
  type: str
  sample: "4 AMD GPU(s): AMD Instinct MI300X (gfx942), GRES type mi300x"
ansible_facts:
  description: Facts set by the module.
  returned: always
  type: dict
  contains:
    gpucluster_gpus:
      description: The GPUs of the node.
      returned: always
      type: dict
      contains:
        vendor:
          description: V(amd), V(nvidia), or V(none) when no GPU was found.
          type: str
          sample: amd
        count:
          description: Logical GPUs usable for training (Slurm C(gres/gpu) count).
          type: int
          sample: 4
        physical_count:
          description: Physical packages behind them (MI300X partitions share one; an MI250X card has two GCDs).
          type: int
          sample: 4
        model:
          description: Marketing or product name.
          type: str
          sample: AMD Instinct MI300X
        arch:
          description: GPU architecture (AMD gfx target, NVIDIA architecture name).
          type: str
          sample: gfx942
        memory_mib:
          description: Memory of one logical GPU in MiB (the smallest when they differ).
          type: int
          sample: 196592
        slurm_type:
          description: Slurm GRES type slug.
          type: str
          sample: mi300x
        partition_mode:
          description: AMD compute partition mode (V(SPX), V(CPX) ...) when it can be told, else null.
          type: str
          sample: SPX
        heterogeneous:
          description: True when the counted GPUs are of different models.
          type: bool
          sample: false
        driver_loaded:
          description: Whether the GPU driver answered (null when no GPU tool is installed).
          type: bool
          sample: true
        driver_version:
          description: Driver version when the tool reports it.
          type: str
          sample: 535.54.03
        numa_node_count:
          description: NUMA nodes of the host (from sysfs; null from captures). With each GPU's C(numa_node) it gives gres.conf C(Cores=).
          type: int
          sample: 2
        warnings:
          description: Notes about the capture (for example an edited nvidia-smi XML).
          type: list
          elements: str
          sample: []
        devices:
          description:
            - Every GPU listed by the tool, counted or not, with C(index), C(model), C(arch), C(memory_mib),
              C(uuid), C(pci_bus_id), C(numa_node), C(render_node), C(device_file), C(slurm_type),
              C(counted), C(not_counted_reason), C(physical_id) and vendor-specific keys (AMD C(bdf),
              C(kfd_node), C(compute_units), C(partition_mode), C(virtual_function); NVIDIA C(mig) with C(profile),
              C(gpu_instance_id), C(compute_instance_id), C(parent_minor) and C(cap_files)).
          type: list
          elements: dict
          sample:
            - index: 0
              model: AMD Instinct MI300X
              arch: gfx942
              memory_mib: 196592
              uuid: GPU-8d1457e2c20f59d2
              pci_bus_id: "0000:26:00.0"
              numa_node: 0
              render_node: /dev/dri/renderD128
              slurm_type: mi300x
              counted: true
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucluster.training.plugins.module_utils._gpu_models import gpu_facts
from ansible_collections.gpucluster.training.plugins.module_utils._gpu_sysfs import GpuSysfsError, enrich_amd_devices, pci_gpus
from ansible_collections.gpucluster.training.plugins.module_utils._nvidia_smi import (
    NvidiaSmiError,
    apply_mig_minors,
    parse_mig_minors,
    parse_nvidia_smi_xml,
)
from ansible_collections.gpucluster.training.plugins.module_utils._rocminfo import RocminfoError, parse_rocminfo
from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_read import LANG_C, read_text


def read_pci_files(sysfs_root):
    """{relative path: text} of vendor/class/numa_node of every PCI function."""
    files = {}
    base = os.path.join(sysfs_root, "bus", "pci", "devices")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return files
    for name in names:
        for attr in ("vendor", "class", "numa_node"):
            text = read_text(os.path.join(base, name, attr))
            if text is not None:
                files["bus/pci/devices/%s/%s" % (name, attr)] = text
    return files


def read_kfd_files(sysfs_root):
    """{relative path: text} of the KFD topology node properties and the PCI NUMA nodes."""
    files = read_pci_files(sysfs_root)
    base = os.path.join(sysfs_root, "class", "kfd", "kfd", "topology", "nodes")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return files
    for name in names:
        text = read_text(os.path.join(base, name, "properties"))
        if text is not None:
            files["class/kfd/kfd/topology/nodes/%s/properties" % name] = text
    return files


def gpus_without_driver(module, sysfs_root, vendor):
    try:
        return [gpu for gpu in pci_gpus(read_pci_files(sysfs_root)) if gpu["vendor"] == vendor]
    except GpuSysfsError as exc:
        module.warn("could not read PCI devices from sysfs: %s" % exc)
        return []


def probe_amd(module, text, sysfs_root, offline):
    if text is None:
        rocminfo = module.get_bin_path("rocminfo")
        if rocminfo is None:
            return None
        rc, out, err = module.run_command([rocminfo], environ_update=LANG_C)
        text = out + ("\n" + err if err else "")
        if rc != 0 and "ROCk module is NOT loaded" in text:
            present = gpus_without_driver(module, sysfs_root, "amd")
            if not present:
                return gpu_facts("none", [], driver_loaded=False,
                                 warnings=["rocminfo is installed but the amdgpu driver is not loaded and no AMD GPU is on the PCI bus"])
            module.fail_json(msg="rocminfo: ROCk module is NOT loaded but %d AMD GPU(s) are on the PCI bus (%s): load the amdgpu "
                                 "driver ('modprobe amdgpu', check dmesg) and re-run" % (len(present), ", ".join(g["pci_bus_id"] for g in present)))
        if rc != 0 and "Agent" not in text:
            module.fail_json(msg="rocminfo failed (rc=%d): %s" % (rc, text.strip()[:500]))
    parsed = parse_rocminfo(text)
    devices = parsed["gpus"]
    if not offline:
        try:
            devices = enrich_amd_devices(devices, read_kfd_files(sysfs_root))
        except GpuSysfsError as exc:
            module.warn("sysfs KFD topology not used: %s" % exc)
    return gpu_facts("amd", devices, driver_loaded=True, driver_version=parsed["rock_version"])


def probe_nvidia(module, text, sysfs_root="/sys", offline=True):
    if text is None:
        smi = module.get_bin_path("nvidia-smi")
        if smi is None:
            return None
        rc, out, err = module.run_command([smi, "-q", "-x"], environ_update=LANG_C)
        if rc != 0:
            present = gpus_without_driver(module, module.params["sysfs_root"] or "/sys", "nvidia")
            if not present:
                return gpu_facts("none", [], driver_loaded=False,
                                 warnings=["nvidia-smi is installed but fails and no NVIDIA GPU is on the PCI bus: %s" % (out + err).strip()[:200]])
            module.fail_json(msg="nvidia-smi failed (rc=%d) but %d NVIDIA GPU(s) are on the PCI bus: %s" % (rc, len(present), (out + err).strip()[:500]))
        text = out
    parsed = parse_nvidia_smi_xml(text)
    devices = parsed["gpus"]
    if any(dev.get("mig") for dev in devices):
        minors = module.params["mig_minors_output"]
        if minors is None and not offline:
            minors = read_text("/proc/driver/nvidia-caps/mig-minors")
        if minors is not None:
            apply_mig_minors(devices, parse_mig_minors(minors))
        else:
            parsed["warnings"].append("MIG instances without /proc/driver/nvidia-caps/mig-minors: gres.conf needs AutoDetect=nvml")
    if not offline:
        pci = read_pci_files(sysfs_root)
        for dev in devices:
            numa = pci.get("bus/pci/devices/%s/numa_node" % dev.get("pci_bus_id"))
            if dev.get("numa_node") is None and numa is not None and numa.strip().lstrip("-").isdigit() and int(numa) >= 0:
                dev["numa_node"] = int(numa)
    return gpu_facts("nvidia", devices, driver_loaded=True, driver_version=parsed["driver_version"], warnings=parsed["warnings"])


def numa_node_count(sysfs_root):
    """Number of online NUMA nodes (devices/system/node/online, e.g. "0-1"), or None."""
    text = read_text(os.path.join(sysfs_root, "devices", "system", "node", "online"))
    count = 0
    for part in (text or "").strip().split(","):
        bounds = part.split("-")
        if not part or not all(b.isdigit() for b in bounds) or len(bounds) > 2:
            return None
        count += int(bounds[-1]) - int(bounds[0]) + 1
    return count or None


def summary(facts):
    if not facts["count"] and not facts["devices"]:
        return "no GPU found on this host" + ("; " + "; ".join(facts["warnings"]) if facts["warnings"] else "")
    text = "%d %s GPU(s): %s (%s), GRES type %s" % (facts["count"], facts["vendor"].upper(), facts["model"], facts["arch"], facts["slurm_type"])
    mig_parents = set(dev["mig"]["parent_uuid"] for dev in facts["devices"] if dev.get("mig"))
    if mig_parents:
        text += ", MIG instances of %d GPU(s)" % len(mig_parents)
    if facts["partition_mode"] and facts["partition_mode"] != "SPX":
        text += ", %s partitions of %d package(s)" % (facts["partition_mode"], facts["physical_count"])
    skipped = [dev for dev in facts["devices"] if not dev.get("counted")]
    if skipped:
        text += "; not counted: %s" % ", ".join("%s (%s)" % (dev["model"], dev["not_counted_reason"]) for dev in skipped)
    return text


def main():
    module = AnsibleModule(
        argument_spec=dict(
            vendor=dict(type="str", default="auto", choices=["auto", "amd", "nvidia"]),
            rocminfo_output=dict(type="str"),
            nvidia_smi_output=dict(type="str"),
            mig_minors_output=dict(type="str"),
            expected_count=dict(type="int"),
            sysfs_root=dict(type="path"),
        ),
        mutually_exclusive=[("rocminfo_output", "nvidia_smi_output")],
        supports_check_mode=True,
    )
    params = module.params
    vendor = params["vendor"]
    offline = params["rocminfo_output"] is not None or params["nvidia_smi_output"] is not None
    sysfs_root = params["sysfs_root"] or "/sys"
    if (vendor == "amd" and params["nvidia_smi_output"] is not None) or (vendor == "nvidia" and params["rocminfo_output"] is not None):
        module.fail_json(msg="vendor=%s contradicts the captured output given" % vendor)
    facts = None
    try:
        if params["rocminfo_output"] is not None:
            facts = probe_amd(module, params["rocminfo_output"], sysfs_root, offline and not params["sysfs_root"])
        elif params["nvidia_smi_output"] is not None:
            facts = probe_nvidia(module, params["nvidia_smi_output"], sysfs_root, offline and not params["sysfs_root"])
        else:
            if vendor in ("auto", "amd"):
                facts = probe_amd(module, None, sysfs_root, False)
            if facts is None and vendor in ("auto", "nvidia"):
                facts = probe_nvidia(module, None, sysfs_root, False)
    except (RocminfoError, NvidiaSmiError) as exc:
        module.fail_json(msg=str(exc))
    if facts is not None:
        facts["numa_node_count"] = None if offline and not params["sysfs_root"] else numa_node_count(sysfs_root)
    if facts is None:
        facts = gpu_facts("none", [], driver_loaded=None,
                          warnings=["no GPU tool found (%s)" % {"auto": "neither rocminfo nor nvidia-smi", "amd": "rocminfo", "nvidia": "nvidia-smi"}[vendor]])
    msg = summary(facts)
    expected = params["expected_count"]
    if expected is not None and expected != facts["count"]:
        module.fail_json(msg="expected %d GPU(s) but found %d: %s" % (expected, facts["count"], msg), ansible_facts={"gpucluster_gpus": facts})
    module.exit_json(changed=False, msg=msg, ansible_facts={"gpucluster_gpus": facts})


if __name__ == "__main__":
    main()
