# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU facts that only sysfs knows: KFD topology, DRM render nodes, PCI NUMA nodes.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

The caller (``gpu_info``) reads files and passes ``{relative path: file text}`` with paths
relative to the sysfs root, e.g.::

    class/kfd/kfd/topology/nodes/2/properties   "... location_id 9728\\ndomain 0\\ndrm_render_minor 128 ..."
    bus/pci/devices/0000:26:00.0/numa_node      "0\\n"
    bus/pci/devices/0000:26:00.0/vendor         "0x1002\\n"
    bus/pci/devices/0000:26:00.0/class          "0x120000\\n"

* ``parse_kfd_properties(text)``: one KFD node ``properties`` file -> ``{key: int}``.
* ``enrich_amd_devices(devices, files)``: fills ``pci_bus_id``, ``numa_node``, ``render_node``
  of rocminfo devices from the KFD node with the same id (rocminfo ``Node``).
* ``pci_gpus(files)``: display/accelerator-class PCI functions of AMD (0x1002) and NVIDIA
  (0x10de): tells "no GPU here" from "a GPU whose driver is not loaded".
"""

from __future__ import annotations

import re

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind, sysfs_int


class GpuSysfsError(ValueError):
    """A sysfs file whose content is not what the kernel writes there."""


_KFD_PROPS = re.compile(r"^class/kfd/kfd/topology/nodes/(\d+)/properties$")
_PCI_FILE = re.compile(r"^bus/pci/devices/([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])/(numa_node|vendor|class|device)$")
_VENDORS = {0x1002: "amd", 0x10DE: "nvidia"}
# PCI base class 0x03 (display) and 0x12 (processing accelerator, used by Instinct parts).
_GPU_CLASSES = (0x03, 0x12)


def parse_kfd_properties(text):
    """Parse a KFD topology node ``properties`` file (``key value`` per line, integers)."""
    if not isinstance(text, str):
        raise GpuSysfsError("kfd properties: expected text, got %s" % kind(text))
    props = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        # The kernel prints every property unsigned (%u / %llu): no sign, at most 20 digits.
        match = re.match(r"^\s*([a-z0-9_]+)\s+(\d{1,20})\s*$", line)
        if not match:
            raise GpuSysfsError("kfd properties: line %d %r is not '<key> <integer>'" % (number, line[:80]))
        props[match.group(1)] = int(match.group(2))
    return props


def _int_file(text, path):
    return sysfs_int(text, path, GpuSysfsError)


def _matching(files, pattern):
    """(match, path, text) of each file whose path the pattern matches."""
    if not isinstance(files, dict):
        raise GpuSysfsError("sysfs: expected a dict of {path: text}")
    for path, text in files.items():
        match = pattern.match(path)
        if match:
            yield match, path, text


def _pci_id(domain, location_id):
    return "%04x:%02x:%02x.%x" % (domain, (location_id >> 8) & 0xFF, (location_id >> 3) & 0x1F, location_id & 0x7)


def enrich_amd_devices(devices, files):
    """Return copies of rocminfo ``devices`` with PCI id, NUMA node and render node from sysfs."""
    nodes = {}
    for match, _path, text in _matching(files, _KFD_PROPS):
        nodes[int(match.group(1))] = parse_kfd_properties(text)
    result = []
    for dev in devices:
        dev = dict(dev)
        props = nodes.get(dev.get("kfd_node"))
        if props and "location_id" in props:
            pci = _pci_id(props.get("domain", 0), props["location_id"])
            dev["pci_bus_id"] = pci
            numa_path = "bus/pci/devices/%s/numa_node" % pci
            if numa_path in files:
                numa = _int_file(files[numa_path], numa_path)
                dev["numa_node"] = numa if numa >= 0 else None
            minor = props.get("drm_render_minor")
            if isinstance(minor, int) and minor > 0:
                dev["render_node"] = "/dev/dri/renderD%d" % minor
        result.append(dev)
    return result


def pci_gpus(files):
    """List GPU-class PCI functions: ``[{pci_bus_id, vendor, numa_node}]``, sorted by address."""
    functions = {}
    for match, path, text in _matching(files, _PCI_FILE):
        functions.setdefault(match.group(1).lower(), {})[match.group(2)] = _int_file(text, path)
    found = []
    for pci in sorted(functions):
        attrs = functions[pci]
        vendor = _VENDORS.get(attrs.get("vendor"))
        klass = attrs.get("class")
        if vendor and klass is not None and (klass >> 16) in _GPU_CLASSES:
            numa = attrs.get("numa_node")
            found.append({"pci_bus_id": pci, "vendor": vendor, "numa_node": numa if isinstance(numa, int) and numa >= 0 else None})
    return found
