# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Roles slurm_controller / slurm_compute on three real containers (Debian 12, Slurm 22.05).

GPUs are SIMULATED (stand-in render nodes + gpucluster_gpus facts set in molecule.yml)."""
import os
import re
import subprocess

import pytest
import testinfra

CTL = "cluster-ctl1"
COMPUTE = ["cluster-gpu1", "cluster-gpu2"]
DB_PASSWORD = "molecule-test-only-db-password"


def on(name):
    return testinfra.get_host("podman://" + name)


def name_of(host):
    return host.check_output("hostname")


def test_munge_key_identical_and_private(host):
    key = host.file("/etc/munge/munge.key")
    assert key.user == "munge" and key.group == "munge" and key.mode == 0o400
    assert key.size >= 32
    assert host.check_output("sha256sum /etc/munge/munge.key").split()[0] == on(CTL).check_output("sha256sum /etc/munge/munge.key").split()[0]


@pytest.mark.parametrize("src, dst", [(CTL, COMPUTE[0]), (COMPUTE[0], COMPUTE[1]), (COMPUTE[1], CTL)])
def test_munge_credential_from_one_host_decodes_on_another(src, dst):
    cred = on(src).check_output("munge -n")
    decoded = on(dst).run("echo %s | unmunge", cred)
    assert decoded.rc == 0, decoded.stderr
    assert "STATUS:          Success (0)" in decoded.stdout


def test_daemons_active(host):
    assert host.service("munge").is_running
    if name_of(host) == CTL:
        for svc in ("slurmctld", "slurmdbd", "mariadb"):
            assert host.service(svc).is_running, svc
        assert not host.package("slurmd").is_installed
    else:
        assert host.service("slurmd").is_running
        assert not host.package("slurmctld").is_installed


def test_both_nodes_idle_with_gpu_gres():
    out = on(CTL).check_output('sinfo --noheader -N -o "%N %G %t"')
    lines = sorted(out.splitlines())
    assert lines == ["cluster-gpu1 gpu:mi300x:4 idle", "cluster-gpu2 gpu:mi300x:4 idle"], out


def test_srun_answers_from_both_nodes():
    out = on(CTL).check_output("srun -N2 --time=1 hostname")
    assert sorted(out.split()) == COMPUTE


def test_gres_job_gets_exactly_two_gpus():
    out = on(CTL).check_output("srun -N1 --gres=gpu:2 --time=1 env")
    env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    assert env["ROCR_VISIBLE_DEVICES"] == "0,1"
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"


def test_batch_job_is_completed_in_accounting():
    ctl = on(CTL)
    job = ctl.check_output("sbatch --parsable -N2 --time=1 --wrap 'srun hostname' --output=/dev/null").split(";")[0]
    ctl.run("timeout 60 sh -c 'while squeue -h -j %s | grep -q .; do sleep 1; done'", job)
    state = ""
    for _attempt in range(30):
        state = ctl.check_output("sacct -n -X -P -j %s -o State", job).strip()
        if state == "COMPLETED":
            break
        ctl.run("sleep 1")
    assert state == "COMPLETED"
    assert "molecule" in ctl.check_output("sacctmgr -n -P list cluster format=cluster")


def test_scontrol_config_has_expected_keys():
    config = on(CTL).check_output("scontrol show config")
    settings = dict((line.split("=", 1)[0].strip(), line.split("=", 1)[1].strip()) for line in config.splitlines() if " = " in line)
    assert settings["SelectType"] == "select/cons_tres"
    assert settings["SelectTypeParameters"] == "CR_CORE_MEMORY"
    assert settings["GresTypes"] == "gpu"
    assert settings["AccountingStorageType"] == "accounting_storage/slurmdbd"
    assert "gres/gpu" in settings["AccountingStorageTRES"]
    assert settings["ClusterName"] == "molecule"
    assert settings["SLURM_VERSION"].startswith("22.05")


def test_config_files(host):
    if name_of(host) == CTL:
        dbd = host.file("/etc/slurm/slurmdbd.conf")
        assert dbd.user == "slurm" and dbd.mode == 0o600
    gres = host.file("/etc/slurm/gres.conf").content_string
    assert "NodeName=cluster-gpu[1-2] Name=gpu Type=mi300x File=/dev/dri/renderD[128-131]" in gres.splitlines()
    cgroup = host.file("/etc/slurm/cgroup.conf").content_string.splitlines()
    assert "ConstrainDevices=YES" in cgroup
    assert "CgroupAutomount=yes" in cgroup  # 22.05 still takes it (refused from 24.05)
    conf = host.file("/etc/slurm/slurm.conf").content_string.splitlines()
    assert "SlurmctldHost=cluster-ctl1(%s)" % on(CTL).check_output("hostname -I").split()[0] in conf
    assert any(line.startswith("NodeName=cluster-gpu[1-2] ") and "Gres=gpu:mi300x:4" in line for line in conf)
    assert not any(line.startswith(("ControlMachine", "Gres=")) for line in conf)


def test_db_password_only_in_slurmdbd_conf(host):
    hits = host.run("grep -rlsF %s /etc /var/log /var/lib/slurm /root /tmp", DB_PASSWORD).stdout.split()
    expected = ["/etc/slurm/slurmdbd.conf"] if name_of(host) == CTL else []
    assert hits == expected


def _playbook(playbook, extra, check=False):
    """ansible-playbook from the checkout on this scenario's inventory, as an operator runs it."""
    root = os.environ.get("MOLECULE_PROJECT_DIRECTORY", os.getcwd())
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH="%s/.tmp/collections:%s/.venv/lib/python3.11/site-packages" % (root, root),
               ANSIBLE_CONFIG=os.path.join(root, "ansible.cfg"),
               # the recap is read line by line: no colour codes, whoever started Molecule
               ANSIBLE_FORCE_COLOR="false", ANSIBLE_NOCOLOR="1")
    run = subprocess.run(
        [os.path.join(root, ".venv/bin/ansible-playbook")] + (["--check"] if check else [])
        + ["-i", os.environ["MOLECULE_INVENTORY_FILE"], os.path.join(root, playbook), "-e", extra],
        capture_output=True, text=True, env=env, timeout=600, check=False)
    print(run.stdout[-2500:])
    return run


