# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Published healthy all_reduce bus bandwidths: what a good node or fabric of a kind achieves.

PRIVATE to the collection: the interface may change without notice. Pure data and lookups.

The pass line of an ``all_reduce_perf`` result is the matching figure below x the policy's
``reference_margin`` (0.9 by default), never a fraction of the link rate: links never run at
their rated speed (AMD: xGMI is rated 64 GB/s per link and direction but CRC and protocol
overhead leave about 48 GB/s, "about 75 %"), so a fraction of the rate is either too strict
(healthy MI300X nodes judged failing) or too lax.  The link rate stays the physical ceiling: a
result above it is refused as impossible (the hardware description is wrong or the result is
not from this hardware).

Each entry: ``busbw_gbs`` (the healthy figure, large messages, GB/s), ``what`` (the system it was
measured on), ``source`` (URL, title and which table/row) and ``note``.  docs/validate-references.md
lists the same table for operators (a unit test keeps the two equal).
Sites add their own known-good figures with ``policy.references`` (same fields).
"""

from __future__ import annotations

__all__ = ["INTRA", "INTER", "intra_reference", "inter_reference", "site_references"]

_ROCM_BLOG = ("https://rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi/README.html "
              "- AMD ROCm blog 'Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct "
              "MI300X' (J. Kolla, P. Alizadeh, G. Lee, 2025-03-02)")
_ALAYA = ("https://docs.alayanew.com/en/docs/tech-blog/2026-05-06-nccl-tests - 'NCCL-tests in "
          "practice - the mandatory pre-launch health check' (Alaya NeW tech blog)")
_SATURN = ("https://saturncloud.io/blog/crusoe-nccl-cluster-validation - 'Validating Multi-Node GPU "
           "Clusters with NCCL Tests' (Saturn Cloud)")
_DEEPOPS = ("https://github.com/NVIDIA/deepops/blob/226aa8df2f65c7a4641dd8dc765a1845f5371d23/docs/"
            "slurm-cluster/slurm-perf-cluster.md - NVIDIA DeepOps 'Slurm cluster performance', "
            "section 'Performance Validation'")
_OCI = ("https://github.com/oracle-japan/ocitutorials/blob/bf795eb339690f076be088abc84c16fcc6ce5100/"
        "tutorials/_hpc/benchmark/run-nccltests-h100.md - Oracle OCI tutorial 'NCCL Tests on "
        "BM.GPU.H100.8', chapter 3")

# Single node, every GPU of it (all_reduce_perf -g <n> or one rank per GPU).
INTRA = {
    "mi300x-xgmi-8": {
        "gpu": ("mi300x",), "gpu_count": 8, "busbw_gbs": 319.0,
        "what": "8 x AMD Instinct MI300X, xGMI fully connected mesh (one node)",
        "source": _ROCM_BLOG + ", the 8-GPU all_reduce_perf table (peak bus bandwidth about 319 GB/s)",
        "note": "AMD: the usable xGMI ceiling is 7 links x ~48 GB/s = ~336 GB/s per GPU and direction; "
                "~319 GB/s is what AMD presents as a healthy node",
    },
    "h100-nvlink-8": {
        "gpu": ("h100", "h200"), "gpu_count": 8, "busbw_gbs": 460.0,
        "what": "8 x H100 SXM5, NVLink 4 / NVSwitch (one node); H200 SXM has the same NVLink 4 fabric",
        "source": (_ALAYA + ", section 2 'Single-node (validate NVLink)', reference table row "
                   "'8xH100 SXM5 NVLink-only: 460-480 GB/s' (low end taken)"),
        "note": "above one NVLink direction (450 GB/s) thanks to NVLS in-switch reduction",
    },
    "a100-nvlink-8": {
        "gpu": ("a100-40gb", "a100-80gb"), "gpu_count": 8, "busbw_gbs": 230.0,
        "what": "8 x A100 SXM4, NVLink 3 / NVSwitch (one node)",
        "source": (_ALAYA + ", section 2, reference table row '8xA100 SXM4 NVLink: 230-250 GB/s' "
                   "(low end taken)"),
        "note": "",
    },
}

# Several nodes; the fabric of each node: link layer, selected ports and their rate.
INTER = {
    "ib-ndr-8x400": {
        "link_layer": "InfiniBand", "ports": 8, "rate_gbps": 400, "nodes": None, "busbw_gbs": 400.0,
        "what": "H100/H200 SXM nodes with 8 x 400G NDR InfiniBand",
        "source": (_SATURN + ", table 'Expected Performance', row 'H100 SXM, NVLink + IB NDR: "
                   "400-450 GB/s' (8 GB+ messages; low end taken)"),
        "note": "",
    },
    "ib-hdr-8x200": {
        "link_layer": "InfiniBand", "ports": 8, "rate_gbps": 200, "nodes": 4, "busbw_gbs": 191.56,
        "what": "4 x DGX A100 with 8 x 200G HDR InfiniBand each",
        "source": (_DEEPOPS + ", the all_reduce_perf -b 1M -e 4G block (best row >= 1 GiB: 191.56 GB/s "
                   "at 4 GiB in-place); the same run is tests/fixtures/nccl-tests/"
                   "nccl_all_reduce_perf_4node_DGX-A100_IB_error_column_deepops.txt"),
        "note": "a vendor-published known-good run",
    },
    "roce-16x200": {
        "link_layer": "Ethernet", "ports": 16, "rate_gbps": 200, "nodes": 2, "busbw_gbs": 464.79,
        "what": "2 x OCI BM.GPU.H100.8 (8 x H100) with 16 x 200G RoCE each",
        "source": (_OCI + " (best row >= 1 GiB: 464.79 GB/s at 16 GiB in-place); the same run is "
                   "tests/fixtures/nccl-tests/nccl_all_reduce_perf_2node_16xH100_OCI_RoCE_ocitutorials.txt"),
        "note": "a vendor-published known-good run",
    },
}


def _entry(ref_id, entry, kind):
    out = dict(entry)
    out["id"] = ref_id
    out["kind"] = kind
    return out


def site_references(value):
    """Check the policy's own references: a list of dicts (see the module docstring)."""
    from ansible_collections.gpucluster.training.plugins.module_utils._validate_policy import (
        ValidateJudgeError, num)

    if not isinstance(value, (list, tuple)):
        raise ValidateJudgeError("references must be a list of dicts")
    out = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise ValidateJudgeError("references[%d] must be a dict" % index)
        kind = item.get("kind")
        if kind not in ("intra", "inter"):
            raise ValidateJudgeError("references[%d].kind must be intra or inter" % index)
        if not item.get("source"):
            raise ValidateJudgeError("references[%d] needs its source (where the figure was measured)" % index)
        ref = {"id": str(item.get("id") or "site-%d" % index), "kind": kind,
               "busbw_gbs": num(item.get("busbw_gbs"), "references[%d].busbw_gbs" % index, False),
               "what": str(item.get("what") or "site reference"), "source": str(item["source"]),
               "note": str(item.get("note") or "")}
        if kind == "intra":
            gpu = item.get("gpu")
            if not gpu:
                raise ValidateJudgeError("references[%d] (intra) needs gpu" % index)
            ref["gpu"] = tuple(gpu) if isinstance(gpu, (list, tuple)) else (str(gpu),)
            ref["gpu_count"] = int(num(item.get("gpu_count"), "references[%d].gpu_count" % index, False))
        else:
            ref["link_layer"] = item.get("link_layer")
            ref["ports"] = int(num(item.get("ports"), "references[%d].ports" % index, False))
            ref["rate_gbps"] = num(item.get("rate_gbps"), "references[%d].rate_gbps" % index, False)
            nodes = num(item.get("nodes"), "references[%d].nodes" % index)
            ref["nodes"] = None if nodes is None else int(nodes)
        out.append(ref)
    return out


