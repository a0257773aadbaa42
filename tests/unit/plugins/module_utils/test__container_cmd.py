# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The training container's command line, per engine and vendor (module_utils._container_cmd)."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.module_utils._container_cmd import (
    CONFIG_LABEL,
    ContainerCmdError,
    container_command,
)

IMAGE = "docker.io/rocm/megatron-lm:v25.5_py310"
NCCL = {"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1", "NCCL_IB_GID_INDEX": "3", "NCCL_SOCKET_IFNAME": "eth0"}


def pairs(flags):
    """(option, value) pairs of a flag list (every option here takes a value except the switches)."""
    out, i = [], 0
    while i < len(flags):
        if flags[i] in ("--detach", "--rm", "--privileged"):
            out.append((flags[i], None))
            i += 1
        else:
            out.append((flags[i], flags[i + 1]))
            i += 2
    return out


def test_amd_service_has_the_flags_rocm_documents():
    res = container_command({"engine": "docker", "vendor": "amd", "name": "megatron-training", "image": IMAGE,
                             "command": ["sleep", "infinity"], "rdma_devices": ["/dev/infiniband"], "env": NCCL,
                             "shm_size": "64g", "mounts": ["/data:/data:ro", {"src": "/ckpt", "dst": "/checkpoints"}],
                             "topology_file": "/etc/rccl/topo.xml"})
    argv = res["argv"]
    assert argv[:2] == ["docker", "run"] and argv[-3:] == [IMAGE, "sleep", "infinity"]
    p = pairs(res["flags"])
    for expected in [("--detach", None), ("--name", "megatron-training"), ("--network", "host"), ("--ipc", "host"),
                     ("--ulimit", "memlock=-1"), ("--ulimit", "stack=67108864"),
                     ("--device", "/dev/kfd"), ("--device", "/dev/dri"), ("--device", "/dev/infiniband"),
                     ("--group-add", "video"), ("--group-add", "render"),
                     ("--security-opt", "seccomp=unconfined"), ("--cap-add", "SYS_PTRACE"), ("--cap-add", "IPC_LOCK"),
                     ("--volume", "/data:/data:ro"), ("--volume", "/ckpt:/checkpoints"),
                     ("--volume", "/etc/rccl/topo.xml:/etc/rccl/topo.xml:ro"),
                     ("-e", "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1"), ("-e", "NCCL_IB_GID_INDEX=3"),
                     ("-e", "NCCL_TOPO_FILE=/etc/rccl/topo.xml"),
                     ("--label", CONFIG_LABEL + "=" + res["config_hash"])]:
        assert expected in p, expected
    # --ipc host: no --shm-size (podman refuses it, docker ignores it), and a note says so
    assert "--shm-size" not in res["flags"]
    assert any("shm_size 64g not passed" in n for n in res["notes"])
    assert "--privileged" not in res["flags"] and "--gpus" not in res["flags"]
    assert shlex.split(res["shell"]) == argv


def test_amd_render_node_subset_replaces_dev_dri():
    res = container_command({"vendor": "amd", "image": IMAGE, "mode": "job",
                             "amd_render_nodes": ["/dev/dri/renderD128", "/dev/dri/renderD129"], "groups": ["44", "993"]})
    p = pairs(res["flags"])
    assert ("--device", "/dev/dri") not in p
    assert [v for k, v in p if k == "--device"] == ["/dev/kfd", "/dev/dri/renderD128", "/dev/dri/renderD129"]
    assert [v for k, v in p if k == "--group-add"] == ["44", "993"]


