# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Hardware reference figures: GPU presets and network link rates.

PRIVATE to the collection: not a public API, may change without notice.

This is the ONE place for GPU memory, peak dense TFLOP/s, FP8 support, intra-node
interconnect bandwidth and network link rates. The parallel-layout planner
(``_planner.py``) reads the GPU presets; cluster validation reads the link rates.
Every figure carries its source in the ``sources`` field of its entry.

Conventions
- ``memory_gib``: HBM capacity in GiB (2**30 bytes). HBM stacks are binary sized: the
  vendors' "192 GB" for MI300X is 192 GiB (rocm-smi reports ``VRAM Total Memory (B):
  206158430208`` = 192 * 2**30; the ROCm GPU specifications table lists VRAM in GiB).
  The usable figure is a little lower (ECC/driver reservations); when the probe's
  ``memory_mib`` is known the planner uses it instead.
- ``bf16_tflops`` / ``fp8_tflops``: peak DENSE (no 2:4 sparsity) matrix TFLOP/s, as the
  vendors list them. ``fp8_tflops`` is None where the GPU has no FP8 matrix unit.
- ``interconnect_gbs``: peak aggregate (bidirectional) GPU-to-GPU bandwidth per GPU inside
  one node, GB/s (1e9 bytes/s). Collective-bandwidth estimates use half of it (one
  direction).
- ``unit``: what one entry describes. MI250X is one OAM card with two GCDs; ROCm, Slurm
  and PyTorch see each GCD as one GPU, so the ``mi250x`` preset the planner uses is PER
  GCD, and ``mi250x-card`` holds the per-card figures it was derived from.
- Link rates are in Gb/s (1e9 bits/s) of data per port, as ``ibstat``/sysfs ``rate``
  report them.
