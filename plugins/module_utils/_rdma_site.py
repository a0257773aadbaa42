# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A node's NCCL/RCCL settings as the rdma role writes them: the site's settings around
``_nccl_env.derive_nccl_env``.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``node_env(rdma, gpus=None, network=None, site=None)`` turns the role's settings (``site``) into
the derivation's policy, derives, and adds the site's own variables, each with its origin::

    {env, reasons, hcas, conf_keys, policy}

``site`` keys (the rdma role's variables without the ``rdma_`` prefix): ``hca_allow``,
``hca_deny``, ``require_rdma``, ``gdr_level``, ``link_layer``, ``gid_index`` (negative: none),
``socket_ifname``, ``peer_memory`` (``auto``, ``available`` or ``unavailable``),
``peer_markers`` (the peer-memory markers the role found under ``sysfs_root``),
``sysfs_root``, ``nccl_topo_file``, ``nccl_extra_env``, ``rccl_env``, ``amd`` (true on AMD
GPU nodes, which get ``rccl_env``), ``training_subnet`` (prefer the RoCE GID in that subnet) and
``single_plane`` (keep the InfiniBand ports of one plane only). ``gdr_level`` empty: NCCL picks
the GPUDirect level from the topology. The result's ``warnings`` are the derivation's (planes).
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind, to_bool
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import NcclEnvError, derive_nccl_env

_ORIGIN_TOPO = "topology file from rdma_nccl_topo_file (site setting)"
_ORIGIN_EXTRA = "rdma_nccl_extra_env (site setting)"
_ORIGIN_RCCL = "rdma_rccl_env (site setting for AMD GPU nodes, RCCL)"


def _dict(site, key):
    value = site.get(key) or {}
    if not isinstance(value, dict):
        raise NcclEnvError("rdma_%s must be a dict, got %r" % (key, value))
    return {str(k): str(v) for k, v in value.items()}


def site_policy(site, probed_peer_memory=None):
    """The ``derive_nccl_env`` policy from the role's settings."""
    # an INI inventory or -e gives "false" / "no" as text, which is true in Python: read it as
    # Ansible does, like single_plane below (absent or null: the role's default, true)
    require = to_bool(site.get("require_rdma"), "rdma_require_rdma", NcclEnvError, default=True)
    policy = {"allow": site.get("hca_allow") or [], "deny": site.get("hca_deny") or [],
              "socket_fallback": not require}
    if str(site.get("gdr_level") or ""):
        policy["gdr_level"] = str(site["gdr_level"])
    if site.get("training_subnet"):
        policy["subnet"] = site["training_subnet"]
    if to_bool(site.get("single_plane") or False, "rdma_single_plane", NcclEnvError):
        policy["single_plane"] = True
    if site.get("link_layer"):
        policy["link_layer"] = site["link_layer"]
    try:
        gid_index = int(site.get("gid_index", -1))
    except (TypeError, ValueError):
        raise NcclEnvError("rdma_gid_index must be an integer, got %r" % (site.get("gid_index"),))
    if gid_index >= 0:
        policy["gid_index"] = gid_index
    if site.get("socket_ifname"):
        policy["socket_ifname"] = site["socket_ifname"]
    peer_memory = site.get("peer_memory", "auto")
    if peer_memory != "auto":
        policy["peer_memory"] = peer_memory == "available"
    elif site.get("peer_markers") and not probed_peer_memory:
        # a peer-memory client the probe module cannot see (its markers under sysfs)
        policy["peer_memory"] = True
    return policy


def node_env(rdma, gpus=None, network=None, site=None):
    """Derive this node's settings with the site's; see the module docstring."""
    site = site or {}
    if not isinstance(site, dict):
        raise NcclEnvError("site must be a dict, got %s" % kind(site))
    probed = rdma.get("peer_memory") if isinstance(rdma, dict) else None
    policy = site_policy(site, probed)
    derived = derive_nccl_env(rdma, gpus=gpus, network=network, policy=policy)
    topo = {"NCCL_TOPO_FILE": str(site["nccl_topo_file"])} if site.get("nccl_topo_file") else {}
    extra = _dict(site, "nccl_extra_env")
    rccl = _dict(site, "rccl_env") if site.get("amd") else {}
    env = dict(derived["env"])
    reasons = dict(derived["reasons"])
    peer_memory = site.get("peer_memory", "auto")
    if policy.get("peer_memory") and peer_memory == "auto":
        why = "; the role found a peer-memory client registered (%s under %s)" % (
            ", ".join(site.get("peer_markers") or []), site.get("sysfs_root"))
    elif peer_memory != "auto":
        why = "; site setting rdma_peer_memory=%s" % peer_memory
    else:
        why = ""
    reasons["NCCL_NET_GDR_LEVEL"] = reasons.get("NCCL_NET_GDR_LEVEL", "") + why
    for values, origin in ((topo, _ORIGIN_TOPO), (extra, _ORIGIN_EXTRA), (rccl, _ORIGIN_RCCL)):
        env.update(values)
        reasons.update(dict.fromkeys(values, origin))
    # NCCL/RCCL read NCCL_* and RCCL_* from /etc/nccl.conf at init; the others (HSA_*, UCX_*)
    # must be in the environment before the process starts.
    conf_keys = [key for key in env if key.startswith(("NCCL_", "RCCL_"))]
    return {"env": env, "reasons": reasons, "hcas": derived["hcas"], "conf_keys": conf_keys, "policy": policy,
            "warnings": list(derived.get("warnings") or [])}
