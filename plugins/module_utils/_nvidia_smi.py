# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the XML of ``nvidia-smi -q -x``.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``parse_nvidia_smi_xml(text)`` returns::

    {driver_version, cuda_version, attached_gpus, gpus: [...], warnings: [...]}

``gpus`` holds one device dict per GPU usable for training, ready for
``_gpu_models.gpu_facts``: ``{index, model, arch, memory_mib, uuid, pci_bus_id, numa_node,
render_node, device_file, slurm_type, mig, counted, physical_id, virtualization_mode}``.

* A GPU in MIG mode (``<current_mig>Enabled``) is represented by its MIG instances (what Slurm's
  NVML autodetection and CUDA see): one device per ``<mig_device>`` with ``mig:
  {parent_uuid, parent_index, gpu_instance_id, compute_instance_id, multiprocessor_count}``, its
  own ``memory_mib`` and ``physical_id`` = the parent GPU's uuid.  MIG enabled with no instance
  created yields no device and a warning (the GPU is unusable until instances exist).
  ``mig.profile`` is the MIG profile name (``1g.10gb``: compute slices from the SM count and the
  architecture's SMs per slice, memory in GB rounded up), None for an architecture without a
  known slice size; ``mig.cap_files`` (set by ``apply_mig_minors``) are the
  ``/dev/nvidia-caps/nvidia-cap<N>`` files of its GPU and compute instance.
* ``pci_bus_id`` is normalised to sysfs form (``0000:01:00.0``); ``device_file`` is
  ``/dev/nvidia<minor_number>``; ``arch`` is ``<product_architecture>`` when present.
* ``attached_gpus`` different from the number of ``<gpu>`` elements is reported in
  ``warnings`` (an edited capture); XML that does not parse, a root that is not
  ``nvidia_smi_log``, entity declarations, or a ``<gpu>`` without product name or uuid raise
  ``NvidiaSmiError``.  A negative ``minor_number`` (``-1``: no device node) is refused.

``parse_mig_minors(text)`` parses ``/proc/driver/nvidia-caps/mig-minors`` (``gpu<minor>/gi<g>/access
<N>``, ``gpu<minor>/gi<g>/ci<c>/access <N>``) into ``{(gpu minor, gi, ci or None): N}``;
``apply_mig_minors(gpus, minors)`` adds each MIG device's ``cap_files`` from it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind
from ansible_collections.gpucluster.training.plugins.module_utils._gpu_models import nvidia_model


class NvidiaSmiError(ValueError):
    """nvidia-smi XML that cannot be understood, or that reports a driver failure."""


# SMs of one MIG compute slice per architecture (NVIDIA MIG user guide, supported profiles:
# A100/A30 1g profiles have 14 SMs, H100/H200 1g profiles 16).
MIG_SMS_PER_SLICE = {"ampere": 14, "hopper": 16}


def mig_profile(arch, multiprocessors, memory_mib):
    """``"1g.10gb"`` from the instance's SM count and memory; None when it cannot be named."""
    per_slice = MIG_SMS_PER_SLICE.get(str(arch or "").lower())
    if not per_slice or not multiprocessors or not memory_mib or multiprocessors % per_slice:
        return None
    return "%dg.%dgb" % (multiprocessors // per_slice, -(-memory_mib // 1024))


def _text(elem, path):
    if elem is None:
        return None
    found = elem.find(path)
    if found is None or found.text is None:
        return None
    value = found.text.strip()
    return value or None


def _mib(value, where):
    if value is None or value in ("N/A", "[N/A]"):
        return None
    match = re.match(r"^(\d{1,9})[ \t]*MiB$", value)
    if not match:
        raise NvidiaSmiError("nvidia-smi: %s %r is not '<n> MiB'" % (where, value[:40]))
    if int(match.group(1)) == 0:
        raise NvidiaSmiError("nvidia-smi: %s is 0 MiB: no GPU has no memory (garbled output?)" % where)
    return int(match.group(1))


def _pci(value):
    if not value:
        return None
    match = re.match(r"^(?:[0-9A-Fa-f]{4})?([0-9A-Fa-f]{4}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$", value)
    if not match:
        raise NvidiaSmiError("nvidia-smi: PCI bus id %r is not 'DDDDDDDD:BB:DD.F'" % value)
    return "%s:%s:%s.%s" % tuple(part.lower() for part in match.groups())


def _int_or_none(value, where):
    if value is None or value in ("N/A", "[N/A]"):
        return None
    if not re.match(r"^-?\d{1,9}$", value):
        raise NvidiaSmiError("nvidia-smi: %s %r is not a number" % (where, value[:40]))
    return int(value)


def _check_text(text):
    if not isinstance(text, str):
        raise NvidiaSmiError("nvidia-smi: expected the XML as text, got %s" % kind(text))
    stripped = text.strip()
    if not stripped:
        raise NvidiaSmiError("nvidia-smi: empty output")
    if re.search(r"couldn't communicate with the NVIDIA driver|NVIDIA-SMI has failed", stripped):
        raise NvidiaSmiError(
            "nvidia-smi: the NVIDIA driver is not loaded or does not answer (%s). Install the driver matching this "
            "kernel (DKMS), load it with 'modprobe nvidia' (check dmesg and Secure Boot module signing) and re-run."
            % stripped.splitlines()[0][:200])
    if "No devices were found" in stripped and not stripped.startswith("<"):
        raise NvidiaSmiError("nvidia-smi: 'No devices were found': the driver is loaded but sees no GPU")
    if "<!ENTITY" in stripped:
        raise NvidiaSmiError("nvidia-smi: XML with entity declarations is refused (nvidia-smi never writes them)")
    if not stripped.startswith("<"):
        raise NvidiaSmiError("nvidia-smi: output is not XML (run 'nvidia-smi -q -x'): %r" % stripped[:80])


def parse_nvidia_smi_xml(text):
    """Parse ``nvidia-smi -q -x`` output; see the module docstring for the result."""
    _check_text(text)
    try:
        root = ET.fromstring(text.strip().encode("utf-8"))
    except (ET.ParseError, ValueError, UnicodeError, LookupError) as exc:  # LookupError: an unknown encoding= declared
        raise NvidiaSmiError("nvidia-smi: the XML does not parse (%s): truncated or garbled output?" % exc)
    except RecursionError:
        raise NvidiaSmiError("nvidia-smi: the XML nests too deeply to be nvidia-smi output")
    if root.tag != "nvidia_smi_log":
        raise NvidiaSmiError("nvidia-smi: root element is <%s>, expected <nvidia_smi_log>" % root.tag)
    warnings = []
    attached = _int_or_none(_text(root, "attached_gpus"), "attached_gpus")
    gpu_elems = root.findall("gpu")
    if attached is not None and attached != len(gpu_elems):
        warnings.append("attached_gpus is %d but the XML has %d <gpu> element(s): an edited or partial capture" % (attached, len(gpu_elems)))
    devices = []
    for position, gpu in enumerate(gpu_elems):
        name = _text(gpu, "product_name")
        uuid = _text(gpu, "uuid")
        if not name or not uuid:
            raise NvidiaSmiError("nvidia-smi: <gpu> number %d has no product_name or uuid (truncated or garbled output?)" % position)
        pci = _pci(gpu.get("id") or _text(gpu, "pci/pci_bus_id"))
        minor = _int_or_none(_text(gpu, "minor_number"), "minor_number")
        if minor is not None and minor < 0:
            raise NvidiaSmiError("nvidia-smi: GPU %s (%s) has minor_number %d: no /dev/nvidia device node, the GPU cannot be "
                                 "given to jobs (driver or container without the device?)" % (position, uuid, minor))
        numa = _int_or_none(_text(gpu, "numa_node") or _text(gpu, "pci/numa_node"), "numa_node")
        base = {
            "model": name,
            "arch": _text(gpu, "product_architecture"),
            "uuid": uuid,
            "pci_bus_id": pci,
            "numa_node": numa if numa is None or numa >= 0 else None,
            "render_node": None,
            "device_file": "/dev/nvidia%d" % minor if minor is not None else None,
            "virtualization_mode": _text(gpu, "gpu_virtualization_mode/virtualization_mode"),
            "physical_id": uuid,
            "counted": True,
            "not_counted_reason": None,
            "mig": None,
        }
        mig_mode = (_text(gpu, "mig_mode/current_mig") or "").lower()
        if mig_mode == "enabled":
            instances = gpu.findall("mig_devices/mig_device")
            if not instances:
                warnings.append("GPU %s (%s) is in MIG mode with no MIG instance: no CUDA device until instances are created" % (position, uuid))
            for mig in instances:
                dev = dict(base)
                dev["memory_mib"] = _mib(_text(mig, "fb_memory_usage/total"), "MIG fb_memory_usage/total")
                dev["mig"] = {
                    "parent_uuid": uuid,
                    "parent_index": position,
                    "index": _int_or_none(_text(mig, "index"), "mig index"),
                    "gpu_instance_id": _int_or_none(_text(mig, "gpu_instance_id"), "gpu_instance_id"),
                    "compute_instance_id": _int_or_none(_text(mig, "compute_instance_id"), "compute_instance_id"),
                    "multiprocessor_count": _int_or_none(_text(mig, "device_attributes/shared/multiprocessor_count"), "multiprocessor_count"),
                    "parent_minor": minor,
                    "cap_files": None,
                }
                dev["mig"]["profile"] = mig_profile(base["arch"], dev["mig"]["multiprocessor_count"], dev["memory_mib"])
                if dev["mig"]["gpu_instance_id"] is None or dev["mig"]["gpu_instance_id"] < 0 \
                        or dev["mig"]["compute_instance_id"] is None or dev["mig"]["compute_instance_id"] < 0:
                    raise NvidiaSmiError("nvidia-smi: MIG device of GPU %s has no valid gpu_instance_id/compute_instance_id" % uuid)
                devices.append(dev)
        else:
            dev = dict(base)
            dev["memory_mib"] = _mib(_text(gpu, "fb_memory_usage/total"), "fb_memory_usage/total")
            devices.append(dev)
    for index, dev in enumerate(devices):
        dev["index"] = index
    for dev in devices:
        dev["slurm_type"] = nvidia_model(dev["model"])["slug"]
    return {
        "driver_version": _text(root, "driver_version"),
        "cuda_version": _text(root, "cuda_version"),
        "attached_gpus": attached,
        "gpus": devices,
        "warnings": warnings,
    }


def parse_mig_minors(text):
    """``/proc/driver/nvidia-caps/mig-minors`` -> ``{(gpu minor, gi, ci or None): cap minor}``."""
    if not isinstance(text, str):
        raise NvidiaSmiError("mig-minors: expected text, got %s" % kind(text))
    minors = {}
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2 or not fields[1].isdigit():
            raise NvidiaSmiError("mig-minors: line %d %r is not '<name> <minor>'" % (number, line[:80]))
        if fields[0] in ("config", "monitor"):
            continue
        match = re.match(r"^gpu(\d+)/gi(\d+)(?:/ci(\d+))?/access$", fields[0])
        if not match:
            raise NvidiaSmiError("mig-minors: line %d: unknown entry %r" % (number, fields[0][:60]))
        key = (int(match.group(1)), int(match.group(2)), int(match.group(3)) if match.group(3) is not None else None)
        minors[key] = int(fields[1])
    if not minors:
        raise NvidiaSmiError("mig-minors: no gpu<N>/gi<G>/access entry: not /proc/driver/nvidia-caps/mig-minors")
    return minors


def apply_mig_minors(gpus, minors):
    """Set ``mig.cap_files`` of every MIG device from ``parse_mig_minors``; a missing entry raises."""
    for dev in gpus:
        mig = dev.get("mig")
        if not mig:
            continue
        parent = mig.get("parent_minor")
        gi_key = (parent, mig["gpu_instance_id"], None)
        ci_key = (parent, mig["gpu_instance_id"], mig["compute_instance_id"])
        if parent is None or gi_key not in minors or ci_key not in minors:
            raise NvidiaSmiError("mig-minors has no entry for GPU minor %s GPU instance %s compute instance %s"
                                 % (parent, mig["gpu_instance_id"], mig["compute_instance_id"]))
        mig["cap_files"] = ["/dev/nvidia-caps/nvidia-cap%d" % minors[gi_key], "/dev/nvidia-caps/nvidia-cap%d" % minors[ci_key]]
    return gpus
