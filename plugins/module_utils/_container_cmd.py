# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Derive the docker / podman command line of the training container.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

This is the ONE place where the flags of the training container are decided: the
``megatron`` role starts its long-lived container with the ``argv`` returned here, and the
job templates of ``training_jobs`` run the image through Slurm with the ``shell`` string
returned here (through the ``container_cmd`` filter).

``container_command(spec)`` returns::

    {argv: [engine, 'run'|'exec', ...], shell: <argv quoted for a POSIX shell>,
     flags: [the options between 'run' and the image], config_hash: <sha256 of the
     definition>, notes: [decisions worth knowing], mounts: [{src, dst, mode}] (run only:
     every host path the container mounts, the topology file and nccl.conf among them)}

``spec`` keys (all optional except ``image``, or ``name`` for ``action=exec``):

* ``action``: ``run`` (default) or ``exec`` (run ``command`` in the running container
  ``name``, as the ROCm tutorial does with ``docker exec``).
* ``engine``: ``docker`` or ``podman`` (default).
* ``vendor``: ``amd``, ``nvidia`` or ``none`` (a host without GPUs).
  AMD (ROCm documentation): ``--device /dev/kfd``, ``--device /dev/dri`` (or only the
  ``amd_render_nodes`` given), ``--group-add`` for ``groups`` (default ``video`` and
  ``render``), ``--security-opt seccomp=unconfined`` and ``--cap-add SYS_PTRACE``.
  NVIDIA (container toolkit): ``nvidia_mode`` ``gpus`` (``--gpus``, docker's toolkit hook),
  ``cdi`` (``--device nvidia.com/gpu=...``, the toolkit's CDI specification, the way podman
  uses it) or ``runtime`` (``--runtime nvidia`` + ``NVIDIA_VISIBLE_DEVICES``, the RDMA
  tutorial's legacy form); ``auto`` (default) is ``gpus`` on docker, ``cdi`` on podman.
* ``gpus``: ``all`` (default) or a list of GPU indices (NVIDIA only).
* ``mode``: ``service`` (detached, named, labelled with ``config_hash``; default) or ``job``
  (``--rm``, in the foreground: what a Slurm job step runs).
* ``name``, ``command`` (list), ``workdir``, ``network`` (``host``), ``ipc`` (``host``),
  ``shm_size`` (only used when ``ipc`` is not ``host``: with the host IPC namespace the
  container uses the host's /dev/shm, docker ignores the size and podman refuses it),
  ``ulimits`` (dict name -> int, ``-1``/``unlimited``, or ``soft:hard``; default
  ``memlock=-1`` and ``stack=67108864``), ``privileged`` (false), ``rdma_devices`` (list
  such as ``['/dev/infiniband']``; adds ``--cap-add IPC_LOCK`` for verbs memory
  registration), ``devices``, ``cap_add``, ``security_opts`` (extra), ``env`` (dict),
  ``env_passthrough`` (names passed from the launching environment with ``-e NAME``, e.g.
  ``MASTER_ADDR`` or ``SLURM_NODEID`` in a job step), ``topology_file`` (host path mounted
  read-only at the same path, ``NCCL_TOPO_FILE`` set to it), ``nccl_conf`` (host path of
  ``/etc/nccl.conf`` mounted read-only at ``/etc/nccl.conf``), ``mounts`` (list of
  ``{src, dst, mode}`` or ``src:dst[:ro]``), ``labels`` (dict), ``restart`` (``no``,
  ``always``, ``unless-stopped``, ``on-failure``; service only), ``extra_args`` (list, last).

Errors (``ContainerCmdError``, a ValueError) name the key and the value at fault.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind, to_bool

ENGINES = ("docker", "podman")
VENDORS = ("amd", "nvidia", "none")
NVIDIA_MODES = ("auto", "gpus", "cdi", "runtime")
MODES = ("service", "job")
ACTIONS = ("run", "exec")
RESTART_POLICIES = ("no", "always", "unless-stopped", "on-failure")
CONFIG_LABEL = "gpucluster.training.config"

# ROCm: "Running ROCm Docker containers" (rocm.docs.amd.com, install/docker): /dev/kfd is
# the compute interface, /dev/dri the render nodes; video/render own them on the host;
# seccomp=unconfined and SYS_PTRACE are what the ROCm images and the debugger need.
AMD_DEVICES = ("/dev/kfd", "/dev/dri")
AMD_GROUPS = ("video", "render")
AMD_SECURITY_OPTS = ("seccomp=unconfined",)
AMD_CAP_ADD = ("SYS_PTRACE",)
# The tutorials' limits: NCCL/RCCL pin buffers (memlock), and the NGC/ROCm images are
# documented with a 64 MiB stack.
DEFAULT_ULIMITS = {"memlock": -1, "stack": 67108864}
ULIMIT_NAMES = ("core", "cpu", "data", "fsize", "locks", "memlock", "msgqueue", "nice", "nofile",
                "nproc", "rss", "rtprio", "rttime", "sigpending", "stack")

_SPEC_KEYS = ("action", "engine", "vendor", "nvidia_mode", "gpus", "mode", "name", "image", "command",
              "workdir", "network", "ipc", "shm_size", "ulimits", "privileged", "rdma_devices", "devices",
              "amd_render_nodes", "groups", "cap_add", "security_opts", "env", "env_passthrough",
              "topology_file", "nccl_conf", "mounts", "labels", "restart", "extra_args")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_IMAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$")
_SIZE_RE = re.compile(r"^[0-9]+[bkmgBKMG]?$")
_WORD_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:=/-]*$")
_PATH_RE = re.compile(r"^/[^:,\s]*$")
_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class ContainerCmdError(ValueError):
    """A container definition from which no command line can be derived."""


def _choice(spec, key, choices, default):
    value = spec.get(key, default)
    if value is None:
        value = default
    if not isinstance(value, str) or value not in choices:
        raise ContainerCmdError("%s must be one of %s, got %r" % (key, ", ".join(choices), value))
    return value


def _str_list(spec, key, default=(), pattern=None, what="entry"):
    value = spec.get(key)
    if value is None:
        return list(default)
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ContainerCmdError("%s must be a list, got %r" % (key, value))
    out = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise ContainerCmdError("%s: %s %r is not a string" % (key, what, item))
        item = str(item)
        if not item or (pattern is not None and not pattern.match(item)):
            raise ContainerCmdError("%s: %s %r is not valid" % (key, what, item))
        out.append(item)
    return out


def _env_value(key, value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (str, int, float)):
        text = str(value)
        if "\n" in text or "\x00" in text:
            raise ContainerCmdError("env %s: value %r holds a newline or NUL" % (key, value))
        return text
    raise ContainerCmdError("env %s: value %r is not a string or number" % (key, value))


def _env(spec):
    value = spec.get("env")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ContainerCmdError("env must be a dict of NAME: value, got %r" % (value,))
    out = {}
    for key, val in value.items():
        if not isinstance(key, str) or not _ENV_RE.match(key):
            raise ContainerCmdError("env: %r is not a valid variable name" % (key,))
        out[key] = _env_value(key, val)
    return out


def _ulimit_value(name, value):
    if isinstance(value, bool):
        raise ContainerCmdError("ulimits %s: %r is not a number" % (name, value))
    if isinstance(value, int):
        if value < -1:
            raise ContainerCmdError("ulimits %s: %r is below -1 (unlimited)" % (name, value))
        return str(value)
    if isinstance(value, str):
        parts = value.split(":")
        if len(parts) > 2 or not all(parts):
            raise ContainerCmdError("ulimits %s: %r is not N, -1, unlimited or soft:hard" % (name, value))
        norm = []
        for part in parts:
            if part in ("unlimited", "-1"):
                norm.append("-1")
            elif part.isdigit():
                norm.append(str(int(part)))
            else:
                raise ContainerCmdError("ulimits %s: %r is not N, -1, unlimited or soft:hard" % (name, value))
        if len(norm) == 2 and norm[0] != "-1" and (norm[1] != "-1" and int(norm[0]) > int(norm[1])):
            raise ContainerCmdError("ulimits %s: soft limit %s is above the hard limit %s" % (name, norm[0], norm[1]))
        if len(norm) == 2 and norm[0] == "-1" and norm[1] != "-1":
            raise ContainerCmdError("ulimits %s: soft limit unlimited is above the hard limit %s" % (name, norm[1]))
        return ":".join(norm)
    raise ContainerCmdError("ulimits %s: %r is not N, -1, unlimited or soft:hard" % (name, value))


def _ulimits(spec):
    value = spec.get("ulimits")
    if value is None:
        value = DEFAULT_ULIMITS
    if not isinstance(value, dict):
        raise ContainerCmdError("ulimits must be a dict of name: value, got %r" % (value,))
    out = []
    # memlock and stack first (the tutorials' order), then the others by name
    for name in sorted(value, key=lambda n: (str(n) not in ("memlock", "stack"), str(n))):
        if not isinstance(name, str) or name not in ULIMIT_NAMES:
            raise ContainerCmdError("ulimits: %r is not one of %s" % (name, ", ".join(ULIMIT_NAMES)))
        if value[name] is None:
            continue
        out.append("%s=%s" % (name, _ulimit_value(name, value[name])))
    return out


def _path(key, value):
    if not isinstance(value, str) or not _PATH_RE.match(value) or "/../" in value + "/":
        raise ContainerCmdError("%s: %r is not an absolute path without ':', ',' or spaces" % (key, value))
    return value


def _mounts(spec):
    value = spec.get("mounts")
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ContainerCmdError("mounts must be a list, got %r" % (value,))
    out = []
    for item in value:
        if isinstance(item, str):
            parts = item.split(":")
            if len(parts) not in (2, 3):
                raise ContainerCmdError("mounts: %r is not src:dst or src:dst:ro" % (item,))
            item = {"src": parts[0], "dst": parts[1], "mode": parts[2] if len(parts) == 3 else "rw"}
        if not isinstance(item, dict):
            raise ContainerCmdError("mounts: %r is not a dict or a src:dst[:ro] string" % (item,))
        unknown = sorted(set(item) - {"src", "dst", "mode"})
        if unknown:
            raise ContainerCmdError("mounts: %r has unknown keys %s" % (item, ", ".join(map(str, unknown))))
        src = _path("mounts src", item.get("src"))
        dst = _path("mounts dst", item.get("dst", src))
        mode = item.get("mode", "rw")
        if mode not in ("rw", "ro"):
            raise ContainerCmdError("mounts %s: mode must be rw or ro, got %r" % (src, mode))
        out.append((src, dst, mode))
    return out


def _gpus(spec):
    value = spec.get("gpus", "all")
    if value is None or value == "all":
        return "all"
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not value:
        raise ContainerCmdError("gpus must be 'all' or a non-empty list of GPU indices, got %r" % (value,))
    out = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or item < 0:
            raise ContainerCmdError("gpus: %r is not a GPU index" % (item,))
        out.append(item)
    if len(set(out)) != len(out):
        raise ContainerCmdError("gpus: %r lists an index twice" % (value,))
    return out


def _vendor_flags(spec, engine, vendor, env, notes):
    flags = []
    gpus = _gpus(spec)
    if vendor == "amd":
        if gpus != "all":
            raise ContainerCmdError(
                "gpus: an AMD GPU subset is chosen with amd_render_nodes (the render nodes of gpu_info's devices), not indices")
        render = _str_list(spec, "amd_render_nodes", pattern=_PATH_RE, what="render node")
        for dev in ["/dev/kfd"] + (render or ["/dev/dri"]):
            flags += ["--device", dev]
        for group in _str_list(spec, "groups", AMD_GROUPS, pattern=_WORD_RE, what="group"):
            flags += ["--group-add", group]
        return flags, list(AMD_SECURITY_OPTS), list(AMD_CAP_ADD)
    if spec.get("amd_render_nodes"):
        raise ContainerCmdError("amd_render_nodes is only used with vendor amd, not %s" % vendor)
    if vendor == "nvidia":
        mode = _choice(spec, "nvidia_mode", NVIDIA_MODES, "auto")
        if mode == "auto":
            mode = "gpus" if engine == "docker" else "cdi"
            notes.append("nvidia_mode auto: %s on %s" % (mode, engine))
        if mode == "gpus":
            if engine != "docker":
                raise ContainerCmdError("nvidia_mode gpus (--gpus) is docker's; podman uses the toolkit's CDI spec (nvidia_mode cdi)")
            flags += ["--gpus", "all" if gpus == "all" else '"device=%s"' % ",".join(str(g) for g in gpus)]
        elif mode == "cdi":
            for dev in (["all"] if gpus == "all" else gpus):
                flags += ["--device", "nvidia.com/gpu=%s" % dev]
        else:
            flags += ["--runtime", "nvidia"]
            visible = "all" if gpus == "all" else ",".join(str(g) for g in gpus)
            if env.get("NVIDIA_VISIBLE_DEVICES", visible) != visible:
                raise ContainerCmdError("env NVIDIA_VISIBLE_DEVICES=%s disagrees with gpus %s" % (env["NVIDIA_VISIBLE_DEVICES"], visible))
            env["NVIDIA_VISIBLE_DEVICES"] = visible
        return flags, [], []
    if gpus != "all":
        raise ContainerCmdError("gpus: a GPU list needs vendor amd or nvidia, not none")
    return flags, [], []


def _workdir_env_flags(spec, env, passthrough):
    """--workdir, then -e NAME (passed through) and -e NAME=value (sorted), for run and exec alike."""
    flags = []
    workdir = spec.get("workdir")
    if workdir:
        flags += ["--workdir", _path("workdir", workdir)]
    for key in passthrough:
        flags += ["-e", key]
    for key in sorted(env):
        flags += ["-e", "%s=%s" % (key, env[key])]
    return flags


def _exec_command(spec, engine, env, passthrough):
    name = spec.get("name")
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ContainerCmdError("name: exec needs the name of a running container, got %r" % (name,))
    command = _str_list(spec, "command", what="argument")
    if not command:
        raise ContainerCmdError("command: exec needs a command")
    argv = [engine, "exec"] + _workdir_env_flags(spec, env, passthrough)
    flags = argv[2:]
    argv += [name] + command
    return {"argv": argv, "shell": " ".join(shlex.quote(a) for a in argv), "flags": flags,
            "config_hash": hashlib.sha256(json.dumps(argv).encode("utf-8")).hexdigest(), "notes": [], "mounts": []}


def container_command(spec):
    """Return the command line of the training container described by ``spec``."""
    if not isinstance(spec, dict):
        raise ContainerCmdError("the container definition must be a dict, got %s" % kind(spec))
    unknown = sorted(str(k) for k in spec if k not in _SPEC_KEYS)
    if unknown:
        raise ContainerCmdError("unknown keys %s (known: %s)" % (", ".join(unknown), ", ".join(_SPEC_KEYS)))
    action = _choice(spec, "action", ACTIONS, "run")
    engine = _choice(spec, "engine", ENGINES, "podman")
    env = _env(spec)
    passthrough = _str_list(spec, "env_passthrough", pattern=_ENV_RE, what="variable name")
    both = sorted(set(passthrough) & set(env))
    if both:
        raise ContainerCmdError("env_passthrough %s also set in env: give each variable one source" % ", ".join(both))
    if action == "exec":
        return _exec_command(spec, engine, env, passthrough)

    notes = []
    vendor = _choice(spec, "vendor", VENDORS, "none")
    mode = _choice(spec, "mode", MODES, "service")
    image = spec.get("image")
    if not isinstance(image, str) or not _IMAGE_RE.match(image):
        raise ContainerCmdError("image: %r is not an image reference" % (image,))
    name = spec.get("name")
    if name is not None and (not isinstance(name, str) or not _NAME_RE.match(name)):
        raise ContainerCmdError("name: %r is not a valid container name" % (name,))
    if mode == "service" and not name:
        raise ContainerCmdError("name: a service container needs a name")
    privileged = to_bool(spec.get("privileged"), "privileged", ContainerCmdError, default=False)

    flags = ["--detach"] if mode == "service" else ["--rm"]
    if name:
        flags += ["--name", name]
    restart = _choice(spec, "restart", RESTART_POLICIES, "no")
    if restart != "no":
        if mode != "service":
            raise ContainerCmdError("restart %s: only a service container restarts; a job container is removed when it ends" % restart)
        flags += ["--restart", restart]

    network = spec.get("network", "host") or "host"
    ipc = spec.get("ipc", "host") or "host"
    for key, val in (("network", network), ("ipc", ipc)):
        if not isinstance(val, str) or not _WORD_RE.match(val):
            raise ContainerCmdError("%s: %r is not a valid mode" % (key, val))
    flags += ["--network", network, "--ipc", ipc]
    shm = spec.get("shm_size")
    if shm not in (None, ""):
        if not isinstance(shm, str) or not _SIZE_RE.match(shm):
            raise ContainerCmdError("shm_size: %r is not a size such as 64g" % (shm,))
        if ipc == "host":
            notes.append("shm_size %s not passed: with --ipc host the container uses the host's /dev/shm "
                         "(docker ignores the size, podman refuses it)" % shm)
        else:
            flags += ["--shm-size", shm.lower()]
    for limit in _ulimits(spec):
        flags += ["--ulimit", limit]

    vendor_flags, security_opts, cap_add = _vendor_flags(spec, engine, vendor, env, notes)
    if privileged:
        flags.append("--privileged")
    flags += vendor_flags
    rdma = _str_list(spec, "rdma_devices", pattern=_PATH_RE, what="device")
    for dev in rdma + _str_list(spec, "devices", pattern=_PATH_RE, what="device"):
        flags += ["--device", dev]
    if rdma:
        cap_add.append("IPC_LOCK")
    opts_seen = set()
    for opt in security_opts + _str_list(spec, "security_opts", pattern=_WORD_RE, what="option"):
        if opt not in opts_seen:
            opts_seen.add(opt)
            flags += ["--security-opt", opt]
    seen = set()
    for cap in cap_add + _str_list(spec, "cap_add", pattern=_WORD_RE, what="capability"):
        cap = cap.upper()
        if cap.startswith("CAP_"):
            cap = cap[4:]
        if cap not in seen:
            seen.add(cap)
            flags += ["--cap-add", cap]
    if privileged and (seen or security_opts):
        notes.append("privileged: the explicit devices and capabilities are kept so the flags stay valid without it")

    mounts = _mounts(spec)
    topo = spec.get("topology_file")
    if topo:
        topo = _path("topology_file", topo)
        if env.get("NCCL_TOPO_FILE", topo) != topo:
            raise ContainerCmdError("env NCCL_TOPO_FILE=%s disagrees with topology_file %s" % (env["NCCL_TOPO_FILE"], topo))
        env["NCCL_TOPO_FILE"] = topo
        mounts.append((topo, topo, "ro"))
    nccl_conf = spec.get("nccl_conf")
    if nccl_conf:
        mounts.append((_path("nccl_conf", nccl_conf), "/etc/nccl.conf", "ro"))
    dsts = [m[1] for m in mounts]
    twice = sorted(set(d for d in dsts if dsts.count(d) > 1))
    if twice:
        raise ContainerCmdError("mounts: %s is mounted more than once" % ", ".join(twice))
    for src, dst, mmode in mounts:
        flags += ["--volume", "%s:%s%s" % (src, dst, ":ro" if mmode == "ro" else "")]

    flags += _workdir_env_flags(spec, env, passthrough)
    labels = spec.get("labels") or {}
    if not isinstance(labels, dict):
        raise ContainerCmdError("labels must be a dict, got %r" % (labels,))
    for key in sorted(labels, key=str):
        if not isinstance(key, str) or not _LABEL_RE.match(key) or key == CONFIG_LABEL:
            raise ContainerCmdError("labels: %r is not a valid label name" % (key,))
        flags += ["--label", "%s=%s" % (key, _env_value("label " + key, labels[key]))]
    extra = _str_list(spec, "extra_args", what="argument")
    command = _str_list(spec, "command", what="argument")

    definition = [engine, "run"] + flags + extra + [image] + command
    config_hash = hashlib.sha256(json.dumps(definition).encode("utf-8")).hexdigest()
    if mode == "service":
        flags += ["--label", "%s=%s" % (CONFIG_LABEL, config_hash)]
    flags += extra
    argv = [engine, "run"] + flags + [image] + command
    return {"argv": argv, "shell": " ".join(shlex.quote(a) for a in argv), "flags": flags,
            "config_hash": config_hash, "notes": notes,
            "mounts": [{"src": src, "dst": dst, "mode": mmode} for src, dst, mmode in mounts]}
