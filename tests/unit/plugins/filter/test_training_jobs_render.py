# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Megatron node step always exports NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME and NCCL_IB_GID_INDEX.

ROCm's train_llama2.sh sets them to its own defaults (ens51np0, 3) when they are unset. The step
script is rendered from the role's template (SIMULATED node: interface eno1, env files written by
the test) and run with bash up to the container launch, which is replaced by `env`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from ansible_collections.gpucluster.training.tests.unit.plugins.filter import role_render

SPEC = {"engine": "docker", "vendor": "amd", "image": "rocm/megatron-lm:v25.5", "mode": "job"}


def step_env(tmp_path, nccl_env, hcas, iface="eno1"):
    env_file = tmp_path / "nccl.env"
    env_file.write_text("".join("%s=%s\n" % item for item in nccl_env.items()))
    tmpl = role_render.templar("training_jobs", ("defaults/main.yml", "vars/main.yml"), {
        "ansible_managed": "test", "inventory_hostname": "gpu1", "ansible_facts": {"default_ipv4": {"interface": iface}} if iface else {},
        "__training_jobs_nccl_names": list(nccl_env), "rdma_nccl_hcas": hcas, "megatron_job_spec": SPEC,
        "training_jobs_nccl_env_file": str(env_file)})
    script = role_render.render_template(tmpl, "training_jobs", "megatron.step.sh.j2")
    assert "-e NCCL_SOCKET_IFNAME" in script and "-e GLOO_SOCKET_IFNAME" in script and "-e NCCL_IB_GID_INDEX" in script
    body = script.split("\n# The step: ", 1)[0] + "\nenv\n"
    run = subprocess.run(["bash", "-c", body], capture_output=True, text=True, check=False, timeout=30,
                         env={"PATH": "/usr/bin:/bin", "SLURM_NNODES": "2", "SLURM_NODEID": "0", "MASTER_ADDR": "gpu1", "TP": "8"})
    if run.returncode:
        return None, run.stderr
    return dict(line.split("=", 1) for line in run.stdout.splitlines() if "=" in line), run.stderr


def test_derived_roce_values_are_exported(tmp_path):
    env = step_env(tmp_path, {"NCCL_SOCKET_IFNAME": "=eno1", "NCCL_IB_GID_INDEX": "5", "NCCL_IB_HCA": "=mlx5_0:1"},
                   [{"link_layer": "Ethernet"}])[0]
    assert env["NCCL_SOCKET_IFNAME"] == "=eno1" and env["GLOO_SOCKET_IFNAME"] == "eno1" and env["NCCL_IB_GID_INDEX"] == "5"


def test_underived_values_get_this_nodes_not_the_scripts(tmp_path):
    # InfiniBand: no GID index derived; the socket interface was left unset by nccl_env
    env = step_env(tmp_path, {"NCCL_IB_HCA": "=mlx5_0:1"}, [{"link_layer": "InfiniBand"}])[0]
    assert env["NCCL_SOCKET_IFNAME"] == "=eno1" and env["GLOO_SOCKET_IFNAME"] == "eno1" and env["NCCL_IB_GID_INDEX"] == "0"


def test_roce_without_gid_index_fails_loudly(tmp_path):
    env, err = step_env(tmp_path, {"NCCL_SOCKET_IFNAME": "=eno1"}, [{"link_layer": "Ethernet"}])
    assert env is None and "set rdma_gid_index" in err


def test_exclusion_list_stays_for_nccl_and_gloo_gets_an_interface(tmp_path):
    env = step_env(tmp_path, {"NCCL_SOCKET_IFNAME": "^docker0,lo", "NCCL_IB_GID_INDEX": "3"}, [{"link_layer": "Ethernet"}])[0]
    assert env["NCCL_SOCKET_IFNAME"] == "^docker0,lo" and env["GLOO_SOCKET_IFNAME"] == "eno1"


@pytest.mark.parametrize("nccl_env", [{}, {"NCCL_SOCKET_IFNAME": "^docker0"}])
def test_no_interface_at_all_fails_loudly(tmp_path, nccl_env):
    env, err = step_env(tmp_path, nccl_env, [{"link_layer": "InfiniBand"}], iface=None)
    assert env is None and "set rdma_socket_ifname" in err


# --- the step's exit status: torchrun's, not train_llama2.sh's ---------------------------------

# SYNTHETIC: the end of ROCm's examples/llama/train_llama2.sh as published (ROCm/Megatron-LM): no
# "set -e", torchrun run by eval through tee, then the throughput summary and "rm tmp.txt", whose
# status is the script's.
TRAIN_SCRIPT = """#!/bin/bash
run_cmd="torchrun --nnodes 2 pretrain_gpt.py"
TRAIN_LOG=train.log
run_cmd="$run_cmd |& tee $TRAIN_LOG"
eval $run_cmd
grep -Eo 'throughput per GPU [^|]*' $TRAIN_LOG > tmp.txt
echo "throughput per GPU: n/a" |& tee -a $TRAIN_LOG
rm tmp.txt
"""