def _side_play(extra):
    return _playbook("molecule/cluster/preflight-fail.yml", extra, check=True)


def _no_host_changed(run):
    recap = run.stdout[run.stdout.index("PLAY RECAP"):]
    for name in [CTL] + COMPUTE:
        assert re.search(r"^%s +: .*changed=0 " % re.escape(name), recap, re.M), recap


@pytest.mark.parametrize("extra, message", [
    ('{"slurm_common_partitions": [{"name": "gpu", "groups": ["gpu_nodes"]}]}',
     "partition gpu names node group gpu_nodes, which is not an inventory group"),
    ('{"slurm_common_controller_group": "no_such_group"}',
     "cluster-ctl1 runs gpucluster.training.slurm_controller but is not in inventory group no_such_group"),
    ('{"slurm_common_munge_key": "c2hvcnQ="}', "slurm_common_munge_key must be the base64 of a 32 to 1024 byte key"),
])
def test_preflight_stops_a_bad_inventory_before_any_change(extra, message):
    if name_of(testinfra.get_host("podman://" + CTL)) != CTL:
        pytest.skip("controller not reachable")
    run = _side_play(extra)
    assert run.returncode != 0
    assert message in run.stdout, run.stdout[-3000:]
    assert "changed=0" in run.stdout


def test_bad_cluster_name_is_refused_before_any_host_changes():
    # site.yml itself (every stage selected, not check mode): the preflight play refuses the value
    # before the first stage, so no host changes and slurm.conf stays byte for byte as it was
    ctl = on(CTL)
    before = ctl.check_output("sha256sum /etc/slurm/slurm.conf")
    run = _playbook("site.yml", '{"slurm_common_cluster_name": "bad name!"}')
    assert run.returncode != 0
    assert 'slurm_common_cluster_name="bad name!" is not a Slurm cluster name' in run.stdout
    _no_host_changed(run)
    assert ctl.check_output("sha256sum /etc/slurm/slurm.conf") == before


@pytest.mark.parametrize("extra, message", [
    # the release the files are written for, unlike the one the hosts run (no pinned packages)
    ('{"site_stages": ["slurm"], "slurm_common_version": "21.08.8"}',
     r"slurm_common_version=21\.08\.8 but (\S+ has or would install Slurm \S+, )*cluster-ctl1 has or would install Slurm 22\.05\."),
    # a cluster renamed by a typo: slurmctld would refuse its own saved state
    ('{"site_stages": ["slurm"], "slurm_common_cluster_name": "gpuclustre"}',
     r"slurm_common_cluster_name=gpuclustre but the saved state of slurmctld on cluster-ctl1 belongs to cluster molecule "
     r"\(/var/lib/slurm/slurmctld/clustername\)"),
    # the saved state moved by a typo: slurmctld would start on an empty directory, forgetting its jobs
    ('{"site_stages": ["slurm"], "slurm_common_state_save_location": "/var/lib/slurm/slurmctl"}',
     r"slurm_common_state_save_location=/var/lib/slurm/slurmctl but slurmctld on cluster-ctl1 keeps its saved state "
     r"\(its jobs, nodes and reservations\) in /var/lib/slurm/slurmctld"),
])
def test_a_value_unlike_the_running_cluster_is_refused_before_any_slurm_change(extra, message):
    # read from the hosts in the Slurm preflight (the query every Slurm host answers in one call):
    # refused before any Slurm play, slurm.conf byte for byte as it was
    ctl = on(CTL)
    before = ctl.check_output("sha256sum /etc/slurm/slurm.conf")
    run = _playbook("site.yml", extra)
    assert run.returncode != 0
    assert re.search(message, re.sub(r"\s+", " ", run.stdout)), run.stdout[-3000:]
    assert "PLAY [Slurm controller]" not in run.stdout
    _no_host_changed(run)
    assert ctl.check_output("sha256sum /etc/slurm/slurm.conf") == before


