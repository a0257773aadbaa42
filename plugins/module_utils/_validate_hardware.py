# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What validation knows of one node, and its limits: the reference and the physical ceiling.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

* ``hca_label``: the ONE definition of a selected RDMA port as the validate role names it
  (``"mlx5_0:1"``). It accepts what the rdma role records in ``ansible_local.gpucluster_rdma.hcas``
  (``_nccl_env.derive_nccl_env`` ``hcas``: ``{device, port, link_layer, rate_gbps, ...}``) and the
  legacy string forms ``"mlx5_0:1"`` / ``"mlx5_0"`` (port 1).
* ``node_hardware``: GPUs (preset, count, interconnect) and selected ports (rate, state).
* ``limits``: per node, the physical ceilings (link rate) and the published references
  (``_validate_refs``) that set the pass lines.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind
from ansible_collections.gpucluster.training.plugins.module_utils import _hardware as hw
from ansible_collections.gpucluster.training.plugins.module_utils import _validate_refs as refs
from ansible_collections.gpucluster.training.plugins.module_utils._validate_policy import (
    ValidateJudgeError, fmt, num, tri)

__all__ = ["hca_label", "hca_labels", "node_hardware", "limits", "hierarchical_factor"]

# GPUs whose NVSwitch reduces in the switch (NVLS): all_reduce bus bandwidth may exceed one link
# direction, up to 2(n-1)/n of it.
_IN_SWITCH_REDUCTION = ("h100", "h200")


def hca_label(item):
    """``"device:port"`` of one selected port: a dict of the rdma role or a legacy string."""
    if isinstance(item, dict):
        device = item.get("device") if item.get("device") is not None else item.get("name")
        port = item.get("port")
        if not device or not isinstance(device, str) or ":" in device or "{" in device:
            raise ValidateJudgeError("selected port %r has no usable device name" % (item,))
        if port is None or port == "":
            port = 1
        if isinstance(port, bool) or not str(port).isdigit() or len(str(port)) > 3:
            raise ValidateJudgeError("selected port %r: port must be a small whole number" % (item,))
        return "%s:%d" % (device, int(port))
    if isinstance(item, str):
        text = item.strip()
        if not text or "{" in text or " " in text or len(text) > 64:
            raise ValidateJudgeError("selected port %r is not 'device:port'" % (item,))
        if ":" not in text:
            return text + ":1"
        device, _sep, port = text.rpartition(":")
        if not device or not port.isdigit():
            raise ValidateJudgeError("selected port %r is not 'device:port'" % (item,))
        return "%s:%d" % (device, int(port))
    raise ValidateJudgeError("selected port must be a dict {device, port} or 'device:port', got %s"
                             % kind(item))


def hca_labels(items):
    """``hca_label`` of every item (None or empty: [])."""
    if not items:
        return []
    if isinstance(items, (str, dict)):
        items = [items]
    if not isinstance(items, (list, tuple)):
        raise ValidateJudgeError("selected ports must be a list, got %s" % kind(items))
    return [hca_label(item) for item in items]


def _ports_from_rdma(rdma, hcas):
    """Selected ports of a gpucluster_rdma fact: those named in hcas, else every ACTIVE one."""
    if rdma is None:
        return None
    if not isinstance(rdma, dict):
        raise ValidateJudgeError("gpucluster_rdma must be a dict, got %s" % kind(rdma))
    found = []
    for device in rdma.get("devices") or []:
        if not isinstance(device, dict) or not device.get("name"):
            raise ValidateJudgeError("every gpucluster_rdma device needs a name")
        for port in device.get("ports") or []:
            if not isinstance(port, dict) or port.get("port") is None:
                raise ValidateJudgeError("device %s has a port without a number" % device["name"])
            found.append({
                "name": hca_label({"device": device["name"], "port": port["port"]}),
                "rate_gbps": num(port.get("rate_gbps"), "rate of %s" % device["name"]),
                "link_layer": port.get("link_layer"),
                "state": str(port.get("state") or "unknown").upper(),
                "phys_state": str(port.get("phys_state") or "unknown"),
            })
    if hcas:
        wanted = hca_labels(hcas)
        recorded = dict((hca_label(h), h) for h in hcas if isinstance(h, dict))
        names = [p["name"] for p in found]
        chosen = [p for p in found if p["name"] in wanted]
        for name in wanted:
            if name in names:
                continue
            rec = recorded.get(name) or {}
            chosen.append({"name": name, "rate_gbps": num(rec.get("rate_gbps"), "rate of %s" % name),
                           "link_layer": rec.get("link_layer"), "state": "MISSING", "phys_state": "absent"})
        return chosen
    return [p for p in found if p["state"] == "ACTIVE"]


def _gpu_fields(preset):
    entry = hw.GPUS[preset]
    return {"gpu_preset": preset, "interconnect": entry["interconnect"],
            "interconnect_gbs": entry["interconnect_gbs"], "gpu_sources": list(entry["sources"]),
            "gpu_name": entry["name"]}


