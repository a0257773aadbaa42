# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Slurm configuration derivations: the ONE place that turns facts and policy into slurm.conf,
gres.conf and cgroup.conf lines.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

* ``parse_version(text)``: ``"22.05.8-4+deb12u3"``, ``"slurm-wlm 24.11.5"`` -> ``(22, 5, 8)``.
* ``version_features(version)``: what the installed Slurm accepts and needs (version-dependent keys).
* ``hostlist(names)`` / ``expand_hostlist(expr)``: ``["gpu1", "gpu2", "gpu10"]`` <-> ``"gpu[1-2,10]"``.
* ``node_attributes(facts, gpus, ...)``: ``CPUs Sockets CoresPerSocket ThreadsPerCore RealMemory
  Gres`` of one node from its Ansible hardware facts and its ``gpucluster_gpus`` fact.
* ``node_lines(nodes)``: ``NodeName=`` lines, nodes with identical attributes compressed together.
* ``partition_lines(partitions, groups, computes, version)``: ``PartitionName=`` lines from
  partitions declared as data over inventory groups (node groups).
* ``gres_lines(nodes, autodetect)``: gres.conf lines (``NodeName=... Name=gpu Type=... File=...
  Cores=...``; MIG instances as ``MultipleFiles=`` of the parent GPU and its nvidia-caps files,
  or ``AutoDetect=nvml``).
* ``numa_cores(facts, numa_node_count)``: ``{NUMA node: "first-last"}`` Slurm core ranges.
* ``config_lines(defaults, overrides, version, conf)``: ``Key=Value`` lines of a settings file,
  overrides applied (``omit`` removes a key) and keys the installed version no longer accepts
  rejected with a message naming the key and what replaces it.

