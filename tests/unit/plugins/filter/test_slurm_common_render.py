# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Rendering of roles/slurm_common: its vars (slurm.conf keys), repository files and the
cgroup v2 refusal, with Ansible's own templating and the collection's filters.

Inputs are SIMULATED inventories: the hardware facts of a 2x48-core EPYC node with 2321000 MiB
(the shape of the MI300X tutorial nodes) and a stand-in GPU fact of 8 MI300X; the Slurm
versions are the real package versions of Ubuntu 22.04 (21.08.5-2ubuntu1) and Debian 12
(22.05.8-4+deb12u3).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.template import trust_as_template

from ansible_collections.gpucluster.training.tests.unit.plugins.filter import role_render

from ansible_collections.gpucluster.training.plugins.filter.slurm_cgroup_v2_refusal import slurm_cgroup_v2_refusal
from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import SlurmConfError, default_memory, node_attributes

ROLE = Path(__file__).resolve().parents[4] / "roles" / "slurm_common"
EPYC = {"processor_vcpus": 192, "processor_count": 2, "processor_cores": 48, "processor_threads_per_core": 2, "memtotal_mb": 2321000,
        "virtualization_type": "kvm", "os_family": "Debian", "distribution_release": "jammy"}
MI300X = {"vendor": "amd", "count": 8, "slurm_type": "mi300x",
          "devices": [{"index": i, "slurm_type": "mi300x", "render_node": "/dev/dri/renderD%d" % (128 + i)} for i in range(8)]}


def templar(**overrides):
    facts = dict(EPYC, **overrides.pop("facts", {}))
    variables = {
        "groups": {"slurm_controller": ["ctl"], "slurm_compute": ["gpu1", "gpu2"]}, "inventory_hostname": "gpu1",
        "hostvars": {"ctl": {"ansible_facts": facts}, "gpu1": {"ansible_facts": facts}, "gpu2": {"ansible_facts": facts}},
        "ansible_facts": facts, "ansible_managed": "Ansible managed", "__slurm_common_version": "23.11.10",
        "__slurm_common_node_gpus": {"gpu1": MI300X, "gpu2": MI300X}, "__slurm_common_node_gpu_counts": {},
    }
    variables.update(overrides)
    # preflight.yml reads the compute nodes' facts once per play into this fact
    variables.setdefault("__slurm_common_node_facts", trust_as_template("{{ __slurm_common_node_facts_live }}"))
    return role_render.templar("slurm_common", ("defaults/main.yml", "vars/Debian.yml", "vars/main.yml"), variables)


def render(tmpl, expr):
    return role_render.render(tmpl, expr)


def conf(**overrides):
    return render(templar(**overrides), "{{ __slurm_common_conf_defaults }}")


def test_slurm_conf_keys_for_a_gpu_cluster():
    keys = conf()
    assert keys["PropagateResourceLimitsExcept"] == "MEMLOCK"
    assert keys["JobAcctGatherType"] == "jobacct_gather/cgroup"
    assert keys["PrologFlags"] == "Contain"
    assert keys["DefMemPerGPU"] == (2321000 - 1024) // 1024 * 1024 // 8 and keys["DefMemPerCPU"] == "omit"
    assert keys["MpiDefault"] == "pmix"


def test_containers_cpu_nodes_and_options():
    keys = conf(facts={"virtualization_type": "podman"}, __slurm_common_node_gpus={"gpu1": None, "gpu2": None},
                slurm_common_pmix=False)
    assert keys["JobAcctGatherType"] == "jobacct_gather/linux"
    assert keys["DefMemPerCPU"] == (2321000 - 1024) // 1024 * 1024 // 192 and keys["DefMemPerGPU"] == "omit"
    assert keys["MpiDefault"] == "none"
    keys = conf(slurm_common_proctrack_type="proctrack/linuxproc", slurm_common_default_memory="none")
    assert keys["JobAcctGatherType"] == "jobacct_gather/linux" and keys["PrologFlags"] == "omit"
    assert keys["DefMemPerGPU"] == "omit" and keys["DefMemPerCPU"] == "omit"
    assert conf(slurm_common_proctrack_type="proctrack/linuxproc", slurm_common_pam_slurm_adopt=True)["PrologFlags"] == "Contain"


