# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Slurm 24.11 (Debian 13), configless, on three real containers; GPUs SIMULATED (see molecule.yml)."""
import testinfra

CTL = "slurm-trixie-ctl1"
COMPUTE = ["slurm-trixie-gpu1", "slurm-trixie-gpu2"]


def on(name):
    return testinfra.get_host("podman://" + name)


def test_version_is_24_11_and_configless():
    config = on(CTL).check_output("scontrol show config")
    assert "SLURM_VERSION           = 24.11" in config
    assert "enable_configless" in config


def test_compute_nodes_have_no_local_config(host):
    if host.check_output("hostname") == CTL:
        assert "CgroupAutomount" not in host.file("/etc/slurm/cgroup.conf").content_string
        return
    assert not host.file("/etc/slurm/slurm.conf").exists
    assert "--conf-server" in host.check_output("ps -o args= -C slurmd")
    assert host.service("slurmd").is_running


def test_nodes_idle_with_gres_and_jobs_run():
    ctl = on(CTL)
    lines = sorted(ctl.check_output('sinfo --noheader -N -o "%N %G %t"').splitlines())
    assert lines == ["%s gpu:mi300x:8 idle" % n for n in COMPUTE]
    assert sorted(ctl.check_output("srun -N2 --time=1 hostname").split()) == COMPUTE
    env = ctl.check_output("srun -N1 --gres=gpu:2 --time=1 env")
    assert "ROCR_VISIBLE_DEVICES=0,1" in env.splitlines()
