# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the text output of ``rocminfo``.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``parse_rocminfo(text, partial=False)`` returns::

    {driver_loaded, rock_version, runtime_version, agents: [...], gpus: [...]}

* ``agents``: every HSA agent block (``Agent N``), CPUs included:
  ``{agent, name, uuid, marketing_name, vendor_name, device_type, node, chip_id, bdfid,
  compute_units, memory_mib, isa}``.
* ``gpus``: one device dict per GPU agent, in agent order, ready for ``_gpu_models.gpu_facts``:
  ``{index, model, arch, memory_mib, uuid, bdf, pci_bus_id, numa_node, render_node,
  device_file, kfd_node, chip_id, compute_units, slurm_type, partition_mode,
  partitions_per_device, gcds_per_card, virtual_function, counted, not_counted_reason,
  physical_id}``.

Rules:

* CPU agents are not GPUs.  A GPU agent without a unique id (``Uuid: GPU-XX``, as rocminfo
  prints for integrated graphics such as "AMD Radeon Graphics") is listed with
  ``counted: False``.
* ``memory_mib`` is the size of the agent's first ``GLOBAL; FLAGS: COARSE GRAINED`` pool (its
  VRAM; for a CPX/NPS partition that is the partition's share).
* Compute partitions of one MI300X (CPX/QPX/DPX) are separate logical GPUs that share the
  package's ``Uuid``; ``physical_id`` groups them.  The two GCDs of an MI250X are two GPUs.
* ``bdf`` is the ``BDFID`` decoded to ``bus:device.function``; rocminfo does not print the PCI
  domain, so ``pci_bus_id``, ``numa_node`` and ``render_node`` are ``None`` here and are filled
  from sysfs by ``_gpu_sysfs.enrich_amd_devices``.
* ``ROCk module is NOT loaded`` and HSA initialisation failures raise ``RocminfoError`` with
  what to do.  A complete output ends with ``*** Done ***``; without ``partial=True`` an output
  that does not is refused as truncated.  ``partial=True`` accepts an excerpt of agent blocks.