def test_slurm_conf_that_slurm_cannot_parse_never_replaces_the_running_one():
    # a key no preflight knows of: Slurm's own parser (the template step's validate) refuses the
    # new file, so the running slurm.conf stays and the run fails naming Slurm's error
    ctl = on(CTL)
    before = ctl.check_output("sha256sum /etc/slurm/slurm.conf")
    run = _playbook("site.yml", '{"site_stages": ["slurm"], "slurm_common_config": {"NoSuchSlurmKey": "1"}}')
    assert run.returncode != 0
    assert "NoSuchSlurmKey" in run.stdout and "/etc/slurm/slurm.conf: the new file was refused by" in run.stdout
    assert ctl.check_output("sha256sum /etc/slurm/slurm.conf") == before
    assert ctl.check_output("scontrol ping").find("is UP") >= 0


def test_invalid_megatron_layout_is_refused_before_any_host_changes():
    # the tutorial's TP 8 x PP 4: the preflight play reads the GPUs (read-only) and the planner
    # refuses the layout before the first stage; no host changes
    layout = '{"training_jobs_megatron_layout": {"tp": 8, "pp": 4, "micro_batch_size": 4, "global_batch_size": 64, "seq_length": 4096}}'
    run = _playbook("site.yml", layout)
    assert run.returncode != 0
    assert "world size 8 (2 nodes x 4 GPUs) is not divisible by TP x PP x CP = 8 x 4 x 1 = 32" in run.stdout
    assert "Preflight (inventory and cross-host checks, before any host changes)" in run.stdout
    assert "PLAY [Base settings" not in run.stdout  # neither base play (new nodes, the others)
    _no_host_changed(run)


def test_srun_with_pmix_across_both_nodes():
    # Debian's Slurm needs libpmix-dev's libpmix.so for mpi/pmix (slurm_common installs it); a
    # 2-node step launched through PMIx answers from both nodes
    ctl = on(CTL)
    assert "pmix" in ctl.check_output("srun --mpi=list 2>&1")
    out = ctl.check_output("srun -N2 --ntasks-per-node=1 --mpi=pmix --time=1 sh -c 'echo $(hostname) $PMIX_RANK'")
    assert sorted(line.split()[0] for line in out.splitlines()) == COMPUTE, out
    assert sorted(line.split()[1] for line in out.splitlines()) == ["0", "1"], out
    for name in COMPUTE:
        # every start of slurmd since the container booted, the first (when its package was
        # installed) included: the PMIx library is installed before the Slurm packages
        journal = on(name).check_output("journalctl --boot --unit slurmd --no-pager --output cat")
        log = on(name).check_output("cat /var/log/slurm/slurmd.log")
        print("%s: %d slurmd starts in the journal since boot" % (name, journal.count("Started slurmd")))
        assert "slurmd version" in log and "can not load PMIx library" not in log, log
        assert "Started slurmd" in journal and "can not load PMIx library" not in journal, journal


def test_job_step_gets_slurmds_memlock_not_the_submitting_shells():
    # PropagateResourceLimitsExcept=MEMLOCK: a step started from a shell with a low locked-memory
    # limit runs with slurmd's limit (the rdma role's LimitMEMLOCK; this sandbox caps it lower
    # than unlimited, so the test compares with slurmd's own limit)
    ctl = on(CTL)
    step = ctl.check_output("bash -c 'ulimit -l 64; srun -N1 -w %s --time=1 bash -c \"ulimit -l\"'" % COMPUTE[0]).strip()
    pid = on(COMPUTE[0]).check_output("pgrep -o -x slurmd")
    limits = on(COMPUTE[0]).check_output("cat /proc/%s/limits" % pid)
    soft = [line.split()[3] for line in limits.splitlines() if line.startswith("Max locked memory")][0]
    slurmd = "unlimited" if soft == "unlimited" else str(int(soft) // 1024)
    print("step: ulimit -l = %s; slurmd: %s" % (step, slurmd))
    assert step != "64" and step == slurmd
