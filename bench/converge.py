# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How close site.yml converges to the floor (issue 16). Run through `make bench` or bench/converge.

A bench lab of one controller (bench-ctl1) and N compute containers (bench-gpu1..N) from the lab's
node image on the podman network gpucluster-bench (10.89.60.0/24). The inventory is generated
under .tmp/bench/ from inventories/lab's group_vars (the same policy and the same SIMULATED
hardware: tests/sim/lab_hardware.yml builds each compute node's sysfs tree from real captures).
Inside the containers the hosts are named as in the lab (ctl1, gpu1, ...).

Parts (BENCH_PARTS, comma-separated; default all):
  floor    gather facts + one ping on every host
  cold     site.yml stages base + slurm on fresh containers, and the physical limit: one
           `apt-get update && apt-get install` per host of the packages those stages installed
           (read back from the converged hosts), all hosts in parallel, no daemon started during
           it (policy-rc.d), plus the floor
  rerun    whole site.yml on a converged lab (changed=0 expected), and each stage alone
  sweep    the rerun of stages base, rdma, slurm (each, and together) at BENCH_SIZES compute nodes
Environment: BENCH_NODES (compute nodes for floor/cold/rerun, default 2), BENCH_STAGES (the stages
rerun alone, default every stage and base+slurm; '+' joins stages), BENCH_SIZES (default
2,4,8,16), BENCH_REPEAT (runs per figure, median, default 3), BENCH_SWEEP_REPEAT (default
BENCH_REPEAT), BENCH_SWEEP_STAGES (base,rdma,slurm,base+rdma+slurm), BENCH_CONVERGE=0 (the lab is
converged already: no untimed converge before the reruns), BENCH_CONNECTIONS (podman,ssh),
BENCH_NOTE (a note on the machine, kept in the results), BENCH_FORKS (a number, or 'hosts': one
fork per host, the default), BENCH_KEEP=1 keeps the containers at the end, BENCH_RESULTS (the folder
of the results, default bench/results: a partial run elsewhere keeps the last whole run's figures).
Over SSH each ansible-playbook run also counts its remote commands per host (every ssh call, through
.tmp/bench/ssh-count; with pipelining a module call is one): a figure the machine's load does not change.
Writes converge.json and converge.png there; logs in .tmp/bench/logs/.
"""

from __future__ import annotations

import configparser
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins" / "module_utils"))
from _validate_plot import COLOURS, _Canvas  # noqa: E402  pylint: disable=wrong-import-position,import-error

TMP = ROOT / ".tmp" / "bench"
LOGS = TMP / "logs"
RESULTS = Path(os.environ.get("BENCH_RESULTS") or ROOT / "bench" / "results").resolve()
NET, SUBNET, PREFIX = "gpucluster-bench", "10.89.60.0/24", "bench-"
IMAGE = os.environ.get("BENCH_IMAGE", "localhost/gpucluster-node:trixie")
SSH_KEY = ROOT / ".tmp" / "ssh" / "id_ed25519"
STAGES = ["base", "gpu_driver", "rdma", "slurm", "training", "validate"]
SWEEP_STAGES = {"base": ["base"], "rdma": ["rdma"], "slurm": ["slurm"], "base+rdma+slurm": ["base", "rdma", "slurm"]}
GOALS = {"rerun_over_floor": 4.0, "cold_over_limit": 1.5, "sweep_growth": 1.5, "probe_seconds": 1.0}
ENV = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_FORCE_COLOR="false",
           CONTAINERS_CONF=os.environ.get("CONTAINERS_CONF", str(ROOT / "tools" / "containers.conf")),
           PATH="%s:%s" % (ROOT / ".venv" / "bin", os.environ.get("PATH", "")),
           ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks,ansible.posix.timer,gpucluster.training.preload",
           PROFILE_TASKS_TASK_OUTPUT_LIMIT="all", ANSIBLE_DEPRECATION_WARNINGS="false")


class BenchError(RuntimeError):
    """A step of the bench failed (the message names its log)."""


def say(*words):
    print("bench:", *words, flush=True)


def env_list(name, default):
    return [w for w in re.split(r"[,\s]+", os.environ.get(name, default)) if w]


def median(values):
    return round(statistics.median(values), 2) if values else None


def sh(*argv, check=True, stdin=None):
    out = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=ENV, check=False)
    if check and out.returncode != 0:
        raise BenchError("%s failed (rc %d): %s" % (" ".join(argv[:4]), out.returncode, (out.stderr or out.stdout).strip()[-600:]))
    return out.stdout


# --- the bench lab -------------------------------------------------------------------------

def names(nodes):
    return ["ctl1"] + ["gpu%d" % i for i in range(1, nodes + 1)]


def address(name):
    return "10.89.60.%d" % (10 if name == "ctl1" else 10 + int(name[3:]))


def running():
    out = sh("podman", "ps", "-a", "--filter", "name=^" + PREFIX, "--format", "{{.Names}}")
    return [n for n in out.split() if n.startswith(PREFIX)]


def remove_all():
    have = running()
    if have:
        sh("podman", "rm", "-f", "-t", "2", *have)


def seed_archive(name):
    """Each host has its own apt archive (apt locks it); a new one starts from the lab host of
    the same role, hard-linked, so the bench measures installing, not this machine's network."""
    archive = ROOT / ".tmp" / "apt-archives" / (PREFIX + name)
    (archive / "partial").mkdir(parents=True, exist_ok=True)
    source = ROOT / ".tmp" / "apt-archives" / ("ctl1" if name == "ctl1" else "gpu1")
    for deb in source.glob("*.deb") if source.is_dir() else []:
        target = archive / deb.name
        if not target.exists():
            try:
                os.link(deb, target)
            except OSError:
                shutil.copy2(deb, target)
    return archive


def up(nodes):
    """The bench lab with `nodes` compute containers (the ones present are kept)."""
    if subprocess.run(["podman", "network", "exists", NET], env=ENV, check=False).returncode != 0:
        sh("podman", "network", "create", "--subnet", SUBNET, NET)
    have = set(running())
    (TMP / "shared").mkdir(parents=True, exist_ok=True)
    # The fine-tuning venv's pinned wheels, as the lab has them (tools/lab-wheels.sh; pip keeps
    # what it fetched before): without them site.yml's training stage fails on a new machine.
    sh(str(ROOT / "tools" / "lab-wheels.sh"))
    new = [n for n in names(nodes) if PREFIX + n not in have]
    for name in new:
        archive = seed_archive(name)
        sh("podman", "run", "-d", "--name", PREFIX + name, "--hostname", name, "--network", NET,
           "--ip", address(name), "--privileged", "--systemd", "always", "--label", "gpucluster.bench=1",
           "-v", "%s:/var/cache/apt/archives" % archive, "-v", "%s:/srv/gpucluster" % (TMP / "shared"),
           "-v", "%s:/srv/gpucluster-wheels:ro" % (ROOT / ".tmp" / "lab-wheels"), IMAGE, "/sbin/init")
    for name in new:
        for _attempt in range(90):
            state = subprocess.run(["podman", "exec", PREFIX + name, "systemctl", "is-system-running"],
                                   capture_output=True, text=True, env=ENV, check=False).stdout.strip()
            if state in ("running", "degraded"):
                break
            time.sleep(1)
        else:
            raise BenchError("%s%s: systemd did not come up" % (PREFIX, name))
        if "ssh" in env_list("BENCH_CONNECTIONS", "podman,ssh") and subprocess.run(
                ["podman", "exec", PREFIX + name, "test", "-x", "/usr/sbin/sshd"], env=ENV, check=False).returncode != 0:
            # the node image is shared by every checkout on this machine: one built from a
            # Containerfile without openssh-server (an older checkout's) replaces the tag
            raise BenchError("%s%s: %s has no sshd: rebuild it from this checkout (tools/build-images.sh)" % (PREFIX, name, IMAGE))
        if SSH_KEY.with_suffix(".pub").exists():
            sh("podman", "exec", "-i", PREFIX + name, "sh", "-c",
               "install -d -m 700 /root/.ssh && cat > /root/.ssh/authorized_keys && chmod 600 /root/.ssh/authorized_keys",
               stdin=SSH_KEY.with_suffix(".pub").read_text(encoding="utf-8"))
    return new


def fresh(nodes):
    remove_all()
    up(nodes)


def inventory(nodes, connection):
    """.tmp/bench/inv-<connection>-<nodes>: the lab's group_vars (linked) + the bench's addresses."""
    inv = TMP / ("inv-%s-%d" % (connection, nodes))
    shutil.rmtree(inv, ignore_errors=True)
    for group in ("cluster", "slurm_controller", "slurm_compute"):
        (inv / "group_vars" / group).mkdir(parents=True)
        (inv / "group_vars" / group / "lab.yml").symlink_to(ROOT / "inventories" / "lab" / "group_vars" / (group + ".yml"))
    (inv / "group_vars" / "cluster" / "zz_bench.yml").write_text(
        "---\n# bench/converge: the bench's own report folder\nvalidate_report_dir: %s\n" % json.dumps(str(TMP / "validate")), encoding="utf-8")
    (inv / "group_vars" / "slurm_controller" / "zz_bench.yml").write_text(
        "---\n# bench/converge: the bench network\nbase_chrony_allow: [%s]\n" % SUBNET, encoding="utf-8")
    if connection == "ssh":
        conn = {"ansible_connection": "ssh", "ansible_user": "root",
                "ansible_ssh_executable": str(ssh_counter()),
                "ansible_ssh_private_key_file": str(SSH_KEY),
                "ansible_ssh_common_args": "-o ControlMaster=auto -o ControlPersist=120s -o StrictHostKeyChecking=no"
                                           " -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
                "ansible_ssh_pipelining": True}
    else:
        conn = {"ansible_connection": "containers.podman.podman"}
    conn["ansible_python_interpreter"] = "/usr/bin/python3"
    hosts = {}
    for name in names(nodes):
        hosts[name] = {"gpucluster_address": address(name),
                       "ansible_host": address(name) if connection == "ssh" else PREFIX + name}
    doc = {"all": {"vars": conn, "children": {"cluster": {"children": {
        "slurm_controller": {"hosts": {"ctl1": hosts["ctl1"]}},
        "slurm_compute": {"hosts": {n: hosts[n] for n in names(nodes)[1:]}}}}}}}
    (inv / "hosts.yml").write_text("---\n# generated by bench/converge\n" + json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return inv


def ssh_counter():
    """.tmp/bench/ssh-count: ssh, with each call logged (its host) to $BENCH_SSH_LOG first. Over SSH with
    pipelining every remote command of Ansible is one ssh call, a module call one command: play() reports
    them per host, a count the machine's load does not change (the seconds it does)."""
    tool = TMP / "ssh-count"
    tool.parent.mkdir(parents=True, exist_ok=True)
    tool.write_text("#!/bin/sh\n# generated by bench/converge: the host (the argument before the command) to $BENCH_SSH_LOG, then ssh\n"
                    "if [ -n \"$BENCH_SSH_LOG\" ] && [ $# -ge 2 ]; then\n"
                    "  eval \"host=\\${$(($# - 1))}\"\n"
                    "  printf '%s\\n' \"$host\" >> \"$BENCH_SSH_LOG\"\n"
                    "fi\n"
                    "exec ssh \"$@\"\n", encoding="utf-8")
    tool.chmod(0o755)
    return tool


def remote_commands(calls):
    """{host: ssh calls} from the log ssh_counter wrote (addresses named as in the inventory), or None."""
    if not calls.is_file():
        return None
    counts = {}
    for line in calls.read_text(encoding="utf-8").split():
        last = line.rsplit(".", 1)[-1]
        host = ("ctl1" if last == "10" else "gpu%d" % (int(last) - 10)) if line.startswith("10.89.60.") and last.isdigit() else line
        counts[host] = counts.get(host, 0) + 1
    return dict(sorted(counts.items()))


# --- running ansible -------------------------------------------------------------------------

RECAP = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)
PROFILE = re.compile(r"^(.+?) -{2,} (\d+\.\d+)s$", re.M)
COUNTER = [0]


def forks(nodes):
    want = os.environ.get("BENCH_FORKS", "hosts")
    return str(nodes + 1) if want == "hosts" else want


def node_cpu_seconds(nodes):
    """CPU seconds used so far by the bench containers of the hosts in the run (their cgroups:
    v1 cpuacct.usage in ns, v2 cpu.stat usage_usec), or None where this machine does not show
    them. On the bench lab the nodes share the controller's cores: their CPU is part of what a
    run's wall time waits for here, and on a real cluster it is spent on the nodes, in parallel."""
    wanted = [PREFIX + n for n in names(nodes)]
    out = subprocess.run(["podman", "inspect", "--format", "{{.State.CgroupPath}}", *wanted], env=ENV,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return None
    total = 0.0
    for path in out.stdout.split():
        v1 = Path("/sys/fs/cgroup/cpuacct") / path.lstrip("/") / "cpuacct.usage"
        v2 = Path("/sys/fs/cgroup") / path.lstrip("/") / "cpu.stat"
        if v1.is_file():
            total += int(v1.read_text().strip()) / 1e9
        elif v2.is_file():
            usage = [line.split()[1] for line in v2.read_text().splitlines() if line.startswith("usage_usec ")]
            if not usage:
                return None
            total += int(usage[0]) / 1e6
        else:
            return None
    return total


def play(label, inv, playbook, stages=None, limit=None, nodes=2):
    COUNTER[0] += 1
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / ("%03d-%s.log" % (COUNTER[0], re.sub(r"[^a-z0-9+.-]+", "_", label.lower())))
    cmd = ["ansible-playbook", "-i", str(inv), str(ROOT / playbook), "--forks", forks(nodes)]
    if stages is not None:
        cmd += ["-e", json.dumps({"site_stages": stages})]
    if limit:
        cmd += ["--limit", limit]
    calls = log.with_suffix(".ssh-calls")
    calls.unlink(missing_ok=True)
    node_cpu = node_cpu_seconds(nodes)
    start, used = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log, "w", encoding="utf-8") as out:
        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=dict(ENV, BENCH_SSH_LOG=str(calls)), cwd=ROOT,
                            check=False).returncode
    seconds = round(time.monotonic() - start, 2)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds of ansible-playbook, its forks and their ssh clients: the part of a run that
    # stays on the controller when the nodes are real machines (the ControlPersist masters run
    # detached, so their share of the encryption is not in it; the containers' CPU is not either).
    controller_cpu = round(after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime, 2)
    node_after = node_cpu_seconds(nodes) if node_cpu is not None else None
    nodes_cpu = round(node_after - node_cpu, 2) if node_after is not None else None
    text = log.read_text(encoding="utf-8", errors="replace")
    recap = {m.group(1): {"changed": int(m.group(3)), "unreachable": int(m.group(4)), "failed": int(m.group(5))}
             for m in RECAP.finditer(text)}
    if rc != 0 or any(r["failed"] or r["unreachable"] for r in recap.values()):
        raise BenchError("%s: ansible-playbook failed (rc %d), log %s" % (label, rc, log.relative_to(ROOT)))
    changed = {h: r["changed"] for h, r in recap.items() if r["changed"]}
    slowest = [[m.group(1).strip(), float(m.group(2))] for m in PROFILE.finditer(text.split("=" * 40)[-1])]
    commands = remote_commands(calls)
    say("%-44s %7.1f s  CPU: controller %.1f s, nodes %s%s%s  (%s)" % (
        label, seconds, controller_cpu, "-" if nodes_cpu is None else "%.1f s" % nodes_cpu,
        "  changed: %s" % changed if changed else "", "  remote commands: %s" % commands if commands else "",
        log.relative_to(ROOT)))
    probes = [t for t in slowest if re.search(r"rdma : Probe the (GPUs|RDMA)", t[0])]
    return {"seconds": seconds, "controller_cpu": controller_cpu, "nodes_cpu": nodes_cpu, "changed": changed,
            "remote_commands": commands, "log": str(log.relative_to(ROOT)),
            "slowest": slowest[:12], "probes": probes}


