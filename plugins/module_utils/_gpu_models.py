# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU model identification: the ONE table of GPU models (name, ids, Slurm GRES type slug).

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

* ``amd_model(marketing_name, chip_id=None, compute_units=None)`` and
  ``nvidia_model(product_name)`` return ``{slug, model, ...}`` for one device.  ``slug`` is the
  Slurm GRES type (``Gres=gpu:mi300x:8``): lower-case, ``[a-z0-9]`` only.
* ``model_slug(name, vendor=None)`` is the slug of a model name the tables know, or None;
  ``_hardware.preset_for_gpu_info`` maps it to a hardware preset.
* ``open_kernel_modules_only()`` / ``proprietary_kernel_modules_only()``: the NVIDIA slugs whose
  GPUs run only with the open / only with the proprietary kernel modules (the cuda role's
  ``__cuda_open_only_models`` / ``__cuda_proprietary_only_models``; a unit test keeps them equal).
* ``partition_of(info, compute_units)`` tells an MI300-class compute partition (SPX/DPX/QPX/CPX)
  from the number of compute units rocminfo shows for one logical GPU.
* ``gpu_facts(vendor, devices, ...)`` builds the ``gpucluster_gpus`` fact from device dicts
  produced by ``_rocminfo`` / ``_nvidia_smi`` (optionally enriched by ``_gpu_sysfs``).