@pytest.mark.parametrize("engine,mode,expected", [
    ("docker", "auto", ["--gpus", "all"]),
    ("docker", "gpus", ["--gpus", "all"]),
    ("podman", "auto", ["--device", "nvidia.com/gpu=all"]),
    ("docker", "cdi", ["--device", "nvidia.com/gpu=all"]),
    ("podman", "runtime", ["--runtime", "nvidia"]),
])
def test_nvidia_goes_through_the_container_toolkit(engine, mode, expected):
    res = container_command({"engine": engine, "vendor": "nvidia", "nvidia_mode": mode, "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                             "mode": "job"})
    flags = res["flags"]
    i = flags.index(expected[0])
    assert flags[i:i + 2] == expected
    assert "/dev/kfd" not in flags and "SYS_PTRACE" not in flags and "--group-add" not in flags
    assert ("--ulimit", "memlock=-1") in pairs(flags)
    if mode == "runtime":
        assert ("-e", "NVIDIA_VISIBLE_DEVICES=all") in pairs(flags)


def test_nvidia_gpu_subset_per_mode():
    base = {"vendor": "nvidia", "image": "nvcr.io/nvidia/pytorch:24.05-py3", "mode": "job", "gpus": [0, 3]}
    assert '"device=0,3"' in container_command(dict(base, engine="docker"))["flags"]
    podman = pairs(container_command(dict(base, engine="podman"))["flags"])
    assert ("--device", "nvidia.com/gpu=0") in podman and ("--device", "nvidia.com/gpu=3") in podman
    with pytest.raises(ContainerCmdError, match="podman uses the toolkit's CDI"):
        container_command(dict(base, engine="podman", nvidia_mode="gpus"))


def test_no_gpu_host_gets_no_gpu_flags_and_a_job_runs_in_the_foreground():
    res = container_command({"image": "localhost/test:1", "mode": "job", "command": ["python3", "-c", "print(1)"],
                             "env_passthrough": ["MASTER_ADDR", "SLURM_NODEID"], "ulimits": {"stack": 67108864, "nofile": "20000:20000"}})
    assert res["argv"][:3] == ["podman", "run", "--rm"]
    assert "--detach" not in res["flags"] and "--label" not in res["flags"]
    for flag in ("/dev/kfd", "/dev/dri", "--gpus", "--group-add", "--cap-add"):
        assert flag not in res["flags"]
    assert ("-e", "MASTER_ADDR") in pairs(res["flags"]) and ("-e", "SLURM_NODEID") in pairs(res["flags"])
    assert [v for k, v in pairs(res["flags"]) if k == "--ulimit"] == ["stack=67108864", "nofile=20000:20000"]
    assert res["shell"].endswith("localhost/test:1 python3 -c 'print(1)'")


def test_private_ipc_gets_the_shm_size():
    res = container_command({"image": "x:1", "mode": "job", "ipc": "private", "shm_size": "64G"})
    assert ("--shm-size", "64g") in pairs(res["flags"]) and not res["notes"]


def test_exec_in_the_long_lived_container():
    res = container_command({"action": "exec", "engine": "docker", "name": "megatron-training",
                             "command": ["bash", "-c", "cd /workspace/Megatron-LM && bash examples/llama/train_llama2.sh"],
                             "env_passthrough": ["NODE_RANK"], "env": {"TP": 8, "TE_FP8": True}})
    assert res["argv"][:2] == ["docker", "exec"]
    assert res["argv"][res["argv"].index("megatron-training") - 6:res["argv"].index("megatron-training")] == [
        "-e", "NODE_RANK", "-e", "TE_FP8=1", "-e", "TP=8"]


def test_the_mounts_are_returned_as_the_container_sees_them():
    # what the training_jobs preflight reads to refuse an output directory the --rm container would take with it
    res = container_command({"vendor": "none", "image": IMAGE, "mode": "job", "topology_file": "/etc/gpucluster/topo.xml",
                             "mounts": ["/srv/data:/data:ro", {"src": "/srv/ckpt", "dst": "/checkpoints"}]})
    assert res["mounts"] == [{"src": "/srv/data", "dst": "/data", "mode": "ro"},
                             {"src": "/srv/ckpt", "dst": "/checkpoints", "mode": "rw"},
                             {"src": "/etc/gpucluster/topo.xml", "dst": "/etc/gpucluster/topo.xml", "mode": "ro"}]
    assert container_command({"action": "exec", "name": "megatron-training", "command": ["true"]})["mounts"] == []


def test_config_hash_follows_the_definition_only():
    spec = {"vendor": "amd", "name": "m", "image": IMAGE}
    assert container_command(spec)["config_hash"] == container_command(dict(spec))["config_hash"]
    assert container_command(spec)["config_hash"] != container_command(dict(spec, env={"A": "1"}))["config_hash"]


@pytest.mark.parametrize("spec,message", [
    ({"image": IMAGE, "engine": "lxc", "name": "m"}, "engine must be one of docker, podman"),
    ({"image": IMAGE, "vendor": "intel", "name": "m"}, "vendor must be one of"),
    ({"image": IMAGE}, "a service container needs a name"),
    ({"image": "bad image", "name": "m"}, "image"),
    ({"image": IMAGE, "name": "m", "mounts": ["data:/data"]}, "not an absolute path"),
    ({"image": IMAGE, "name": "m", "mounts": ["/a:/x", "/b:/x"]}, "/x is mounted more than once"),
    ({"image": IMAGE, "name": "m", "mounts": [{"src": "/a", "dst": "/b", "mode": "rx"}]}, "mode must be rw or ro"),
    ({"image": IMAGE, "name": "m", "env": {"1BAD": "x"}}, "not a valid variable name"),
    ({"image": IMAGE, "name": "m", "env": {"A": [1]}}, "not a string or number"),
    ({"image": IMAGE, "name": "m", "env": {"A": "1"}, "env_passthrough": ["A"]}, "one source"),
    ({"image": IMAGE, "name": "m", "ulimits": {"memlock": "lots"}}, "ulimits memlock"),
    ({"image": IMAGE, "name": "m", "ulimits": {"stack": "10:5"}}, "above the hard limit"),
    ({"image": IMAGE, "name": "m", "ulimits": {"files": 1}}, "is not one of"),
    ({"image": IMAGE, "name": "m", "shm_size": "lots"}, "shm_size"),
    ({"image": IMAGE, "name": "m", "vendor": "amd", "gpus": [0]}, "amd_render_nodes"),
    ({"image": IMAGE, "name": "m", "vendor": "none", "gpus": [0]}, "needs vendor amd or nvidia"),
    ({"image": IMAGE, "name": "m", "amd_render_nodes": ["/dev/dri/renderD128"]}, "only used with vendor amd"),
    ({"image": IMAGE, "name": "m", "topology_file": "/t.xml", "env": {"NCCL_TOPO_FILE": "/u.xml"}}, "disagrees"),
    ({"image": IMAGE, "name": "m", "colour": "blue"}, "unknown keys colour"),
    ({"action": "exec", "name": "m"}, "exec needs a command"),
    ({"image": IMAGE, "name": "m", "labels": {CONFIG_LABEL: "x"}}, "not a valid label name"),
    ("docker run", "must be a dict"),
])
def test_bad_definitions_are_named(spec, message):
    with pytest.raises(ContainerCmdError, match=message):
        container_command(spec)


_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=12),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                       max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["action", "engine", "vendor", "nvidia_mode", "gpus", "mode", "name", "image", "command",
                                        "network", "ipc", "shm_size", "ulimits", "privileged", "rdma_devices", "env",
                                        "env_passthrough", "topology_file", "mounts", "labels", "groups", "amd_render_nodes"]),
                       _values, max_size=8))
def test_any_input_gives_a_command_or_the_modules_own_error(spec):
    """Synthetic, random definitions: never an exception other than ContainerCmdError."""
    try:
        res = container_command(spec)
    except ContainerCmdError:
        return
    assert res["argv"][0] in ("docker", "podman")
    assert shlex.split(res["shell"]) == res["argv"]
