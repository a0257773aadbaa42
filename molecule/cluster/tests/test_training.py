# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Training stage (megatron, training_jobs) after the other stages of site.yml, on a real
3-container Slurm cluster.

GPUs and RDMA are SIMULATED (see molecule.yml); the Slurm daemons, the nested training
container and the 2-node CPU torchrun smoke job are real.
"""
import json
import re
import shlex

import pytest

JOBS = "/opt/gpucluster/jobs"
LOGS = "/var/log/gpucluster/jobs"
CONTAINER = "megatron-training"


def hostname(host):
    return host.check_output("hostname")


def on_controller(host):
    return hostname(host) == "cluster-ctl1"


@pytest.mark.parametrize("job", ["llama2_pretrain", "finetune", "smoke"])
def test_rendered_jobs_pass_sbatch_test_only(host, job):
    if not on_controller(host):
        pytest.skip("job scripts live on the submit host")
    res = host.run("sbatch --test-only %s/%s.sbatch", JOBS, job)
    assert res.rc == 0, res.stderr
    assert "to start at" in res.stderr, res.stderr


def test_megatron_job_has_the_planned_layout_and_rendezvous(host):
    if not on_controller(host):
        pytest.skip("job scripts live on the submit host")
    text = host.file("%s/llama2_pretrain.sbatch" % JOBS).content_string
    # the layout of molecule.yml on 2 x 4 (simulated) GPUs: TP 4, DP 2
    for line in ["#SBATCH --nodes=2", "#SBATCH --gres=gpu:4", "export TP=4", "export PP=1", "export CP=1",
                 "export MBS=4", "export BS=64", "export SEQ_LENGTH=4096", "export TE_FP8=1", "export MODEL_SIZE=7",
                 "export NNODES=2", "export NCCL_DEBUG=WARN",
                 "#SBATCH --output=%s/%%x-%%j.out" % LOGS]:
        assert line in text.splitlines(), line
    assert 'MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"' in text
    assert "TP 4 x PP 1 x CP 1 x DP 2" in text


def step_script(host, name, launch="exec "):
    """The text of the step script ``name`` on a compute node and its line starting with ``launch`` (skips on the
    controller)."""
    if on_controller(host):
        pytest.skip("step scripts live on the compute nodes")
    text = host.file("%s/%s.step.sh" % (JOBS, name)).content_string
    return text, [x for x in text.splitlines() if x.startswith(launch)][0]


def test_megatron_step_execs_into_the_training_container(host):
    # in the background, marked, with a trap that stops it in the container (podman exec passes no signal on:
    # side_effect.yml case 12 cancels such a step)
    text, line = step_script(host, "megatron", launch='GPUCLUSTER_STEP="$step_id" podman exec ')
    assert line.endswith(" &") and "trap stop_step TERM INT HUP" in text.splitlines()
    line = line[:-2]
    assert " -e GPUCLUSTER_STEP " in line
    for var in ["NODE_RANK", "NNODES", "MASTER_ADDR", "TP", "PP", "TE_FP8", "NCCL_SOCKET_IFNAME", "NCCL_IB_DISABLE"]:
        assert " -e %s " % var in line, var
    # the program run in the container: train_llama2.sh with torchrun's own exit status kept (the script exits 0
    # after a failed run)
    words = shlex.split(line)
    assert words[-4:-1] == [CONTAINER, "bash", "-c"], words[-4:]
    assert words[-1].startswith("cd /workspace/Megatron-LM || exit 1; ")
    assert "; bash examples/llama/train_llama2.sh; script_rc=$?; " in words[-1] and words[-1].endswith('exit "$rc"')
    assert 'NODE_RANK="${NODE_RANK:-${SLURM_NODEID:?' in text


def test_finetune_step_runs_torchrun_in_the_image_with_the_tutorials_arguments(host):
    text, line = step_script(host, "finetune")
    assert line.startswith("exec podman run --rm ")
    # nproc_per_node from the (simulated) probed GPU count; rank variables passed in
    assert "--nproc_per_node 4" in line
    assert '--node_rank "$NODE_RANK"' in line and '--master_addr "$MASTER_ADDR"' in line
    # the command run in the container: bash -c '<torchrun line>', quoted once more for the host shell
    inner = shlex.split(shlex.split(line)[-1])
    pairs = dict(zip(inner[inner.index("train.py") + 1::2], inner[inner.index("train.py") + 2::2]))
    assert pairs["--fsdp"] == "full_shard auto_wrap" and pairs["--output_dir"] == "/checkpoints/alpaca"
    assert pairs["--fsdp_transformer_layer_cls_to_wrap"] == "LlamaDecoderLayer"
    assert pairs["--learning_rate"] == "2e-5" and pairs["--gradient_accumulation_steps"] == "8"
    assert "--tf32" not in pairs  # AMD nodes: TF32 is an NVIDIA mode
    assert " -e WANDB_MODE " in line and "export WANDB_MODE=disabled" in text


def test_training_container_runs_with_the_derived_flags(host):
    if on_controller(host):
        pytest.skip("the container runs on the compute nodes")
    info = json.loads(host.check_output("podman container inspect %s", CONTAINER))[0]
    assert info["State"]["Running"]
    assert info["Config"]["Labels"]["gpucluster.training.config"]
    hc = info["HostConfig"]
    assert hc["NetworkMode"] == "host"
    # --ipc host / --network host: the container shares the node's namespaces (podman 4.3's
    # inspect shows IpcMode "shareable" even so)
    for ns in ("ipc", "net"):
        assert host.check_output("podman exec %s readlink /proc/self/ns/%s", CONTAINER, ns) == host.check_output(
            "readlink /proc/1/ns/%s", ns)
    assert "SYS_PTRACE" in " ".join(hc.get("CapAdd") or [])
    assert "seccomp=unconfined" in (hc.get("SecurityOpt") or [])
    # podman-restart.service starts only restart-policy=always containers at boot (podman 4)
    assert hc["RestartPolicy"]["Name"] == "always"
    assert host.service("podman-restart").is_enabled


def test_the_containers_pid_1_reaps_what_steps_leave(host):
    if on_controller(host):
        pytest.skip("the container runs on the compute nodes")
    # side_effect case 12 killed a cancelled step's processes in the container: their children were re-parented to
    # PID 1, which `sleep infinity` never reaped (zombies count against the pids limit)
    states = host.check_output("podman exec %s bash -c %s", CONTAINER,
                               'for p in /proc/[0-9]*/stat; do cut -d" " -f3 "$p" 2>/dev/null; done')
    assert "Z" not in states.split(), states
    assert "trap" in host.check_output("podman exec %s cat /proc/1/cmdline", CONTAINER)


def test_inside_the_container(host):
    if on_controller(host):
        pytest.skip("the container runs on the compute nodes")

    def inside(cmd):
        return host.check_output("podman exec %s sh -c %s", CONTAINER, cmd)

    assert "molecule/cluster test image" in inside("cat /etc/gpucluster-megatron-test-image")
    assert inside("ulimit -s") == "65536"  # --ulimit stack=67108864 (bytes) = 65536 KiB
    env = dict(line.split("=", 1) for line in inside("env").splitlines() if "=" in line)
    # what the rdma role derived on this node from its (simulated) ports: the stages compose
    assert env["NCCL_SOCKET_IFNAME"] == "=eth0" and env["NCCL_IB_DISABLE"] == "0"
    assert env["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1" and env["NCCL_IB_GID_INDEX"] == "3"
    assert env["NCCL_TOPO_FILE"] == "/etc/gpucluster/topo.xml" and env["MEGATRON_TEST"] == "1"
    assert "TEST STAND-IN topology" in inside("cat /etc/gpucluster/topo.xml")
    assert "NCCL_IB_GID_INDEX=3" in inside("cat /etc/nccl.conf").splitlines()
    mounts = inside("cat /proc/self/mounts")
    assert re.search(r" /data ", mounts) and re.search(r" /checkpoints ", mounts)
    caps = int(inside("grep CapEff /proc/self/status").split()[1], 16)
    assert caps & (1 << 19)  # CAP_SYS_PTRACE


def test_smoke_job_completed_on_two_nodes_with_rank0_loss(host):
    if not on_controller(host):
        pytest.skip("sacct answers on the controller")
    # side_effect.yml cancels one smoke job on purpose (its timeout case): the others must have completed
    lines = [line for line in host.check_output("sacct -X -n -P --name smoke -S now-3600 -o JobID,NNodes,NodeList,State,ExitCode").splitlines()
             if "|CANCELLED" not in line]
    assert lines, "no smoke job in the accounting"
    job_id, nnodes, nodelist, state, exit_code = lines[-1].split("|")
    assert (nnodes, state, exit_code) == ("2", "COMPLETED", "0:0"), lines[-1]
    first = host.check_output("scontrol show hostnames %s", nodelist).splitlines()[0]
    assert first in ("cluster-gpu1", "cluster-gpu2")


def test_smoke_log_has_both_nodes_and_a_falling_loss(host):
    if on_controller(host):
        pytest.skip("job logs live on the compute nodes")
    logs = host.run("ls %s/smoke-*.out", LOGS).stdout.split()
    if not logs:
        pytest.skip("this node was not the first node of the smoke job")
    text = host.file(sorted(logs)[-1]).content_string
    assert re.search(r"^(\[default0\]:)?smoke: world_size=2 backend=gloo ranks=cluster-gpu\d/0,cluster-gpu\d/0$", text, re.M), text
    assert "cluster-gpu1" in text and "cluster-gpu2" in text
    losses = [float(x) for x in re.findall(r"^(?:\[default0\]:)?smoke: step \d+ loss ([0-9.]+)$", text, re.M)]
    assert len(losses) == 5 and losses[-1] < losses[0], text
    assert "smoke: done" in text