Memory sizes and peak rates are NOT here: hardware reference figures live in ``_hardware.py``.
The figures below are identification data only (PCI device ids, compute-unit counts per full
device, XCDs/GCDs per package), each taken from the real outputs cited in
``tests/fixtures/SOURCES.md`` or AMD's published ids.
"""

from __future__ import annotations

import re

# AMD Instinct models, most specific first.  Matching is on the rocminfo "Marketing Name"
# (whole word, case-insensitive); ``chip_ids`` is the fallback when the marketing name is
# empty or generic ("AMD Radeon Graphics" is what some ROCm builds print for unknown ids).
# full_cus: compute units of one whole (SPX) device; xcds: compute dies per package (CPX
# partitions); gcds: GPUs (graphics compute dies) per card that the OS always shows as
# separate GPUs (MI250/MI250X).
_AMD_MODELS = (
    # slug,     regex on marketing name,     chip ids (PCI device id),  full_cus, xcds, gcds
    ("mi355x", r"MI355X", (0x75A3,), 256, 8, 1),
    ("mi350x", r"MI350X", (0x75A0,), 256, 8, 1),
    ("mi325x", r"MI325X", (0x74A5,), 304, 8, 1),
    ("mi308x", r"MI308X", (0x74A2,), 80, 4, 1),
    ("mi300x", r"MI300X", (0x74A1, 0x74B5), 304, 8, 1),  # 0x74b5: MI300X VF (SR-IOV guest)
    ("mi300a", r"MI300A", (0x74A0,), 228, 6, 1),
    ("mi250x", r"MI250X(?!/)", (0x7408,), 110, 1, 2),
    ("mi250", r"MI250(?!X)", (), 104, 1, 2),
    ("mi210", r"MI210", (0x740F,), 104, 1, 1),
    ("mi100", r"MI100", (0x738C, 0x738E), 120, 1, 1),
    ("mi60", r"MI60", (), 64, 1, 1),
    ("mi50", r"MI50", (), 60, 1, 1),
)

# Chip 0x740c is sold as MI250X and MI250 and rocminfo prints "AMD Instinct MI250X/MI250" for
# both: the compute units of one GCD tell them apart (110 on MI250X, 104 on MI250).
_MI250_FAMILY_CHIP = 0x740C
_MI250_FAMILY_NAME = re.compile(r"MI250X\s*/\s*MI250", re.IGNORECASE)

# NVIDIA datacenter models, most specific first, matched on nvidia-smi <product_name>.
# modules: the kernel modules the GPU runs with (NVIDIA driver installation guide, "Kernel
# Modules"; NVIDIA/open-gpu-kernel-modules README: the open modules support Turing and later):
# "open" only (Grace Hopper and Blackwell), "proprietary" only (Volta, Pascal: no GSP), or "any".
_NVIDIA_MODELS = (
    # slug,   regex on product name, modules
    ("gb200", r"GB200", "open"),
    ("gh200", r"GH200", "open"),
    ("b200", r"B200", "open"),
    ("b100", r"B100", "open"),
    ("h200", r"H200", "any"),
    ("h100", r"H100", "any"),
    ("h800", r"H800", "any"),
    ("h20", r"H20\b", "any"),
    ("a100", r"A100", "any"),
    ("a800", r"A800", "any"),
    ("a40", r"\bA40\b", "any"),
    ("a30", r"\bA30\b", "any"),
    ("a10g", r"\bA10G\b", "any"),
    ("a10", r"\bA10\b", "any"),
    ("l40s", r"\bL40S\b", "any"),
    ("l40", r"\bL40\b", "any"),
    ("l4", r"\bL4\b", "any"),
    ("v100", r"V100", "proprietary"),
    ("t4", r"\bT4\b", "any"),
    ("p100", r"P100", "proprietary"),
)

_PARTITION_NAMES = {1: "SPX", 2: "DPX", 3: "TPX", 4: "QPX"}
_VENDOR_WORDS = re.compile(r"\b(amd|nvidia|instinct|tesla|geforce|radeon|quadro)\b", re.IGNORECASE)


def slugify(name):
    """GRES type slug for a model name no table knows: vendor words dropped, ``[a-z0-9]`` only."""
    text = _VENDOR_WORDS.sub(" ", name if isinstance(name, str) else "")
    slug = re.sub(r"[^a-z0-9]", "", text.lower())
    return slug or "gpu"


def amd_model(marketing_name, chip_id=None, compute_units=None):
    """Identify an AMD GPU agent.

    Returns ``{slug, known, full_cus, xcds, gcds_per_card, virtual_function}``; ``known`` is
    False when the model is not in the table (the slug is then derived from the name).
    """
    name = marketing_name if isinstance(marketing_name, str) else ""
    entry = None
    if _MI250_FAMILY_NAME.search(name):
        slug = "mi250" if compute_units == 104 else "mi250x"
        entry = next(item for item in _AMD_MODELS if item[0] == slug)
    if entry is None:
        for item in _AMD_MODELS:
            if re.search(item[1], name, re.IGNORECASE):
                entry = item
                break
    if entry is None and chip_id is not None:
        if chip_id == _MI250_FAMILY_CHIP:
            slug = "mi250" if compute_units == 104 else "mi250x"
            entry = next(item for item in _AMD_MODELS if item[0] == slug)
        else:
            for item in _AMD_MODELS:
                if chip_id in item[2]:
                    entry = item
                    break
    vf = bool(re.search(r"\bVF\b", name)) or chip_id == 0x74B5
    if entry is None:
        return {"slug": slugify(name), "known": False, "full_cus": None, "xcds": 1, "gcds_per_card": 1, "virtual_function": vf}
    return {"slug": entry[0], "known": True, "full_cus": entry[3], "xcds": entry[4], "gcds_per_card": entry[5], "virtual_function": vf}


def partition_of(info, compute_units):
    """Compute-partition mode of one logical AMD GPU: ``{mode, partitions_per_device}``.

    ``mode`` is ``SPX``/``DPX``/``TPX``/``QPX``/``CPX`` for models with several XCDs, ``None``
    when it cannot be told (unknown model, no compute-unit count, or a count that is not a whole
    fraction of the full device).
    """
    full = info.get("full_cus")
    xcds = info.get("xcds") or 1
    if not full or not isinstance(compute_units, int) or compute_units <= 0 or xcds <= 1:
        return {"mode": None, "partitions_per_device": 1}
    if full % compute_units:
        return {"mode": None, "partitions_per_device": 1}
    parts = full // compute_units
    if parts > xcds or xcds % parts:
        return {"mode": None, "partitions_per_device": 1}
    mode = "CPX" if parts == xcds else _PARTITION_NAMES.get(parts)
    return {"mode": mode, "partitions_per_device": parts}


def nvidia_model(product_name):
    """Identify an NVIDIA GPU from its ``product_name``: ``{slug, known}``."""
    name = product_name if isinstance(product_name, str) else ""
    for slug, pattern, _modules in _NVIDIA_MODELS:
        if re.search(pattern, name, re.IGNORECASE):
            return {"slug": slug, "known": True}
    return {"slug": slugify(name), "known": False}


def model_slug(name, vendor=None):
    """Slug of a model name (marketing or product name) the tables know, else None.

    ``vendor`` (``amd`` / ``nvidia``) picks the table; without it AMD's is tried first.
    """
    if vendor in (None, "", "amd"):
        info = amd_model(name)
        if info["known"]:
            return info["slug"]
    if vendor in (None, "", "nvidia"):
        info = nvidia_model(name)
        if info["known"]:
            return info["slug"]
    return None


def known_slugs(vendor=None):
    """Every slug of the tables (of one vendor's table with ``vendor``), in table order."""
    amd = [item[0] for item in _AMD_MODELS]
    nvidia = [item[0] for item in _NVIDIA_MODELS]
    return {"amd": amd, "nvidia": nvidia}.get(vendor, amd + nvidia)


def open_kernel_modules_only():
    """NVIDIA slugs whose GPUs need the open kernel modules (sorted)."""
    return sorted(item[0] for item in _NVIDIA_MODELS if item[2] == "open")


def proprietary_kernel_modules_only():
    """NVIDIA slugs whose GPUs the open kernel modules do not support (sorted): before Turing."""
    return sorted(item[0] for item in _NVIDIA_MODELS if item[2] == "proprietary")


def _most_common(values):
    counts = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    if not counts:
        return None
    return sorted(counts.items(), key=lambda item: -item[1])[0][0]


def gpu_facts(vendor, devices, driver_loaded=True, driver_version=None, warnings=None):
    """Build the ``gpucluster_gpus`` fact.

    ``devices`` are device dicts with at least ``model``, ``arch``, ``memory_mib``,
    ``slurm_type``, ``counted`` and ``physical_id``.  ``count`` counts the devices usable for
    training (``counted``); ``physical_count`` the distinct physical packages behind them
    (partitions of one MI300X share its unique id; MIG instances share their parent GPU; the
    two GCDs of an MI250X card count as one card).
    """
    counted = [dev for dev in devices if dev.get("counted")]
    first = counted[0] if counted else {}
    physical = set()
    for dev in counted:
        physical.add(dev.get("physical_id") or dev.get("uuid") or dev.get("index"))
    physical_count = len(physical)
    gcds = first.get("gcds_per_card") or 1
    if gcds > 1 and counted:
        physical_count = -(-len(counted) // gcds)
    models = sorted(set(dev.get("model") for dev in counted if dev.get("model")))
    return {
        "vendor": vendor,
        "count": len(counted),
        "physical_count": physical_count,
        "model": _most_common([dev.get("model") for dev in counted]),
        "arch": _most_common([dev.get("arch") for dev in counted]),
        "memory_mib": min([dev["memory_mib"] for dev in counted if isinstance(dev.get("memory_mib"), int)] or [0]) or None,
        "slurm_type": _most_common([dev.get("slurm_type") for dev in counted]),
        "partition_mode": first.get("partition_mode"),
        "heterogeneous": len(models) > 1,
        "driver_loaded": driver_loaded,
        "driver_version": driver_version,
        "devices": devices,
        "warnings": list(warnings or []),
    }