def median_run(runs):
    """The run whose time is the median (the lower one of an even count): its log, its slowest tasks
    and its counts are reported beside the median time."""
    return sorted(runs, key=lambda r: r["seconds"])[(len(runs) - 1) // 2]


def repeat(count, label, func):
    runs = [func("%s #%d" % (label, i + 1)) for i in range(count)]
    mid = median_run(runs)
    return {"median": median([r["seconds"] for r in runs]), "runs": [r["seconds"] for r in runs],
            "controller_cpu_median": median([r["controller_cpu"] for r in runs]),
            "nodes_cpu_median": median([r["nodes_cpu"] for r in runs if r.get("nodes_cpu") is not None]),
            "changed": [r["changed"] for r in runs], "median_log": mid["log"], "slowest": mid["slowest"], "probes": mid["probes"],
            "remote_commands": mid.get("remote_commands")}


def simulate(inv, nodes, limit=None):
    play("simulated hardware", inv, "tests/sim/lab_hardware.yml", limit=limit, nodes=nodes)


# --- the parts -------------------------------------------------------------------------------

def manual_packages(hosts):
    def one(name):
        return name, set(sh("podman", "exec", PREFIX + name, "apt-mark", "showmanual").split())
    with ThreadPoolExecutor(len(hosts)) as pool:
        return dict(pool.map(one, hosts))


# No daemon starts during the limit's transaction (policy-rc.d, invoke-rc.d(8)): a Debian package
# starts its daemon when installed, and slurmd without its configuration then holds the transaction
# for systemd's 90 s start timeout, which is not the cost of installing.
HOLD_STARTS = "printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d"


def apt_in_parallel(packages, nodes):
    """The physical limit: every host installs its packages in one apt-get, all at once.
    Returns its seconds and the nodes' CPU seconds in it (None where the machine does not show them)."""
    def one(item):
        name, pkgs = item
        sh("podman", "exec", "-e", "DEBIAN_FRONTEND=noninteractive", PREFIX + name, "sh", "-c",
           HOLD_STARTS + " && apt-get update -qq && apt-get install -y -qq --no-install-recommends "
           + " ".join(sorted(pkgs)) + "; status=$?; rm -f /usr/sbin/policy-rc.d; exit $status")
    node_cpu, start = node_cpu_seconds(nodes), time.monotonic()
    with ThreadPoolExecutor(len(packages)) as pool:
        list(pool.map(one, packages.items()))
    seconds = round(time.monotonic() - start, 2)
    node_after = node_cpu_seconds(nodes) if node_cpu is not None else None
    return seconds, (round(node_after - node_cpu, 2) if node_after is not None else None)


def part_cold(nodes, reps, result, connection):
    hosts = names(nodes)
    inv = inventory(nodes, connection)
    cold, floors, limit, apt, apt_cpu = [], [], [], [], []
    packages = {}
    for rep in range(reps):
        fresh(nodes)
        image = manual_packages(hosts)
        simulate(inventory(nodes, "podman"), nodes)
        floor = play("cold: floor on fresh hosts #%d" % (rep + 1), inv, "bench/floor.yml", nodes=nodes)
        run = play("cold: site.yml base+slurm #%d" % (rep + 1), inv, "site.yml", stages=["base", "slurm"], nodes=nodes)
        after = manual_packages(hosts)
        packages = {h: sorted(after[h] - image[h]) for h in hosts}
        cold.append(run)
        fresh(nodes)
        floor2 = play("limit: floor on fresh hosts #%d" % (rep + 1), inv, "bench/floor.yml", nodes=nodes)
        seconds, nodes_cpu = apt_in_parallel(packages, nodes)
        say("%-44s %7.1f s  CPU: nodes %s" % ("limit: apt-get install, hosts in parallel #%d" % (rep + 1), seconds,
                                              "-" if nodes_cpu is None else "%.1f s" % nodes_cpu))
        if nodes_cpu is not None:
            apt_cpu.append(nodes_cpu)
        floors.append(floor2["seconds"])
        floors.append(floor["seconds"])
        apt.append(seconds)
        limit.append(seconds + floor2["seconds"])
    mid = median_run(cold)
    result["cold"] = {"nodes": nodes, "connection": connection, "median": median([r["seconds"] for r in cold]), "runs": [r["seconds"] for r in cold],
                      "slowest": mid["slowest"], "remote_commands": mid.get("remote_commands"),
                      "nodes_cpu_median": median([r["nodes_cpu"] for r in cold if r.get("nodes_cpu") is not None]),
                      "limit_median": median(limit), "limit_runs": limit, "apt_median": median(apt),
                      "apt_nodes_cpu_median": median(apt_cpu),
                      "floor_fresh_median": median(floors), "packages": packages}
    remove_all()  # the last hosts have packages but no simulated hardware


def part_floor_rerun(nodes, reps, connections, parts, result):
    new = up(nodes)
    if new:
        simulate(inventory(nodes, "podman"), nodes)
    if "rerun" in parts and os.environ.get("BENCH_CONVERGE", "1") == "1":
        # a converged bench lab (every stage) for the reruns
        play("converge site.yml (not timed)", inventory(nodes, "podman"), "site.yml", nodes=nodes)
    for conn in connections:
        inv = inventory(nodes, conn)
        out = result.setdefault("connections", {}).setdefault(conn, {"nodes": nodes})
        if "floor" in parts:
            out["floor"] = repeat(reps, "%s: floor" % conn, lambda label: play(label, inv, "bench/floor.yml", nodes=nodes))
        if "rerun" in parts:
            out["site"] = repeat(reps, "%s: site.yml rerun" % conn, lambda label: play(label, inv, "site.yml", nodes=nodes))
            out["stages"] = {}
            for stage in env_list("BENCH_STAGES", ",".join(STAGES + ["base+slurm"])):
                sel = stage.split("+")
                out["stages"][stage] = repeat(reps, "%s: stage %s rerun" % (conn, stage),
                                              lambda label, sel=sel: play(label, inv, "site.yml", stages=sel, nodes=nodes))


def part_sweep(sizes, reps, connections, result):
    stages = {k: v for k, v in SWEEP_STAGES.items() if k in env_list("BENCH_SWEEP_STAGES", ",".join(SWEEP_STAGES))}
    sweep = result.setdefault("sweep", {"sizes": sizes, "stages": list(stages)})
    for nodes in sizes:
        new = up(nodes)
        inv = inventory(nodes, "podman")
        if new:
            simulate(inv, nodes, limit=",".join(new))
        play("sweep %d: converge base+rdma+slurm (not timed)" % nodes, inv, "site.yml", stages=["base", "rdma", "slurm"], nodes=nodes)
        for conn in connections:
            inv = inventory(nodes, conn)
            row = sweep.setdefault(conn, {}).setdefault(str(nodes), {})
            row["floor"] = repeat(reps, "sweep %d %s: floor" % (nodes, conn), lambda label: play(label, inv, "bench/floor.yml", nodes=nodes))
            for stage, sel in stages.items():
                row[stage] = repeat(reps, "sweep %d %s: %s rerun" % (nodes, conn, stage),
                                    lambda label, sel=sel: play(label, inv, "site.yml", stages=sel, nodes=nodes))


# --- report ------------------------------------------------------------------------------------

def ratios(result):
    out = {}
    for conn, data in result.get("connections", {}).items():
        if data.get("floor") and data.get("site"):
            out["%s: site.yml rerun / floor" % conn] = [round(data["site"]["median"] / data["floor"]["median"], 2), GOALS["rerun_over_floor"]]
        if data.get("floor") and (data.get("stages") or {}).get("base+slurm"):
            out["%s: base+slurm rerun / floor" % conn] = [round(data["stages"]["base+slurm"]["median"] / data["floor"]["median"], 2), None]
    cold = result.get("cold")
    if cold:
        key = "cold base+slurm (%s) / (apt-get in parallel + floor)" % cold.get("connection", "podman")
        out[key] = [round(cold["median"] / cold["limit_median"], 2), GOALS["cold_over_limit"]]
    sweep = result.get("sweep", {})
    for conn in [c for c in sweep if c not in ("sizes", "stages")]:
        done = sorted(int(n) for n in sweep[conn] if all(st in sweep[conn][n] for st in sweep["stages"]))
        lo, hi = (str(done[0]), str(done[-1])) if done else ("", "")
        if lo != hi:
            # On one machine the nodes share its cores: the floor itself grows with the node count,
            # and no playbook's rerun can grow less than it. Reported beside the goal, not instead of it.
            floors = [(sweep[conn][n].get("floor") or {}).get("median") for n in (lo, hi)]
            if all(floors):
                out["%s: floor %s -> %s nodes (the same machine's cores for every node)" % (conn, lo, hi)] = [
                    round(floors[1] / floors[0], 2), None]
            for stage in sweep["stages"]:
                if all(floors):
                    out["%s: %s rerun / floor at %s and at %s nodes" % (conn, stage, lo, hi)] = [
                        "%.2f -> %.2f" % (sweep[conn][lo][stage]["median"] / floors[0], sweep[conn][hi][stage]["median"] / floors[1]), None]
                out["%s: %s rerun %s -> %s nodes" % (conn, stage, lo, hi)] = [
                    round(sweep[conn][hi][stage]["median"] / sweep[conn][lo][stage]["median"], 2), GOALS["sweep_growth"]]
                cpu = [sweep[conn][n][stage].get("controller_cpu_median") for n in (lo, hi)]
                if all(cpu):
                    out["%s: %s rerun %s -> %s nodes, controller CPU seconds" % (conn, stage, lo, hi)] = [round(cpu[1] / cpu[0], 2), None]
                cpu = [sweep[conn][n][stage].get("nodes_cpu_median") for n in (lo, hi)]
                if all(cpu):
                    out["%s: %s rerun %s -> %s nodes, nodes' CPU seconds" % (conn, stage, lo, hi)] = [round(cpu[1] / cpu[0], 2), None]
    for conn, data in result.get("connections", {}).items():
        for name, secs in (data.get("site") or {}).get("probes", []):
            key = "%s: probe task '%s' (all hosts at once)" % (conn, name.split(" : ")[-1])
            out[key] = [max(secs, out.get(key, [0])[0]), GOALS["probe_seconds"]]
    return out


def table(result):
    heads = list(result.get("connections", {})) or [(result.get("cold") or {}).get("connection", "podman")]
    lines = ["| what | %s |" % " | ".join(heads), "|---|%s" % ("---|" * len(heads))]
    conns = result.get("connections", {})

    def cell(value):
        return "%.1f s" % value if isinstance(value, (int, float)) else "-"
    if conns:
        nodes = next(iter(conns.values()))["nodes"]
        floors = " | ".join(cell((c.get("floor") or {}).get("median")) for c in conns.values())
        lines.append("| floor: gather facts + ping (%d hosts) | %s |" % (nodes + 1, floors))
        lines.append("| whole site.yml rerun | %s |" % " | ".join(cell((c.get("site") or {}).get("median")) for c in conns.values()))
        if any((c.get("site") or {}).get("remote_commands") for c in conns.values()):
            lines.append("| ... remote commands (ssh calls) per host | %s |" % " | ".join(
                ", ".join("%s %d" % kv for kv in ((c.get("site") or {}).get("remote_commands") or {}).items()) or "-"
                for c in conns.values()))
        for stage in sorted({s for c in conns.values() for s in c.get("stages") or {}}, key=lambda s: (STAGES + [s]).index(s)):
            cells = " | ".join(cell(((c.get("stages") or {}).get(stage) or {}).get("median")) for c in conns.values())
            lines.append("| stage %s rerun | %s |" % (stage, cells))
    cold = result.get("cold")
    if cold:
        lines.append("| cold base+slurm, fresh containers (%s, %d hosts) | %s |" % (
            cold.get("connection", "podman"), cold["nodes"] + 1, cell(cold["median"])))
        lines.append("| physical limit: apt-get install in parallel + floor | %s (%s + %s) |" % (
            cell(cold["limit_median"]), cell(cold["apt_median"]), cell(cold["floor_fresh_median"])))
        if cold.get("remote_commands"):
            lines.append("| remote commands (ssh calls) per host, cold base+slurm | %s |" % ", ".join(
                "%s %d" % kv for kv in cold["remote_commands"].items()))
        if cold.get("nodes_cpu_median") and cold.get("apt_nodes_cpu_median"):
            lines.append("| nodes' CPU seconds: cold base+slurm / apt-get install in parallel | %s / %s |" % (
                cell(cold["nodes_cpu_median"]), cell(cold["apt_nodes_cpu_median"])))
    sweep = result.get("sweep", {})
    for conn in [c for c in sweep if c not in ("sizes", "stages")]:
        for size, row in sorted(sweep[conn].items(), key=lambda kv: int(kv[0])):
            lines.append("| sweep %s, %s compute nodes: floor / %s | %s |" % (
                conn, size, " / ".join(sweep["stages"]), " / ".join(cell((row.get(k) or {}).get("median")) for k in ["floor"] + sweep["stages"])))
            lines.append("| sweep %s, %s compute nodes, CPU seconds (controller + nodes): floor / %s | %s |" % (
                conn, size, " / ".join(sweep["stages"]), " / ".join(
                    "%s + %s" % (cell((row.get(k) or {}).get("controller_cpu_median")), cell((row.get(k) or {}).get("nodes_cpu_median")))
                    for k in ["floor"] + sweep["stages"])))
    return "\n".join(lines)


def plot(result, path):
    sweep = result.get("sweep", {})
    conns = [c for c in sweep if c not in ("sizes", "stages")]
    series = []
    for conn in conns:
        for stage in ["floor"] + sweep["stages"]:
            points = [(int(size), row[stage]["median"]) for size, row in sweep[conn].items() if stage in row]
            if points:
                series.append(("%s %s" % (conn, stage), sorted(points), 0 if conn == "podman" else 6))
    width, height, left, right, top, bottom = 960, 540, 70, 300, 50, 60
    canvas = _Canvas(width, height)
    x0, x1, y0, y1 = left, width - right, height - bottom, top
    canvas.frame((x0, x1, y0, y1), "SITE.YML RERUN (S) VS COMPUTE NODES (MEDIAN)", empty=None if series else "NO SWEEP TO PLOT")
    if not series:
        path.write_bytes(canvas.png())
        return
    xs = sorted({p[0] for s in series for p in s[1]})
    ymax = max(p[1] for s in series for p in s[1]) * 1.1 or 1.0
    lo, hi = (min(xs), max(xs)) if len(xs) > 1 else (xs[0] - 1, xs[0] + 1)

    def px(x):
        return int(x0 + (x - lo) / float(hi - lo) * (x1 - x0))

    def py(y):
        return int(y0 - y / ymax * (y0 - y1))
    step = next(s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000) if ymax / s <= 8)
    for tick in range(0, int(ymax) + 1, step):
        canvas.line(x0 - 4, py(tick), x0, py(tick), (0, 0, 0))
        canvas.line(x0 + 1, py(tick), x1, py(tick), (225, 225, 225), dash=2)
        canvas.text(8, py(tick) - 5, "%d" % tick)
    for x in xs:
        canvas.line(px(x), y0, px(x), y0 + 4, (0, 0, 0))
        canvas.text(px(x) - 4, y0 + 10, "%d" % x)
    canvas.text((x0 + x1) // 2 - 60, y0 + 30, "COMPUTE NODES")
    y = top
    for index, (label, points, dash) in enumerate(series):
        colour = COLOURS[(index % (len(series) // max(1, len(conns)) or 1)) % len(COLOURS)]
        for (xa, ya), (xb, yb) in zip(points, points[1:]):
            canvas.line(px(xa), py(ya), px(xb), py(yb), colour, dash=dash, width=2)
        for x, value in points:
            canvas.box(px(x) - 2, py(value) - 2, px(x) + 3, py(value) + 3, colour)
        y += 20
        canvas.line(x1 + 16, y + 5, x1 + 40, y + 5, colour, dash=dash, width=2)
        canvas.text(x1 + 46, y, label[:30])
    path.write_bytes(canvas.png())


def strategy():
    """The strategy the bench's playbook runs use: ANSIBLE_STRATEGY, else ansible.cfg's."""
    if os.environ.get("ANSIBLE_STRATEGY"):
        return os.environ["ANSIBLE_STRATEGY"]
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "ansible.cfg")
    return cfg.get("defaults", "strategy", fallback="ansible.builtin.linear")


def main():
    parts = env_list("BENCH_PARTS", "floor,cold,rerun,sweep")
    unknown = set(parts) - {"floor", "cold", "rerun", "sweep"}
    if unknown:
        raise BenchError("unknown BENCH_PARTS %s (known: floor, cold, rerun, sweep)" % ", ".join(sorted(unknown)))
    nodes = int(os.environ.get("BENCH_NODES", "2"))
    sizes = [int(s) for s in env_list("BENCH_SIZES", "2,4,8,16")]
    reps = int(os.environ.get("BENCH_REPEAT", "3"))
    sweep_reps = int(os.environ.get("BENCH_SWEEP_REPEAT", str(reps)))
    connections = env_list("BENCH_CONNECTIONS", "podman,ssh")
    if "ssh" in connections and not SSH_KEY.exists():
        raise BenchError("%s is missing: run 'make setup' (tools/setup.sh makes the lab's SSH key)" % SSH_KEY.relative_to(ROOT))
    if subprocess.run(["podman", "image", "exists", IMAGE], env=ENV, check=False).returncode != 0:
        raise BenchError("node image %s is missing: run 'make setup'" % IMAGE)
    result = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "parts": parts, "repeat": reps,
              "sweep_repeat": sweep_reps, "forks": os.environ.get("BENCH_FORKS", "hosts"),
              "strategy": strategy(), "inprocess": os.environ.get("GPUCLUSTER_INPROCESS", "true"),
              "machine": {"cpus": os.cpu_count(), "load_before": list(os.getloadavg()), "kernel": platform.release(),
                          "note": os.environ.get("BENCH_NOTE", "the load average before and after says whether other work ran beside the bench")},
              "commit": sh("git", "-C", str(ROOT), "rev-parse", "--short", "HEAD", check=False).strip()}
    start = time.monotonic()
    try:
        if "cold" in parts:
            # over SSH when the bench measures SSH (real clusters are reached that way)
            part_cold(nodes, reps, result, "ssh" if "ssh" in connections else "podman")
        if "floor" in parts or "rerun" in parts:
            part_floor_rerun(nodes, reps, connections, parts, result)
        if "sweep" in parts:
            part_sweep(sizes, sweep_reps, connections, result)
    except (BenchError, KeyboardInterrupt) as err:
        result["stopped"] = str(err) or "interrupted"
        say("stopped: %s (the figures so far are written)" % result["stopped"])
    finally:
        if os.environ.get("BENCH_KEEP") != "1":
            remove_all()
            subprocess.run(["podman", "network", "rm", NET], capture_output=True, env=ENV, check=False)
    report(result, start)
    return 1 if result.get("stopped") else 0


def report(result, start):
    result["seconds"] = round(time.monotonic() - start, 1)
    result["machine"]["load_after"] = list(os.getloadavg())
    result["ratios"] = ratios(result)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "converge.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    plot(result, RESULTS / "converge.png")
    print()
    print(table(result))
    print()
    print("| ratio | measured | goal |\n|---|---|---|")
    for what, (value, goal) in result["ratios"].items():
        verdict = "" if goal is None else (" (met)" if value <= goal else " (NOT met)")
        print("| %s | %s | %s |" % (what, value, ("<= %s%s" % (goal, verdict)) if goal is not None else "-"))
    for conn, data in result.get("connections", {}).items():
        if data.get("site"):
            print("\nslowest tasks of the median whole site.yml rerun over %s (profile_tasks, %s):" % (conn, data["site"]["median_log"]))
            for name, secs in data["site"]["slowest"][:10]:
                print("  %6.2f s  %s" % (secs, name))
    print("\nresults: %s, plot: %s (%.0f s in all)" % (RESULTS / "converge.json", RESULTS / "converge.png", result["seconds"]))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as err:
        print("bench: %s" % err, file=sys.stderr)
        sys.exit(1)