def stage_step(tmp_path, docker, torchrun, script=TRAIN_SCRIPT, **variables):
    """The Megatron node step rendered for a Megatron-LM checkout under ``tmp_path`` holding ``script``, with the
    test doubles ``docker`` and ``torchrun`` (their texts) in the returned bin folder, ``variables`` over the role's."""
    work = tmp_path / "Megatron-LM"
    (work / "examples" / "llama").mkdir(parents=True)
    (work / "examples" / "llama" / "train_llama2.sh").write_text(script)
    fake = tmp_path / "bin"
    fake.mkdir()
    for tool, text in (("docker", docker), ("torchrun", torchrun)):
        (fake / tool).write_text(text)
        (fake / tool).chmod(0o755)
    tmpl = role_render.templar("training_jobs", ("defaults/main.yml", "vars/main.yml"), dict({
        "ansible_managed": "test", "inventory_hostname": "gpu1", "ansible_facts": {"default_ipv4": {"interface": "eno1"}},
        "__training_jobs_nccl_names": [], "rdma_nccl_hcas": [], "megatron_job_spec": SPEC,
        "training_jobs_nccl_env_file": str(tmp_path / "none"), "training_jobs_megatron_workdir": str(work)}, **variables))
    return role_render.render_template(tmpl, "training_jobs", "megatron.step.sh.j2"), fake


def wait_for(path):
    for _attempt in range(100):
        if path.exists():
            return
        time.sleep(0.1)


def run_step(tmp_path, torchrun_rc, script=TRAIN_SCRIPT):
    env_file = tmp_path / "nccl.env"
    env_file.write_text("NCCL_SOCKET_IFNAME==eno1\nNCCL_IB_GID_INDEX=3\n")
    script_text, fake = stage_step(
        tmp_path,
        # the container engine: runs the step's "bash -c <program>" here
        '#!/bin/bash\nwhile [ $# -gt 0 ]; do\n  if [ "$1" = bash ] && [ "$2" = -c ]; then exec bash -c "$3"; fi\n'
        '  shift\ndone\nexit 99\n',
        "#!/bin/sh\necho \"torchrun $*\"\nexit %d\n" % torchrun_rc, script=script,
        __training_jobs_nccl_names=["NCCL_SOCKET_IFNAME", "NCCL_IB_GID_INDEX"], rdma_nccl_hcas=[{"link_layer": "Ethernet"}],
        training_jobs_nccl_env_file=str(env_file))
    return subprocess.run(["bash", "-c", script_text], capture_output=True, text=True, check=False, timeout=30, cwd=tmp_path,
                          env={"PATH": "%s:/usr/bin:/bin" % fake, "SLURM_NNODES": "2", "SLURM_NODEID": "0", "MASTER_ADDR": "gpu1",
                               "TP": "8"})


@pytest.mark.parametrize("torchrun_rc", [0, 1, 137])
def test_the_step_exits_with_torchruns_status(tmp_path, torchrun_rc):
    # before, "exec bash train_llama2.sh" returned rm's 0 after a failed torchrun: the job was COMPLETED
    run = run_step(tmp_path, torchrun_rc)
    assert run.returncode == torchrun_rc, run.stdout + run.stderr
    assert "torchrun --nnodes 2 pretrain_gpt.py" in run.stdout
    assert ("torchrun exited %d on" % torchrun_rc in run.stderr) is (torchrun_rc != 0), run.stderr


def test_a_script_that_never_runs_torchrun_fails_the_step(tmp_path):
    run = run_step(tmp_path, 0, script="#!/bin/bash\necho 'no data path'\nexit 0\n")
    assert run.returncode == 1 and "without running torchrun" in run.stderr, run.stderr


# --- exec mode: a signalled step stops its own processes in the container -----------------------

def processes(match):
    """PIDs of live processes for which ``match(stat fields after the name, cmdline)`` holds (from /proc, no
    procps needed)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % pid) as handle:
                stat = handle.read().rsplit(")", 1)[1].split()
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        if match(stat, cmdline):
            out.append(int(pid))
    return out


def marked(step_id):
    """PIDs of live processes whose environment holds GPUCLUSTER_STEP=<step_id>."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/environ" % pid, "rb") as handle:
                if ("GPUCLUSTER_STEP=%s" % step_id).encode() in handle.read().split(b"\0"):
                    out.append(int(pid))
        except OSError:
            pass
    return out