def test_realmemory_does_not_move_with_a_kernel_update():
    before = dict(node_attributes(EPYC, None, mem_reserve_mib=4096))["RealMemory"]
    after = dict(node_attributes(dict(EPYC, memtotal_mb=2321000 - 37), None, mem_reserve_mib=4096))["RealMemory"]
    assert before == after == 2316288 and before % 1024 == 0
    assert dict(node_attributes(EPYC, None, mem_reserve_mib=4096, mem_round_mib=1))["RealMemory"] == 2321000 - 4096
    with pytest.raises(SlurmConfError, match="per_gpu but no compute node has GPUs"):
        default_memory({"a": node_attributes(EPYC)}, "per_gpu")


def test_site_repository_files():
    tmpl = templar(slurm_common_repository={"url": "https://repo.example.org/slurm", "key_url": "https://repo.example.org/slurm.asc",
                                            "components": ["main"]},
                   slurm_common_package_version="23.11.10-1",
                   slurm_common_packages={"common": ["slurm-smd-client"], "slurmd": ["slurm-smd-slurmd"]})
    assert render(tmpl, "{{ __slurm_common_install_names }}") == ["slurm-smd-client=23.11.10-1", "slurm-smd-slurmd=23.11.10-1"]
    listing = render(tmpl, (ROLE / "templates" / "slurm-repo.list.j2").read_text())
    assert "deb [signed-by=/etc/apt/keyrings/gpucluster-slurm.asc] https://repo.example.org/slurm jammy main" in listing
    pref = render(tmpl, (ROLE / "templates" / "slurm-repo.pref.j2").read_text())
    assert "Package: slurm* libslurm* libpam-slurm* libpmi*-slurm*\nPin: version 23.11.10-1\nPin-Priority: 1001" in pref
    assert "Pin: release *\nPin-Priority: -1" in pref
    repo = render(templar(slurm_common_repository={"url": "https://repo.example.org/el9", "key_url": "https://repo.example.org/RPM-GPG-KEY"},
                          slurm_common_package_version="23.11.10"),
                  (ROLE / "templates" / "slurm-repo.repo.j2").read_text())
    assert "gpgcheck=1" in repo and "gpgkey=https://repo.example.org/RPM-GPG-KEY" in repo


def test_cgroup_v2_refusal_names_the_way_out():
    message = slurm_cgroup_v2_refusal("21.08.5-2ubuntu1", ["gpu2", "gpu1"], ["proctrack/cgroup", "task/affinity,task/cgroup"])
    assert message.startswith("Slurm 21.08.5 cannot run on gpu1, gpu2: these hosts boot with cgroup v2 only")
    assert "slurm_common_repository" in message and "slurm_common_package_version" in message
    assert slurm_cgroup_v2_refusal("22.05.8-4+deb12u3", ["gpu1"], ["proctrack/cgroup"]) == ""
    assert slurm_cgroup_v2_refusal("21.08.5-2ubuntu1", [], ["proctrack/cgroup"]) == ""
    assert slurm_cgroup_v2_refusal("21.08.5-2ubuntu1", ["gpu1"], ["proctrack/linuxproc", "task/affinity", "jobacct_gather/linux"]) == ""


def test_node_facts_keep_only_what_the_node_lines_read():
    # preflight.yml stores these once per play on every host: the keys the lines are made of, not
    # every fact of every node (os_family and distribution_release are facts EPYC has too)
    tmpl = templar()
    facts = render(tmpl, "{{ __slurm_common_node_facts_live }}")
    assert sorted(facts) == ["gpu1", "gpu2"]
    assert sorted(facts["gpu1"]) == sorted(render(tmpl, "{{ __slurm_common_fact_record_keys }}"))
    assert render(tmpl, "{{ __slurm_common_fact_record }}")["facts"] == facts