"""

from __future__ import annotations

import copy

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind, to_bool, to_float
from ansible_collections.gpucluster.training.plugins.module_utils._gpu_models import model_slug, slugify


class HardwareError(ValueError):
    """An unknown preset, or a GPU description that cannot be understood."""


_AMD_SPECS = "https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html"
_AMD_MI300 = "https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi300.html"
_AMD_MI250 = "https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi250.html"
_AMD_MI300X_DS = (
    "https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/"
    "amd-instinct-mi300x-data-sheet.pdf"
)
_AMD_MI325X_DS = (
    "https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/product-briefs/"
    "instinct-mi325x-datasheet.pdf"
)
_AMD_MI250X_DS = (
    "https://www.amd.com/content/dam/amd/en/documents/instinct-business-docs/product-briefs/"
    "amd-instinct-mi250x-data-sheet.pdf"
)
_AMD_MI210_DS = (
    "https://www.amd.com/content/dam/amd/en/documents/instinct-business-docs/product-briefs/"
    "instinct-mi210-brochure.pdf"
)
_AMD_MI100_DS = (
    "https://www.amd.com/system/files/documents/instinct-mi100-brochure.pdf"
)
_NV_A100_DS = (
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
)
_NV_H100_DS = "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet"
_NV_HOPPER_WP = "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper"
_NV_H200 = "https://www.nvidia.com/en-us/data-center/h200/"
_PLANNER_REF = "project docs: planner-reference.md section 5 (hardware, dense)"

# The families whose members differ in memory (and name): the base member, the others below as
# dict(base, <what differs>).
_MI300X = {
    "vendor": "amd",
    "name": "AMD Instinct MI300X",
    "arch": "gfx942",
    "unit": "card (one OAM, one GPU to ROCm in SPX mode)",
    "memory_gib": 192,
    "memory_bandwidth_tbs": 5.3,
    "bf16_tflops": 1307.4,
    "fp8_tflops": 2614.9,
    "fp8": True,
    "interconnect": "xgmi",
    # 7 Infinity Fabric links x 128 GB/s (bidirectional) = 896 GB/s per GPU.
    "interconnect_links": 7,
    "interconnect_link_gbs": 128,
    "interconnect_gbs": 896,
    "slurm_types": ("mi300x",),
    "sources": (_AMD_MI300X_DS, _AMD_MI300, _AMD_SPECS, _PLANNER_REF),
}
_A100_40GB = {
    "vendor": "nvidia",
    "name": "NVIDIA A100-SXM4-40GB",
    "arch": "sm_80",
    "unit": "card (SXM4)",
    "memory_gib": 40,
    "memory_bandwidth_tbs": 1.555,
    "bf16_tflops": 312.0,
    "fp8_tflops": None,
    "fp8": False,
    "interconnect": "nvlink",
    # NVLink 3: 12 links x 50 GB/s = 600 GB/s (data sheet).
    "interconnect_links": 12,
    "interconnect_link_gbs": 50,
    "interconnect_gbs": 600,
    "slurm_types": ("a100",),
    "sources": (_NV_A100_DS, _PLANNER_REF),
}
_H100 = {
    "vendor": "nvidia",
    "name": "NVIDIA H100 SXM5 80GB",
    "arch": "sm_90",
    "unit": "card (SXM5)",
    "memory_gib": 80,
    "memory_bandwidth_tbs": 3.35,
    "bf16_tflops": 989.4,
    "fp8_tflops": 1978.9,
    "fp8": True,
    "interconnect": "nvlink",
    # NVLink 4: 18 links x 50 GB/s = 900 GB/s (data sheet, Hopper white paper).
    "interconnect_links": 18,
    "interconnect_link_gbs": 50,
    "interconnect_gbs": 900,
    "slurm_types": ("h100",),
    "sources": (_NV_H100_DS, _NV_HOPPER_WP, _PLANNER_REF),
}

# GPU presets. Keys are the names the planner's ``gpu`` option accepts.
GPUS = {
    "mi300x": _MI300X,
    # Same CDNA 3 die (compute) and Infinity Fabric as the MI300X; HBM3e.
    "mi325x": dict(_MI300X, name="AMD Instinct MI325X", unit="card (one OAM)", memory_gib=256, memory_bandwidth_tbs=6.0,
                   slurm_types=("mi325x",), sources=(_AMD_MI325X_DS, _AMD_SPECS, _PLANNER_REF)),
    # Per GCD: what ROCm, Slurm (one GRES per /dev/dri/renderD*) and torch see as one GPU.
    # Derived from the card figures below by halving (two GCDs per OAM).
    "mi250x": {
        "vendor": "amd",
        "name": "AMD Instinct MI250X (one GCD)",
        "arch": "gfx90a",
        "unit": "GCD (half of one MI250X card; the planner's unit)",
        "memory_gib": 64,
        "memory_bandwidth_tbs": 1.6,
        "bf16_tflops": 191.5,
        "fp8_tflops": None,
        "fp8": False,
        "interconnect": "xgmi",
        # Links run at 25 GT/s, 50 GB/s per x16 link (ROCm mi250 page); 8 external links
        # per card = 800 GB/s peak aggregate (data sheet), half per GCD.
        "interconnect_links": 4,
        "interconnect_link_gbs": 100,
        "interconnect_gbs": 400,
        "slurm_types": ("mi250x",),
        "sources": (_AMD_MI250X_DS, _AMD_MI250, _AMD_SPECS, _PLANNER_REF),
    },
    "mi250x-card": {
        "vendor": "amd",
        "name": "AMD Instinct MI250X (card, two GCDs)",
        "arch": "gfx90a",
        "unit": "card (two GCDs; the planner uses the per-GCD preset mi250x)",
        "memory_gib": 128,
        "memory_bandwidth_tbs": 3.2,
        "bf16_tflops": 383.0,
        "fp8_tflops": None,
        "fp8": False,
        "interconnect": "xgmi",
        "interconnect_links": 8,
        "interconnect_link_gbs": 100,
        "interconnect_gbs": 800,
        "slurm_types": (),
        "sources": (_AMD_MI250X_DS, _AMD_MI250, _PLANNER_REF),
    },
    # Beyond the list, so that probed mi210 / mi100 nodes map to a preset.
    "mi210": {
        "vendor": "amd",
        "name": "AMD Instinct MI210",
        "arch": "gfx90a",
        "unit": "card (PCIe, one GCD)",
        "memory_gib": 64,
        "memory_bandwidth_tbs": 1.6,
        "bf16_tflops": 181.0,
        "fp8_tflops": None,
        "fp8": False,
        "interconnect": "xgmi",
        # Up to 3 Infinity Fabric links per card via bridge, 100 GB/s each (brochure).
        "interconnect_links": 3,
        "interconnect_link_gbs": 100,
        "interconnect_gbs": 300,
        "slurm_types": ("mi210",),
        "sources": (_AMD_MI210_DS, _AMD_SPECS),
    },
    "mi100": {
        "vendor": "amd",
        "name": "AMD Instinct MI100",
        "arch": "gfx908",
        "unit": "card (PCIe)",
        "memory_gib": 32,
        "memory_bandwidth_tbs": 1.2288,
        "bf16_tflops": 92.3,
        "fp8_tflops": None,
        "fp8": False,
        "interconnect": "xgmi",
        # 3 Infinity Fabric links x 92 GB/s = 276 GB/s peak (brochure).
        "interconnect_links": 3,
        "interconnect_link_gbs": 92,
        "interconnect_gbs": 276,
        "slurm_types": ("mi100",),
        "sources": (_AMD_MI100_DS, _AMD_SPECS),
    },
    "a100-40gb": _A100_40GB,
    # Same A100 die and NVLink 3 as the 40 GB card; HBM2e.
    "a100-80gb": dict(_A100_40GB, name="NVIDIA A100-SXM4-80GB", memory_gib=80, memory_bandwidth_tbs=2.039),
    "h100": _H100,
    # Same Hopper die (compute) and NVLink 4 as the H100; HBM3e.
    "h200": dict(_H100, name="NVIDIA H200 SXM 141GB", unit="card (SXM)", memory_gib=141, memory_bandwidth_tbs=4.8,
                 slurm_types=("h200",), sources=(_NV_H200, _NV_HOPPER_WP, _PLANNER_REF)),
}

# Network link rates per port, Gb/s of data. InfiniBand 4x ports (what HCAs expose);
# RoCE by Ethernet speed. Validation (rdma / nccl bandwidth checks) compares measured
# bus bandwidth against these.
_IBTA = "https://www.infinibandta.org/infiniband-roadmap/"
_IEEE8023 = "https://standards.ieee.org/ieee/802.3/10422/ (IEEE 802.3 Ethernet)"
LINK_RATES = {
    "ib-sdr": {"fabric": "infiniband", "gbps": 10, "sources": (_IBTA,)},
    "ib-ddr": {"fabric": "infiniband", "gbps": 20, "sources": (_IBTA,)},
    "ib-qdr": {"fabric": "infiniband", "gbps": 40, "sources": (_IBTA,)},
    "ib-fdr": {"fabric": "infiniband", "gbps": 56, "sources": (_IBTA,)},
    "ib-edr": {"fabric": "infiniband", "gbps": 100, "sources": (_IBTA,)},
    "ib-hdr100": {"fabric": "infiniband", "gbps": 100, "sources": (_IBTA,)},
    "ib-hdr": {"fabric": "infiniband", "gbps": 200, "sources": (_IBTA,)},
    "ib-ndr200": {"fabric": "infiniband", "gbps": 200, "sources": (_IBTA,)},
    "ib-ndr": {"fabric": "infiniband", "gbps": 400, "sources": (_IBTA,)},
    "ib-xdr": {"fabric": "infiniband", "gbps": 800, "sources": (_IBTA,)},
    "roce-25g": {"fabric": "ethernet", "gbps": 25, "sources": (_IEEE8023,)},
    "roce-50g": {"fabric": "ethernet", "gbps": 50, "sources": (_IEEE8023,)},
    "roce-100g": {"fabric": "ethernet", "gbps": 100, "sources": (_IEEE8023,)},
    "roce-200g": {"fabric": "ethernet", "gbps": 200, "sources": (_IEEE8023,)},
    "roce-400g": {"fabric": "ethernet", "gbps": 400, "sources": (_IEEE8023,)},
    "roce-800g": {"fabric": "ethernet", "gbps": 800, "sources": (_IEEE8023,)},
}

# Short names people write (and that ibstat prints next to the rate) -> LINK_RATES key.
LINK_ALIASES = {
    "sdr": "ib-sdr",
    "ddr": "ib-ddr",
    "qdr": "ib-qdr",
    "fdr": "ib-fdr",
    "edr": "ib-edr",
    "hdr100": "ib-hdr100",
    "hdr": "ib-hdr",
    "ndr200": "ib-ndr200",
    "ndr": "ib-ndr",
    "xdr": "ib-xdr",
    "100g": "roce-100g",
    "200g": "roce-200g",
    "400g": "roce-400g",
    "roce100": "roce-100g",
    "roce200": "roce-200g",
    "roce400": "roce-400g",
}

# One NIC per GPU at 400 Gb/s (ConnectX-7 class) is the reference the planner assumes for
# traffic leaving a node when the caller names no link.
DEFAULT_INTERNODE_LINK = "ib-ndr"

MIB = 1024 * 1024
GIB = 1024 * MIB


def gpu_names():
    """Sorted names of the GPU presets."""
    return sorted(GPUS)


def gpu_preset(name):
    """A copy of one GPU preset by name (case-insensitive; ``_`` and spaces as ``-``)."""
    if not isinstance(name, str):
        raise HardwareError("GPU preset name must be a string, got %r" % (name,))
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    if key not in GPUS:
        raise HardwareError(
            "unknown GPU preset %r: known presets are %s" % (name, ", ".join(gpu_names()))
        )
    entry = copy.deepcopy(GPUS[key])
    entry["preset"] = key
    return entry


def link_rate_gbps(name):
    """Data rate of a link name (``ndr``, ``ib-hdr``, ``roce-400g``, ``400g``...) in Gb/s."""
    if not isinstance(name, str):
        raise HardwareError("link name must be a string, got %r" % (name,))
    key = name.strip().lower().replace("_", "-")
    key = LINK_ALIASES.get(key, key)
    if key not in LINK_RATES:
        raise HardwareError(
            "unknown link %r: known links are %s"
            % (name, ", ".join(sorted(set(LINK_RATES) | set(LINK_ALIASES))))
        )
    return LINK_RATES[key]["gbps"]


def link_bytes_per_s(name):
    """One direction of a link, bytes/s."""
    return link_rate_gbps(name) * 1e9 / 8.0


def preset_for_gpu_info(info):
    """Map gpu_info facts (``gpucluster_gpus``) to a preset name, or None.

    Uses ``slurm_type`` first (``mi300x``, ``a100``, ``h100``...), then the model the
    ``_gpu_models`` table finds in the ``model`` string; a preset applies to the model slugs in
    its ``slurm_types``. ``a100`` is split into 40 and 80 GB by ``memory_mib``.
    """
    if not isinstance(info, dict):
        raise HardwareError("gpu_info facts must be a dict, got %s" % kind(info))
    memory_mib = info.get("memory_mib")
    try:
        memory_mib = int(memory_mib) if memory_mib not in (None, "") else None
    except (TypeError, ValueError, OverflowError):
        raise HardwareError("gpu_info memory_mib must be an integer, got %r" % (memory_mib,))
    candidates = []
    if info.get("slurm_type"):
        candidates.append(slugify(str(info["slurm_type"])))
    if info.get("model"):
        vendor = info.get("vendor") if info.get("vendor") in ("amd", "nvidia") else None
        slug = model_slug(str(info["model"]), vendor)
        if slug:
            candidates.append(slug)
    for cand in candidates:
        if cand == "a100":
            if memory_mib is not None and memory_mib > 60 * 1024:
                return "a100-80gb"
            return "a100-40gb"
        for key, entry in GPUS.items():
            if cand == slugify(key) or cand in entry["slurm_types"]:
                return key
    return None


def resolve_gpu(gpu):
    """Turn the planner's ``gpu`` input into one dict the planner uses.

    ``gpu`` may be:
    - a preset name (``mi300x``);
    - an explicit dict with ``memory_gib`` (or ``memory_mib``) and ``bf16_tflops``, and
      optionally ``fp8_tflops``, ``fp8``, ``interconnect_gbs``, ``name``; a ``preset`` key
      starts from that preset and overrides it;
    - gpu_info facts (``gpucluster_gpus``: vendor, count, model, arch, memory_mib,
      slurm_type): mapped to a preset, with the probed memory used as the memory.

    Returns a dict with ``preset`` (or None), ``name``, ``memory_gib``, ``bf16_tflops``,
    ``fp8_tflops``, ``fp8``, ``interconnect_gbs``, ``source`` and ``warnings``.
    """
    warnings = []
    if isinstance(gpu, str):
        entry = gpu_preset(gpu)
        entry["source"] = "preset"
        entry["warnings"] = warnings
        return entry
    if not isinstance(gpu, dict):
        raise HardwareError(
            "gpu must be a preset name, a dict of figures or gpu_info facts, got %s"
            % kind(gpu)
        )
    is_facts = "slurm_type" in gpu or ("vendor" in gpu and "count" in gpu)
    if is_facts and "preset" not in gpu and "bf16_tflops" not in gpu:
        key = preset_for_gpu_info(gpu)
        memory_mib = gpu.get("memory_mib")
        if key is None:
            if memory_mib in (None, ""):
                raise HardwareError(
                    "gpu_info facts name no known GPU (slurm_type %r, model %r) and no "
                    "memory_mib: give a preset or explicit figures"
                    % (gpu.get("slurm_type"), gpu.get("model"))
                )
            entry = {
                "preset": None,
                "vendor": gpu.get("vendor"),
                "name": gpu.get("model") or gpu.get("slurm_type") or "unknown GPU",
                "memory_gib": None,
                "bf16_tflops": None,
                "fp8_tflops": None,
                "fp8": False,
                "interconnect_gbs": None,
                "sources": (),
            }
            warnings.append(
                "GPU %r has no preset: memory from the probe, no peak TFLOP/s (throughput "
                "not estimated), FP8 assumed unsupported" % (entry["name"],)
            )
        else:
            entry = gpu_preset(key)
        entry["source"] = "gpu_info"
        if memory_mib not in (None, ""):
            try:
                probed = int(memory_mib) / 1024.0
            except (TypeError, ValueError, OverflowError):
                raise HardwareError("gpu_info memory_mib must be an integer, got %r"
                                    % (memory_mib,))
            if probed <= 0:
                raise HardwareError("gpu_info memory_mib must be positive, got %r"
                                    % (memory_mib,))
            nominal = entry.get("memory_gib")
            if nominal and probed < 0.8 * nominal:
                warnings.append(
                    "probed memory %.1f GiB is well below the %s preset's %s GiB: a "
                    "partitioned GPU (CPX/NPS, MIG)? peak TFLOP/s of the preset may be too "
                    "high" % (probed, entry["preset"], nominal)
                )
            entry["memory_gib"] = probed
        entry["warnings"] = warnings
        return entry
    # Explicit figures, optionally on top of a preset.
    if "preset" in gpu and gpu["preset"] not in (None, ""):
        entry = gpu_preset(gpu["preset"])
    else:
        entry = {
            "preset": None,
            "vendor": None,
            "name": "custom GPU",
            "memory_gib": None,
            "bf16_tflops": None,
            "fp8_tflops": None,
            "fp8": None,
            "interconnect_gbs": None,
            "sources": ("given by the caller",),
        }
    for key in ("name", "vendor"):
        if gpu.get(key) not in (None, ""):
            entry[key] = str(gpu[key])
    if gpu.get("memory_mib") not in (None, "") and gpu.get("memory_gib") in (None, ""):
        entry["memory_gib"] = _number(gpu["memory_mib"], "memory_mib") / 1024.0
    for key in ("memory_gib", "bf16_tflops", "fp8_tflops", "interconnect_gbs"):
        if gpu.get(key) not in (None, ""):
            entry[key] = _number(gpu[key], key)
    if gpu.get("fp8") not in (None, ""):
        entry["fp8"] = to_bool(gpu["fp8"], "gpu fp8", HardwareError)
    if entry.get("fp8") is None:
        entry["fp8"] = bool(entry.get("fp8_tflops"))
    if not entry.get("memory_gib"):
        raise HardwareError("explicit gpu figures need memory_gib (or memory_mib)")
    entry["source"] = "explicit"
    entry["warnings"] = warnings
    return entry


def _number(value, name):
    return to_float(value, "gpu " + name, HardwareError, allow_none=False, positive=True)