def intra_reference(gpu_preset, gpu_count, site=()):
    """The single-node reference for this GPU model and count (site references first), or None."""
    if not gpu_preset or not gpu_count:
        return None
    for ref in site or ():
        if ref["kind"] == "intra" and gpu_preset in ref["gpu"] and int(gpu_count) == ref["gpu_count"]:
            return dict(ref)
    for ref_id, entry in INTRA.items():
        if gpu_preset in entry["gpu"] and int(gpu_count) == entry["gpu_count"]:
            return _entry(ref_id, entry, "intra")
    return None


def _layer(value):
    text = str(value or "").lower()
    if text in ("infiniband", "ib"):
        return "InfiniBand"
    if text in ("ethernet", "roce", "eth"):
        return "Ethernet"
    return None


def inter_reference(ports, site=()):
    """The fabric reference for a node's selected ports ([{rate_gbps, link_layer}]), or None.

    Matches the link layer, the port count and one common rate; a port of unknown link layer
    matches nothing (a reference for InfiniBand says nothing of RoCE).
    """
    if not ports:
        return None
    rates = set(p.get("rate_gbps") for p in ports)
    layers = set(_layer(p.get("link_layer")) for p in ports)
    if len(rates) != 1 or len(layers) != 1 or None in rates or None in layers:
        return None
    rate, layer = rates.pop(), layers.pop()
    candidates = [dict(r) for r in site or () if r["kind"] == "inter"]
    candidates += [_entry(k, v, "inter") for k, v in INTER.items()]
    for ref in candidates:
        if (_layer(ref.get("link_layer")) == layer and ref["ports"] == len(ports)
                and float(ref["rate_gbps"]) == float(rate)):
            return ref
    return None