Every function raises ``SlurmConfError`` (a ``ValueError``) with a clear message on bad input.
"""

from __future__ import annotations

import re

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind
from ansible_collections.gpucluster.training.plugins.module_utils import _slurm_hostlist as _hostlist

OMIT_MARKERS = ("omit",)
# Ansible's ``omit`` placeholder renders as this prefix plus a hash.
OMIT_PREFIX = "__omit_place_holder__"

# Keys or values that a Slurm version no longer accepts: (file, key, value or None for any
# value) -> (first version without it, what to use instead).  Sources: Slurm RELEASE_NOTES
# 23.11 ("select/cons_res ... removed"), cgroup.conf(5) of 23.02 (CgroupAutomount documented)
# versus 24.05 (gone); slurmd 24.11.5 (Debian 13) refuses it: 'The option "CgroupAutomount" is
# defunct, please remove it from cgroup.conf.'
_REMOVED = (
    ("slurm.conf", "selecttype", "select/cons_res", (23, 11), "SelectType=select/cons_tres"),
    ("slurm.conf", "controlmachine", None, (23, 11), "SlurmctldHost"),
    ("slurm.conf", "accountingstorejobcomment", None, (23, 2), "AccountingStoreFlags=job_comment"),
    ("cgroup.conf", "cgroupautomount", None, (24, 5), "nothing (cgroup/v2 needs no mounting)"),
)

# GPU autodetection plugins Slurm can load, per vendor, most preferred first:
# (AutoDetect value, plugin file name).
AUTODETECT_PLUGINS = {
    "amd": (("rsmi", "gpu_rsmi.so"),),
    "nvidia": (("nvml", "gpu_nvml.so"), ("nvidia", "gpu_nvidia.so")),
}

_NODE_FACTS = (
    ("CPUs", "processor_vcpus"),
    ("Sockets", "processor_count"),
    ("CoresPerSocket", "processor_cores"),
    ("ThreadsPerCore", "processor_threads_per_core"),
)

_SLUG = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_VERSION = re.compile(r"(?:^|[\s:-])(\d{2})\.(\d{1,2})(?:\.(\d+))?")


class SlurmConfError(ValueError):
    """Input that no valid Slurm configuration can be derived from."""


# --- versions -----------------------------------------------------------------------------

def parse_version(text):
    """Return ``(major, minor, micro)`` from a Slurm or package version string."""
    if isinstance(text, (list, tuple)) and len(text) >= 2 and all(isinstance(x, int) for x in text):
        parts = tuple(text) + (0,) * (3 - len(text))
        return parts[:3]
    if not isinstance(text, str) or not text.strip():
        raise SlurmConfError("no Slurm version given (expected e.g. '22.05.8' or 'slurm-wlm 24.11.5')")
    match = _VERSION.search(text.strip())
    if not match:
        raise SlurmConfError("cannot read a Slurm version from %r (expected e.g. '22.05.8')" % text)
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def version_features(version):
    """What the installed Slurm accepts and needs, as a dict of plain values.

    ``cgroup_automount``: cgroup.conf still accepts ``CgroupAutomount`` (before 24.05).
    ``cons_res``: ``select/cons_res`` still exists (before 23.11).
    ``reconfigure_applies_node_changes``: ``scontrol reconfigure`` applies added or changed
    node definitions (from 24.05, where reconfigure restarts the daemons in place); before, a
    change of NodeName or PartitionName lines needs a restart of slurmctld and the slurmd.
    ``configless``: ``SlurmctldParameters=enable_configless`` exists (from 20.02).
    ``cgroup_plugin``: cgroup.conf ``CgroupPlugin`` exists (from 22.05).
    ``cgroup_v2``: Slurm's cgroup plugins work on a cgroup v2 (unified) host (from 22.05, Slurm's
    cgroup v2 page; 21.08 has only cgroup/v1).
    """
    major, minor, micro = parse_version(version)
    ver = (major, minor)
    return {
        "version": "%d.%02d.%d" % (major, minor, micro),
        "major_minor": "%d.%02d" % ver,
        "cgroup_automount": ver < (24, 5),
        "cons_res": ver < (23, 11),
        "reconfigure_applies_node_changes": ver >= (24, 5),
        "configless": ver >= (20, 2),
        "cgroup_plugin": ver >= (22, 5),
        "cgroup_v2": ver >= (22, 5),
    }


CGROUP_PLUGINS = ("proctrack/cgroup", "task/cgroup", "jobacct_gather/cgroup")


def cgroup_v2_refusal(version, cgroup2_hosts, plugins):
    """Text refusing a Slurm without cgroup v2 support on cgroup v2 hosts, or ``""`` when fine.

    ``cgroup2_hosts``: the hosts booted with the unified cgroup v2 hierarchy only;
    ``plugins``: the configured ProctrackType / TaskPlugin / JobAcctGatherType values.
    """
    features = version_features(version)
    hosts = sorted(str(h) for h in (cgroup2_hosts or []))
    used = sorted(set(p.strip() for value in (plugins or []) for p in str(value).split(",") if p.strip() in CGROUP_PLUGINS))
    if features["cgroup_v2"] or not hosts or not used:
        return ""
    return ("Slurm %s cannot run on %s: these hosts boot with cgroup v2 only, and Slurm supports cgroup v2 from 22.05 "
            "(%s need it). The way out: a signed site package repository with Slurm >= 22.05 (e.g. .debs built by "
            "SchedMD's packaging from the release tarball, or a vendor repository): set slurm_common_repository (url, "
            "key_url, suite, components) and slurm_common_package_version (pinned and held), and slurm_common_packages "
            "where its package names differ (slurm-smd-*). "
            "Booting with systemd.unified_cgroup_hierarchy=0 (cgroup v1) is the unsupported alternative."
            % (features["version"], ", ".join(hosts), ", ".join(used)))


# --- host lists (plugins/module_utils/_slurm_hostlist.py) -----------------------------------

def hostlist(names):
    """Compress names into a Slurm hostlist expression (``gpu[1-3,10]``); see _slurm_hostlist."""
    return _hostlist.hostlist(names, SlurmConfError)


def expand_hostlist(expr):
    """Expand a Slurm hostlist expression into names; see _slurm_hostlist."""
    return _hostlist.expand_hostlist(expr, SlurmConfError)


def _positive_int(value, what):
    if isinstance(value, bool):
        raise SlurmConfError("%s must be a number, got %r" % (what, value))
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise SlurmConfError("%s must be a number, got %r" % (what, value)) from None
    if number < 1:
        raise SlurmConfError("%s must be at least 1, got %r" % (what, value))
    return number


def gpu_devices(gpus):
    """The usable (counted) devices of a ``gpucluster_gpus`` fact, in index order (a device without
    ``index`` at its position in the list).

    gpu_info sets ``counted`` on every device; in a hand-written fact a device without it counts.
    The collection's one definition of a node's usable GPUs (slurm.conf's Gres=, gres.conf, the
    device files slurmd needs, the preflight's GPU-count check).
    """
    if not gpus:
        return []
    if not isinstance(gpus, dict):
        raise SlurmConfError("gpucluster_gpus must be a dict ({vendor, count, devices}), got %s" % kind(gpus))
    devices = gpus.get("devices") or []
    if not isinstance(devices, list):
        raise SlurmConfError("gpucluster_gpus.devices must be a list of devices, got %s" % kind(devices))
    out = []
    for number, dev in enumerate(devices):
        if not isinstance(dev, dict):
            raise SlurmConfError(
                "gpucluster_gpus.devices[%d] must be a dict (index, slurm_type, device_file or render_node), got %r"
                % (number, dev))
        counted = dev.get("counted", True)
        if not isinstance(counted, bool):
            raise SlurmConfError("gpucluster_gpus.devices[%d].counted must be true or false, got %r" % (number, counted))
        index = dev.get("index", number)
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise SlurmConfError("gpucluster_gpus.devices[%d].index must be a whole number >= 0, got %r" % (number, index))
        if counted:
            out.append((index, dev))
    # a device without index stands at its position in the list, for the check above and the order
    return [dev for _index, dev in sorted(out, key=lambda pair: pair[0])]


def _slurm_type(dev, gpus):
    mig = dev.get("mig") if isinstance(dev.get("mig"), dict) else None
    stype = (mig.get("profile") if mig else None) or dev.get("slurm_type") or gpus.get("slurm_type")
    if not isinstance(stype, str) or not _SLUG.match(stype):
        raise SlurmConfError(
            "GPU %r has no usable slurm_type (got %r): the GRES type must be lower-case letters and digits"
            % (dev.get("index"), stype))
    return stype


def gres_counts(gpus, count=None):
    """``[(slurm_type, n), ...]`` of a node; ``count`` limits the total (None: all probed GPUs)."""
    devices = gpu_devices(gpus)
    if not devices and gpus and gpus.get("count"):
        # a fact without device detail: the summary is all there is
        devices = [{"index": i} for i in range(_positive_int(gpus["count"], "gpucluster_gpus.count"))]
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise SlurmConfError("GPU count must be a whole number >= 0, got %r" % (count,))
        if count > len(devices):
            raise SlurmConfError("GRES count %d is greater than the %d GPUs probed" % (count, len(devices)))
        devices = devices[:count]
    counts = []
    for dev in devices:
        stype = _slurm_type(dev, gpus)
        if counts and counts[-1][0] == stype:
            counts[-1] = (stype, counts[-1][1] + 1)
        else:
            counts.append((stype, 1))
    merged = {}
    for stype, num in counts:
        merged[stype] = merged.get(stype, 0) + num
    return sorted(merged.items())


def node_attributes(facts, gpus=None, mem_reserve_mib=1024, mem_reserve_percent=0, gpu_count=None, mem_round_mib=1024):
    """Ordered ``[(key, value)]`` of a NodeName line from Ansible facts and GPU facts.

    ``RealMemory`` is ``memtotal_mb`` minus the larger of ``mem_reserve_mib`` and
    ``mem_reserve_percent`` % of it (memory left to the OS, daemons and page cache), rounded
    down to a multiple of ``mem_round_mib`` so that the few MiB a kernel update moves
    ``MemTotal`` by do not change it (a node whose RealMemory exceeds what slurmd finds is
    drained).  ``mem_round_mib`` 1 keeps the exact value.
    """
    if not isinstance(facts, dict):
        raise SlurmConfError("facts must be a dict of Ansible facts, got %s" % kind(facts))
    attrs = []
    for key, fact in _NODE_FACTS:
        if fact not in facts:
            raise SlurmConfError("fact %s is missing (needed for %s): gather hardware facts first" % (fact, key))
        attrs.append((key, _positive_int(facts[fact], fact)))
    vals = dict(attrs)
    if vals["Sockets"] * vals["CoresPerSocket"] * vals["ThreadsPerCore"] != vals["CPUs"]:
        # Slurm wants CPUs = Sockets x CoresPerSocket x ThreadsPerCore; facts of VMs and
        # containers may disagree (e.g. vCPUs without topology): keep the logical CPU count
        # and describe it as one socket of single-thread cores.
        attrs = [("CPUs", vals["CPUs"]), ("Sockets", 1), ("CoresPerSocket", vals["CPUs"]), ("ThreadsPerCore", 1)]
    if "memtotal_mb" not in facts:
        raise SlurmConfError("fact memtotal_mb is missing (needed for RealMemory): gather hardware facts first")
    total = _positive_int(facts["memtotal_mb"], "memtotal_mb")
    if isinstance(mem_reserve_mib, bool) or not isinstance(mem_reserve_mib, int) or mem_reserve_mib < 0:
        raise SlurmConfError("memory reserve must be a whole number of MiB >= 0, got %r" % (mem_reserve_mib,))
    if isinstance(mem_reserve_percent, bool) or not isinstance(mem_reserve_percent, (int, float)) or not 0 <= mem_reserve_percent < 100:
        raise SlurmConfError("memory reserve percent must be between 0 and 100, got %r" % (mem_reserve_percent,))
    reserve = max(mem_reserve_mib, int(total * mem_reserve_percent / 100.0))
    if reserve >= total:
        raise SlurmConfError("memory reserve of %d MiB leaves nothing of the node's %d MiB" % (reserve, total))
    rounding = _positive_int(mem_round_mib, "memory rounding (MiB)")
    real = (total - reserve) // rounding * rounding
    if real < 1:
        raise SlurmConfError("RealMemory rounded down to a multiple of %d MiB leaves nothing of the node's %d MiB" % (rounding, total))
    attrs.append(("RealMemory", real))
    gres = gres_counts(gpus, gpu_count) if gpus else []
    if gres:
        attrs.append(("Gres", ",".join("gpu:%s:%d" % (stype, num) for stype, num in gres)))
    return attrs


def default_memory(nodes, mode="auto"):
    """``(key, MiB)`` of the cluster's default job memory, or None.

    ``nodes``: ``{name: node_attributes(...)}``.  ``per_gpu``: ``DefMemPerGPU`` = the smallest
    ``RealMemory / GPUs`` over the nodes with GPUs; ``per_cpu``: ``DefMemPerCPU`` = the smallest
    ``RealMemory / CPUs``; ``auto``: per_gpu when a node has GPUs, else per_cpu; ``none``: None
    (a job without ``--mem`` then gets the whole node).  Slurm takes only one of the two keys.
    """
    if mode not in ("auto", "per_gpu", "per_cpu", "none"):
        raise SlurmConfError("default memory mode must be auto, per_gpu, per_cpu or none, not %r" % (mode,))
    if mode == "none" or not nodes:
        return None
    per_gpu, per_cpu = [], []
    for name, attrs in nodes.items():
        vals = dict(_as_pairs(attrs))
        real, cpus = vals.get("RealMemory"), vals.get("CPUs")
        if not isinstance(real, int) or not isinstance(cpus, int) or cpus < 1:
            raise SlurmConfError("node %s has no RealMemory/CPUs to derive the default memory from" % name)
        per_cpu.append(real // cpus)
        gpus = sum(int(item.rsplit(":", 1)[1]) for item in str(vals.get("Gres") or "").split(",") if item.startswith("gpu:"))
        if gpus:
            per_gpu.append(real // gpus)
    if mode == "per_gpu" and not per_gpu:
        raise SlurmConfError("default memory per_gpu but no compute node has GPUs")
    if per_gpu and mode in ("auto", "per_gpu"):
        return ("DefMemPerGPU", min(per_gpu))
    return ("DefMemPerCPU", min(per_cpu))


def _as_pairs(attrs):
    if isinstance(attrs, dict):
        return list(attrs.items())
    if isinstance(attrs, (list, tuple)):
        pairs = []
        for item in attrs:
            if isinstance(item, dict) and "key" in item:
                pairs.append((item["key"], item.get("value")))
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                pairs.append((item[0], item[1]))
            else:
                raise SlurmConfError("attributes must be (key, value) pairs, got %r" % (item,))
        return pairs
    raise SlurmConfError("attributes must be a dict or a list of pairs, got %s" % kind(attrs))


def _fmt(value):
    if isinstance(value, bool):
        return "YES" if value else "NO"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def node_lines(nodes, extra=None):
    """``NodeName=`` lines for ``{name: attributes}``; nodes with equal attributes share a line.

    ``extra``: attributes appended to every line (e.g. ``{"State": "UNKNOWN"}``).
    """
    if not isinstance(nodes, dict):
        raise SlurmConfError("nodes must be a dict of node name -> attributes")
    by_attrs = {}
    for name, attrs in nodes.items():
        pairs = _as_pairs(attrs) + (_as_pairs(extra) if extra else [])
        text = " ".join("%s=%s" % (k, _fmt(v)) for k, v in pairs if not _is_omit(v))
        by_attrs.setdefault(text, []).append(name)
    lines = []
    for text, names in by_attrs.items():
        lines.append(("NodeName=%s %s" % (hostlist(names), text)).rstrip())
    return sorted(lines, key=lambda line: expand_hostlist(line.split()[0][9:])[0])


def _vendor(gpus):
    return str(gpus.get("vendor") or "").lower()


def autodetect_choice(vendor, plugin_files):
    """The ``AutoDetect`` value to use for ``vendor`` given the installed plugin file names, or None."""
    available = set(plugin_files or [])
    for value, plugin in AUTODETECT_PLUGINS.get(str(vendor or "").lower(), ()):
        if plugin in available:
            return value
    return None


def _device_file(dev, vendor):
    if vendor == "amd":
        path = dev.get("render_node")
        if not path:
            raise SlurmConfError("AMD GPU %r has no render_node (e.g. /dev/dri/renderD128) in its facts" % (dev.get("index"),))
        return path
    if vendor == "nvidia":
        path = dev.get("device_file")
        if not path:
            if not isinstance(dev.get("index"), int):
                raise SlurmConfError("NVIDIA GPU without device_file or index in its facts")
            path = "/dev/nvidia%d" % dev["index"]
        return path
    raise SlurmConfError("unknown GPU vendor %r (expected amd or nvidia)" % vendor)


def numa_cores(facts, numa_node_count):
    """``{NUMA node: "a-b"}``: the Slurm core indices of each NUMA node, or ``{}`` when unknown.

    Slurm numbers cores socket by socket in hwloc's logical order, in which a NUMA node's cores
    are contiguous; with N NUMA nodes that split the cores evenly, node n holds cores
    ``n*k .. n*k+k-1`` (k = all cores / N).  Nothing is returned when the count is unknown or
    does not divide the cores (the GRES line then has no ``Cores=``: no binding rather than a
    wrong one).
    """
    if not isinstance(facts, dict) or isinstance(numa_node_count, bool) or not isinstance(numa_node_count, int) or numa_node_count < 1:
        return {}
    try:
        sockets = _positive_int(facts.get("processor_count"), "processor_count")
        cores = _positive_int(facts.get("processor_cores"), "processor_cores")
    except SlurmConfError:
        return {}
    total = sockets * cores
    if total % numa_node_count:
        return {}
    size = total // numa_node_count
    return dict((node, "%d-%d" % (node * size, node * size + size - 1)) for node in range(numa_node_count))


def _mig_files(dev, vendor):
    mig = dev["mig"]
    caps = mig.get("cap_files")
    if not caps or not isinstance(caps, list) or not all(isinstance(c, str) and c.startswith("/dev/nvidia-caps/") for c in caps):
        raise SlurmConfError(
            "GPU %r is a MIG instance (GPU instance %s of %s) and its /dev/nvidia-caps files are not known: use "
            "AutoDetect=nvml (slurm_common_gres_autodetect with Slurm's gpu_nvml.so plugin) or probe "
            "/proc/driver/nvidia-caps/mig-minors with gpu_info" % (dev.get("index"), mig.get("gpu_instance_id"), mig.get("parent_uuid")))
    return [_device_file(dev, vendor)] + caps


def gres_lines(nodes, plugin_files=None, autodetect=False, gpu_counts=None, node_facts=None):
    """gres.conf lines for ``{node name: gpucluster_gpus fact or None}``.

    Explicit ``NodeName=<nodes> Name=gpu Type=<type> File=<devices> [Cores=<a-b>]`` lines from
    the probed device files (AMD render nodes, NVIDIA /dev/nvidiaN); with ``autodetect`` and the
    vendor's plugin among ``plugin_files``, ``NodeName=<nodes> AutoDetect=<plugin>`` instead.
    MIG instances (type: the MIG profile) without autodetection get one ``MultipleFiles=`` line
    each: the parent GPU and the instance's ``/dev/nvidia-caps`` files; unknown caps files
    raise.  Two GPUs with the same device file raise (the line would count one GPU).
    ``gpu_counts``: optional ``{node: n}`` limiting the GPUs configured on a node.
    ``node_facts``: optional ``{node: ansible_facts}``; with the GPU fact's ``numa_node_count``
    and each GPU's ``numa_node`` they give ``Cores=`` (see ``numa_cores``).
    """
    if not isinstance(nodes, dict):
        raise SlurmConfError("nodes must be a dict of node name -> gpucluster_gpus")
    gpu_counts = gpu_counts or {}
    node_facts = node_facts or {}
    by_text = {}
    for name, gpus in nodes.items():
        if not gpus:
            continue
        vendor = _vendor(gpus)
        devices = gpu_devices(gpus)
        count = gpu_counts.get(name)
        if count is not None:
            gres_counts(gpus, count)  # validates count <= probed
            devices = devices[:count]
        if not devices:
            continue
        has_mig = any(isinstance(dev.get("mig"), dict) for dev in devices)
        choice = autodetect_choice(vendor, plugin_files) if autodetect else None
        if has_mig and not choice and "gpu_nvml.so" in (plugin_files or []):
            choice = "nvml"  # MIG: NVML finds the instances and their caps files itself
        if has_mig and choice and choice != "nvml":
            choice = None  # only the NVML plugin knows MIG
        if choice:
            texts = ["AutoDetect=%s" % choice]
        else:
            cores = numa_cores(node_facts.get(name), gpus.get("numa_node_count"))
            files = {}
            texts = []
            seen = {}
            for dev in devices:
                numa = dev.get("numa_node")
                core_text = " Cores=%s" % cores[numa] if isinstance(numa, int) and not isinstance(numa, bool) and numa in cores else ""
                if isinstance(dev.get("mig"), dict):
                    texts.append("Name=gpu Type=%s MultipleFiles=%s%s" % (_slurm_type(dev, gpus), ",".join(_mig_files(dev, vendor)), core_text))
                    continue
                path = _device_file(dev, vendor)
                if path in seen:
                    raise SlurmConfError("GPUs %r and %r of node %s have the same device file %s: the gres.conf line would count one GPU"
                                         % (seen[path], dev.get("index"), name, path))
                seen[path] = dev.get("index")
                files.setdefault((_slurm_type(dev, gpus), core_text), []).append(path)
            texts.extend("Name=gpu Type=%s File=%s%s" % (stype, hostlist(paths), core_text)
                         for (stype, core_text), paths in sorted(files.items()))
        for text in texts:
            by_text.setdefault(text, []).append(name)
    lines = ["NodeName=%s %s" % (hostlist(names), text) for text, names in by_text.items()]
    return sorted(lines)


def partition_lines(partitions, groups, computes, version=None):
    """``PartitionName=`` lines: each partition holds the compute hosts of the groups it names.

    ``partitions``: ``[{name, groups, default, max_time, options}]``; ``groups``: inventory
    group name -> host names; ``computes``: the compute hosts (others are ignored).  A group
    that does not exist, a partition without compute hosts, a repeated name or two default
    partitions raise ``SlurmConfError`` naming the partition.
    """
    if not isinstance(partitions, list) or not isinstance(groups, dict):
        raise SlurmConfError("partitions must be a list and groups a dict of group -> hosts")
    computes = list(computes or [])
    lines, seen, defaults = [], set(), []
    for part in partitions:
        if not isinstance(part, dict) or not isinstance(part.get("name"), str) or not part.get("name"):
            raise SlurmConfError("every partition needs a name, got %r" % (part,))
        name = part["name"]
        if name in seen:
            raise SlurmConfError("partition %s is declared twice" % name)
        seen.add(name)
        members = []
        part_groups = part.get("groups") or []
        if isinstance(part_groups, str):
            part_groups = [part_groups]
        for group in part_groups:
            if group not in groups:
                raise SlurmConfError("partition %s names node group %s, which is not an inventory group" % (name, group))
            members.extend(h for h in groups[group] if h in computes)
        shorts = sorted(set(h.split(".")[0] for h in members))
        if not shorts:
            raise SlurmConfError("partition %s holds no compute node (groups: %s)" % (name, ", ".join(part_groups) or "none"))
        if part.get("default"):
            defaults.append(name)
        attrs = {"Nodes": hostlist(shorts), "Default": bool(part.get("default")),
                 "MaxTime": part.get("max_time") or "INFINITE", "State": "UP"}
        body = config_lines(attrs, part.get("options") or {}, version=version, conf="slurm.conf")
        lines.append("PartitionName=%s %s" % (name, " ".join(body)))
    if len(defaults) > 1:
        raise SlurmConfError("partitions %s are all default=true: only one can be" % ", ".join(defaults))
    return lines


# --- settings files --------------------------------------------------------------------------

def _is_omit(value):
    return isinstance(value, str) and (value in OMIT_MARKERS or value.startswith(OMIT_PREFIX))


def config_lines(defaults, overrides=None, version=None, conf="slurm.conf"):
    """``Key=Value`` lines: ``defaults`` updated by ``overrides`` (case-insensitive keys).

    A value of ``omit`` (or Ansible's omit placeholder) or None removes the key; a list value
    is joined with commas; booleans become YES/NO.  With ``version``, a key or value that
    Slurm version no longer accepts raises ``SlurmConfError`` naming it and its replacement.
    """
    merged = []
    index = {}
    for source in (defaults or {}, overrides or {}):
        for key, value in _as_pairs(source):
            if not isinstance(key, str) or not re.match(r"^[A-Za-z][A-Za-z0-9]*$", key):
                raise SlurmConfError("invalid %s key %r" % (conf, key))
            low = key.lower()
            if low in index:
                merged[index[low]] = (key, value)
            else:
                index[low] = len(merged)
                merged.append((key, value))
    lines = []
    ver = parse_version(version)[:2] if version is not None else None
    for key, value in merged:
        if value is None or _is_omit(value):
            continue
        text = _fmt(value)
        if "\n" in text:
            raise SlurmConfError("%s value of %s contains a newline" % (conf, key))
        if ver is not None:
            for rconf, rkey, rvalue, since, instead in _REMOVED:
                if rconf == conf and rkey == key.lower() and (rvalue is None or rvalue == text.lower()) and ver >= since:
                    raise SlurmConfError(
                        "%s %s=%s is not accepted by Slurm %d.%02d (removed in %d.%02d): use %s"
                        % (conf, key, text, ver[0], ver[1], since[0], since[1], instead))
        lines.append("%s=%s" % (key, text))
    return lines