"""

from __future__ import annotations

import re

from ansible_collections.gpucluster.training.plugins.module_utils._gpu_models import amd_model, partition_of
from ansible_collections.gpucluster.training.plugins.module_utils._parse_text import require_text


class RocminfoError(ValueError):
    """rocminfo output that cannot be understood, or that reports a driver/runtime failure."""


# Linear by construction: no two adjacent quantifiers can share characters, numbers are at most
# 18 digits (a longer one is no rocminfo field), fields are split with str.partition.
_AGENT_HEADER = re.compile(r"^\*{5,}[ \t]*\r?\n[ \t]*Agent[ \t]+(\d{1,9})[ \t]*\r?\n\*{5,}[ \t]*$", re.MULTILINE)
_NUM = re.compile(r"^(\d{1,18})(?!\d)(?:[ \t]*\(0x[0-9a-fA-F]{1,16}\))?")
_SIZE_KB = re.compile(r"^(\d{1,18})(?!\d)[ \t]*(?:\(0x[0-9a-fA-F]{1,16}\)[ \t]*)?KB$")
# rocminfo of a node with 64 CPX partitions is well under 1 MiB.
MAX_TEXT_CHARS = 16 * 1024 * 1024


def _top_field(line):
    """``  Key:   value`` (two-space indent, a letter first) -> (key, value), else None."""
    if not line.startswith("  ") or len(line) < 3 or not line[2].isalpha() or not line[2].isascii():
        return None
    key, sep, value = line[2:].partition(":")
    if not sep:
        return None
    return key, value.strip(" \t")


_ARCH = re.compile(r"^gfx[0-9a-f]{3,5}$")


def _int(value, what, agent):
    match = _NUM.match(value or "")
    if not match:
        raise RocminfoError("rocminfo: agent %s: %s %r is not a number" % (agent, what, value))
    return int(match.group(1))


def _check_failures(text):
    if re.search(r"ROCk module is NOT loaded", text):
        raise RocminfoError(
            "rocminfo: ROCk module is NOT loaded: the amdgpu kernel driver (ROCk/KFD) is not loaded on this host, "
            "so no AMD GPU can be used. Install the amdgpu-dkms driver, run 'modprobe amdgpu' (check dmesg for "
            "amdgpu errors, e.g. a blacklisted module or an unsupported kernel) and re-run.")
    failure = re.search(r"(hsa api call failure[^\n]*|HSA_STATUS_ERROR[A-Z_]*[^\n]*|Failed to get HSA[^\n]*)", text, re.IGNORECASE)
    if failure:
        raise RocminfoError(
            "rocminfo: the HSA runtime failed to initialise (%s). Check that /dev/kfd and /dev/dri/renderD* exist "
            "and are accessible to this user (groups 'video' and 'render'), that no container or cgroup hides "
            "them, and that the ROCm user-space version supports the installed driver." % failure.group(1).strip())


def _header_value(text, key):
    for line in text.splitlines():
        if line.startswith(key + ":"):
            value = line[len(key) + 1:].strip(" \t")
            return value or None
    return None


def _parse_agent(number, body):
    fields = {}
    pools = []
    isa = []
    section = None
    current_pool = None
    for raw in body.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        top = _top_field(line)
        if top:
            key, value = top[0].strip(), top[1]
            section = key
            current_pool = None
            if key not in fields:
                fields[key] = value
            continue
        stripped = line.strip()
        if section == "Pool Info":
            if re.match(r"^Pool \d+$", stripped):
                current_pool = {}
                pools.append(current_pool)
            elif current_pool is not None and ":" in stripped:
                key, value = stripped.split(":", 1)
                current_pool[key.strip()] = value.strip()
        elif section == "ISA Info" and stripped.startswith("Name:"):
            isa.append(stripped.split(":", 1)[1].strip())
    for required in ("Name", "Device Type"):
        if required not in fields:
            raise RocminfoError("rocminfo: agent %s has no '%s:' line (truncated or garbled output?)" % (number, required))
    device_type = fields["Device Type"].strip().upper()
    if device_type not in ("CPU", "GPU", "DSP", "AIE"):
        raise RocminfoError("rocminfo: agent %s: unknown Device Type %r" % (number, fields["Device Type"]))
    memory_kb = None
    for pool in pools:
        if "COARSE GRAINED" in pool.get("Segment", "").upper() and pool.get("Segment", "").upper().startswith("GLOBAL"):
            size = _SIZE_KB.match(pool.get("Size", ""))
            if not size:
                raise RocminfoError("rocminfo: agent %s: pool size %r is not '<n>(0x..) KB'" % (number, pool.get("Size")))
            memory_kb = int(size.group(1))
            break
    agent = {
        "agent": number,
        "name": fields["Name"],
        "uuid": fields.get("Uuid") or None,
        "marketing_name": fields.get("Marketing Name") or None,
        "vendor_name": fields.get("Vendor Name") or None,
        "device_type": device_type,
        "node": _int(fields["Node"], "Node", number) if "Node" in fields else None,
        "chip_id": _int(fields["Chip ID"], "Chip ID", number) if "Chip ID" in fields else None,
        "bdfid": _int(fields["BDFID"], "BDFID", number) if "BDFID" in fields else None,
        "compute_units": _int(fields["Compute Unit"], "Compute Unit", number) if "Compute Unit" in fields else None,
        "memory_mib": memory_kb // 1024 if memory_kb is not None else None,
        "isa": isa,
    }
    if device_type == "GPU":
        if not _ARCH.match(agent["name"]):
            raise RocminfoError("rocminfo: GPU agent %s: Name %r is not a gfx target such as gfx942" % (number, agent["name"]))
        for required in ("node", "compute_units"):
            if agent[required] is None:
                raise RocminfoError("rocminfo: GPU agent %s has no %s line (truncated or garbled output?)" % (number, required))
    return agent


def _bdf(bdfid):
    if bdfid is None:
        return None
    return "%02x:%02x.%x" % ((bdfid >> 8) & 0xFF, (bdfid >> 3) & 0x1F, bdfid & 0x7)


def _gpu_device(index, agent):
    info = amd_model(agent["marketing_name"], agent["chip_id"], agent["compute_units"])
    part = partition_of(info, agent["compute_units"])
    uuid = agent["uuid"]
    unique = bool(uuid) and not re.match(r"^GPU-X+$", uuid, re.IGNORECASE)
    integrated = (agent["marketing_name"] or "").strip() == "AMD Radeon Graphics" and not info["known"]
    counted = unique and not integrated
    reason = None
    if not unique:
        reason = "no unique id (Uuid %s): integrated graphics, not a training GPU" % (uuid or "missing")
    elif integrated:
        reason = "integrated 'AMD Radeon Graphics', not a training GPU"
    return {
        "index": index,
        "model": agent["marketing_name"] or agent["name"],
        "arch": agent["name"],
        "memory_mib": agent["memory_mib"],
        "uuid": uuid if unique else None,
        "bdf": _bdf(agent["bdfid"]),
        "pci_bus_id": None,
        "numa_node": None,
        "render_node": None,
        "device_file": "/dev/kfd",
        "kfd_node": agent["node"],
        "chip_id": "0x%04x" % agent["chip_id"] if agent["chip_id"] is not None else None,
        "compute_units": agent["compute_units"],
        "slurm_type": info["slug"],
        "partition_mode": part["mode"],
        "partitions_per_device": part["partitions_per_device"],
        "gcds_per_card": info["gcds_per_card"],
        "virtual_function": info["virtual_function"],
        "counted": counted,
        "not_counted_reason": reason,
        "physical_id": uuid if unique else "agent-%s" % agent["agent"],
    }


def parse_rocminfo(text, partial=False):
    """Parse ``rocminfo`` output; see the module docstring for the result and the rules."""
    require_text(text, MAX_TEXT_CHARS, RocminfoError, "rocminfo: expected the output as text, got %s",
                 "rocminfo: the output is %d characters, more than the %d rocminfo ever prints: not rocminfo output")
    if "\x00" in text:
        raise RocminfoError("rocminfo: output contains NUL bytes (binary data, not rocminfo output)")
    _check_failures(text)
    headers = list(_AGENT_HEADER.finditer(text))
    if not headers:
        if not text.strip():
            raise RocminfoError("rocminfo: empty output")
        raise RocminfoError("rocminfo: no 'Agent N' block found: this is not rocminfo output, or it was cut before the HSA Agents")
    if not partial and not re.search(r"^\*\*\* Done \*\*\*[ \t]*$", text, re.MULTILINE):
        raise RocminfoError("rocminfo: output is incomplete (no '*** Done ***' line at the end): truncated output?")
    agents = []
    seen = set()
    for pos, header in enumerate(headers):
        number = int(header.group(1))
        if number in seen:
            raise RocminfoError("rocminfo: agent %s appears twice (garbled output?)" % number)
        seen.add(number)
        end = headers[pos + 1].start() if pos + 1 < len(headers) else len(text)
        body = text[header.end():end]
        body = body.split("*** Done ***", 1)[0]
        agents.append(_parse_agent(number, body))
    gpus = [_gpu_device(index, agent) for index, agent in enumerate(a for a in agents if a["device_type"] == "GPU")]
    rock = re.search(r"^ROCk module(?: version (\S+))? is loaded", text, re.MULTILINE)
    return {
        "driver_loaded": True if rock else None,
        "rock_version": rock.group(1) if rock else None,
        "runtime_version": _header_value(text, "Runtime Version"),
        "agents": agents,
        "gpus": gpus,
    }