def node_hardware(gpus=None, rdma=None, hcas=None, peer_memory=None, override=None):
    """Normalise what is known of one node.

    ``gpus``: the gpucluster_gpus fact (or a preset name); ``rdma``: the gpucluster_rdma fact;
    ``hcas``: the ports the RDMA role selected (its recorded dicts ``{device, port, ...}`` or
    ``"mlx5_0:1"`` strings; empty: every ACTIVE port); ``peer_memory``: true/false/None (None:
    from ``rdma.peer_memory``); ``override``: the hardware a supplied result was measured on:
    ``{gpu, gpu_count, ports, rate_gbps, link_layer, peer_memory, source}`` (``ports`` a count
    or a list of names).
    """
    out = {"gpu_preset": None, "gpu_name": None, "gpu_count": None, "interconnect": None,
           "interconnect_gbs": None, "gpu_sources": [], "ports": None, "peer_memory": None,
           "source": "probed facts"}
    if isinstance(gpus, str) and gpus:
        gpus = {"slurm_type": gpus, "model": gpus}
    if gpus is not None and not isinstance(gpus, dict):
        raise ValidateJudgeError("gpucluster_gpus must be a dict, got %s" % kind(gpus))
    if gpus:
        try:
            preset = hw.preset_for_gpu_info(gpus)
        except hw.HardwareError as exc:
            raise ValidateJudgeError(str(exc))
        out["gpu_name"] = gpus.get("model") or gpus.get("slurm_type")
        count = gpus.get("count")
        out["gpu_count"] = None if count in (None, "") else int(num(count, "gpu count", False))
        if preset:
            name = out["gpu_name"]
            out.update(_gpu_fields(preset))
            out["gpu_name"] = name or out["gpu_name"]
    out["ports"] = _ports_from_rdma(rdma, hcas)
    if peer_memory is None and isinstance(rdma, dict) and rdma.get("peer_memory") is not None:
        peer_memory = bool(rdma.get("peer_memory"))
    out["peer_memory"] = None if peer_memory is None else bool(peer_memory)
    if override:
        _apply_override(out, override)
    elif isinstance(gpus, dict) and gpus.get("simulated"):
        out["source"] = "SIMULATED facts (gpucluster_gpus marked simulated: no GPU behind them)"
    return out


def _apply_override(out, override):
    if not isinstance(override, dict):
        raise ValidateJudgeError("hardware override must be a dict, got %s" % kind(override))
    if override.get("gpu") not in (None, ""):
        try:
            preset = hw.preset_for_gpu_info({"slurm_type": str(override["gpu"]), "model": str(override["gpu"])})
            if preset is None:
                preset = hw.gpu_preset(str(override["gpu"]))["preset"]
        except hw.HardwareError as exc:
            raise ValidateJudgeError(str(exc))
        out.update(_gpu_fields(preset))
    if override.get("gpu_count") not in (None, ""):
        out["gpu_count"] = int(num(override["gpu_count"], "gpu_count", False))
    if override.get("ports") not in (None, ""):
        rate = num(override.get("rate_gbps"), "rate_gbps", False)
        names = override["ports"]
        if not isinstance(names, (list, tuple)):
            count = int(num(names, "ports", False))
            if count > 1024:
                raise ValidateJudgeError("ports=%d: more RDMA ports than any node has" % count)
            names = ["port%d" % (i + 1) for i in range(count)]
        out["ports"] = [{"name": str(n), "rate_gbps": rate, "link_layer": override.get("link_layer"),
                         "state": "ACTIVE", "phys_state": "LinkUp"} for n in names]
    if override.get("peer_memory") is not None:
        out["peer_memory"] = bool(tri(override["peer_memory"], "peer_memory") is True)
    out["source"] = str(override.get("source") or "hardware given with the supplied result")


def hierarchical_factor(ranks, nodes):
    """How far above the ring bound Tree/NVLS/CollNet can take busbw: (N-1)/N x n/(n-1)."""
    if not ranks or not nodes or nodes < 2 or ranks < nodes:
        return None
    return (ranks - 1.0) / ranks * nodes / (nodes - 1.0)


def limits(hardware, site_references=()):
    """Ceilings and references of one node.

    ``inter_node_gbs``: the ring all-reduce ceiling, selected ports x rate / 8 (GB/s);
    ``intra_node_gbs``: the GPU interconnect ceiling, one direction of ``interconnect_gbs``
    (x 2(n-1)/n on NVSwitch systems with in-switch reduction); ``intra_reference`` /
    ``inter_reference``: the published healthy figures (``_validate_refs``) or None.
    """
    ports = hardware.get("ports") or []
    rates = [p["rate_gbps"] for p in ports if p.get("rate_gbps")]
    inter = sum(rates) / 8.0 if rates and len(rates) == len(ports) else None
    intra = None
    count = hardware.get("gpu_count") or 2
    preset = hardware.get("gpu_preset")
    basis_intra = None
    if hardware.get("interconnect_gbs") and count >= 2:
        intra = hardware["interconnect_gbs"] / 2.0
        basis_intra = ("%s %s %s GB/s aggregate bidirectional per GPU / 2 = %s GB/s one direction"
                       % (hardware.get("gpu_name"), hardware.get("interconnect"),
                          fmt(hardware["interconnect_gbs"]), fmt(intra)))
        if preset in _IN_SWITCH_REDUCTION:
            factor = 2.0 * (count - 1) / count
            intra = round(intra * factor, 2)
            basis_intra += " x 2(n-1)/n = %s for in-switch reduction (NVLS)" % fmt(intra)
    basis_inter = None
    if inter:
        basis_inter = ("%d port(s) x %s Gb/s = %s Gb/s = %s GB/s (ring all-reduce bound)"
                       % (len(ports), fmt(rates[0]) if len(set(rates)) == 1 else "+".join(fmt(r) for r in rates),
                          fmt(sum(rates)), fmt(inter)))
    return {
        "inter_node_gbs": inter,
        "inter_node_basis": basis_inter,
        "intra_node_gbs": intra,
        "intra_node_basis": basis_intra,
        "intra_reference": refs.intra_reference(preset, hardware.get("gpu_count"), site_references),
        "inter_reference": refs.inter_reference(ports, site_references),
        "port_gbps": dict((p["name"], p.get("rate_gbps")) for p in ports),
        "sources": list(hardware.get("gpu_sources") or []),
    }