@pytest.mark.parametrize("ignores_term", [False, True])
def test_a_signalled_exec_step_stops_what_it_started_in_the_container(tmp_path, ignores_term):
    # SIMULATED engine: "docker exec" starts the program here in a session of its own, the client waiting for it and
    # dying on TERM without passing it on, as podman exec and docker exec do (the processes stay). The
    # step script, its trap and its stopping program are the rendered ones.
    # Like a container, the program sees only the variables passed with -e.
    script, fake = stage_step(
        tmp_path,
        '#!/bin/bash\nkeep=("PATH=$PATH")\nwhile [ $# -gt 0 ]; do\n'
        '  if [ "$1" = -e ]; then keep+=("$2=${!2}"); shift 2; continue; fi\n'
        '  if [ "$1" = bash ] && [ "$2" = -c ]; then\n'
        '    setsid env -i "${keep[@]}" bash -c "$3" & wait $!; exit $?\n  fi\n  shift\ndone\nexit 99\n',
        "#!/bin/bash\n%ssleep 300 &\nsleep 300 &\ntouch %s/started\nwait\n" % ("trap '' TERM\n" if ignores_term else "", tmp_path),
        training_jobs_megatron_stop_grace=2)
    job = "%d" % os.getpid()
    step = subprocess.Popen(["bash", "-c", script], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"PATH": "%s:/usr/bin:/bin" % fake, "SLURM_NNODES": "1", "SLURM_NODEID": "0",
                                 "MASTER_ADDR": "gpu1", "TP": "1", "SLURM_JOB_ID": job, "SLURM_STEP_ID": "0"})
    try:
        wait_for(tmp_path / "started")
        step_id = "%s.0.0.%d" % (job, step.pid)
        assert len(marked(step_id)) >= 4, "the step's processes do not carry its mark"
        # Slurm signals every process of the step: the script and the engine's client
        os.kill(step.pid, signal.SIGTERM)
        for pid in processes(lambda stat, cmdline: stat[1] == str(step.pid) and b"/bin/docker\0" in cmdline):
            os.kill(pid, signal.SIGTERM)
        out, err = step.communicate(timeout=20)
        assert step.returncode == 143, out + err
        assert "stopping its processes" in err
        assert ("killed what was left of step %s" % step_id in err) is ignores_term, err
        assert marked(step_id) == []
    finally:
        step.kill()
        for pid in marked("%s.0.0.%d" % (job, step.pid)):
            os.kill(pid, signal.SIGKILL)


# --- run mode: the program is the container's PID 1 ----------------------------------------------

def _can_unshare_pid():
    try:
        run = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True, check=False, timeout=10)
        return run.returncode == 0
    except OSError:
        return False


@pytest.mark.skipif(not _can_unshare_pid(), reason="needs unshare --pid (root): the program must be PID 1 of a namespace")
@pytest.mark.parametrize("ignores_term", [False, True])
def test_a_signalled_run_step_stops_every_process_of_its_container(tmp_path, ignores_term):
    # SIMULATED engine: "docker run" runs the program as PID 1 of a new PID namespace (unshare), the one thing
    # about a container that matters here (the kernel gives PID 1 no signal it has no handler for), and passes
    # TERM on to it as podman run and docker run do (--sig-proxy). The step script and its program are the
    # rendered ones. Before, PID 1 ignored the TERM and the container outlived the step.
    script, fake = stage_step(
        tmp_path,
        '#!/bin/bash\nkeep=("PATH=$PATH")\nwhile [ $# -gt 0 ]; do\n'
        '  if [ "$1" = -e ]; then keep+=("$2=${!2}"); shift 2; continue; fi\n'
        '  if [ "$1" = bash ] && [ "$2" = -c ]; then\n'
        '    unshare --pid --fork --mount-proc env -i "${keep[@]}" bash -c "$3" & ns=$!\n'
        '    trap \'kill -TERM $(cat /proc/$ns/task/$ns/children)\' TERM\n'
        '    while kill -0 $ns 2>/dev/null; do wait $ns; rc=$?; done; exit $rc\n  fi\n  shift\ndone\nexit 99\n',
        "#!/bin/bash\n%ssleep 301.5 &\nsleep 301.5 &\ntouch %s/started\nwait\n" % ("trap '' TERM\n" if ignores_term else "", tmp_path),
        training_jobs_megatron_stop_grace=2, training_jobs_megatron_launch="run")
    assert "\nexec docker run --rm " in script
    step = subprocess.Popen(["bash", "-c", script], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"PATH": "%s:/usr/bin:/bin:/usr/sbin:/sbin" % fake, "SLURM_NNODES": "1", "SLURM_NODEID": "0",
                                 "MASTER_ADDR": "gpu1", "TP": "1"})
    try:
        wait_for(tmp_path / "started")
        assert (tmp_path / "started").exists(), "the stand-in torchrun never ran"
        os.kill(step.pid, signal.SIGTERM)
        out, err = step.communicate(timeout=20)
        assert step.returncode == 143, out + err
        assert "its processes in the container were stopped" in err, err
    finally:
        step.kill()
        for pid in processes(lambda stat, cmdline: cmdline == b"sleep\x00301.5\x00"):
            os.kill(pid, signal.SIGKILL)
