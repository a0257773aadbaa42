# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""MIG in gres.conf / slurm.conf, from the real A100-SXM4-80GB MIG capture (tests/fixtures/nvidia-smi).

The capture has 4 MIG instances (GI 3-6, CI 0, 14 SMs, 19968 MiB) on the GPU with minor number 1.
No public /proc/driver/nvidia-caps/mig-minors capture was found: MIG_MINORS below is SYNTHETIC,
written in the file's layout ("gpu<minor>/gi<g>/access <N>", ".../ci<c>/access <N>") for the
entries this GPU needs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._gpu_models import gpu_facts
from ansible_collections.gpucluster.training.plugins.module_utils._nvidia_smi import (
    NvidiaSmiError,
    apply_mig_minors,
    mig_profile,
    parse_mig_minors,
    parse_nvidia_smi_xml,
)
from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import SlurmConfError, gres_lines, node_attributes

XML = (Path(__file__).resolve().parents[3] / "fixtures" / "nvidia-smi" / "nvidia_smi_q_x_A100-SXM4-80GB_MIG_4instances_drv535_telegraf.xml").read_text()
T4 = (Path(__file__).resolve().parents[3] / "fixtures" / "nvidia-smi" / "nvidia_smi_q_x_Tesla-T4_passthrough_drv515_telegraf.xml").read_text()
MIG_MINORS = "config 1\nmonitor 2\n" + "".join(
    "gpu1/gi%d/access %d\ngpu1/gi%d/ci0/access %d\n" % (gi, 138 + gi * 9, gi, 139 + gi * 9) for gi in range(3, 7))
FACTS = {"processor_vcpus": 64, "processor_count": 2, "processor_cores": 16, "processor_threads_per_core": 2, "memtotal_mb": 515000}


def mig_fact(minors=None):
    gpus = parse_nvidia_smi_xml(XML)["gpus"]
    if minors is not None:
        apply_mig_minors(gpus, parse_mig_minors(minors))
    return gpu_facts("nvidia", gpus, driver_loaded=True)


def test_profiles_from_the_real_capture():
    gpus = parse_nvidia_smi_xml(XML)["gpus"]
    assert [(d["mig"]["profile"], d["mig"]["parent_minor"], d["device_file"]) for d in gpus] == [("1g.20gb", 1, "/dev/nvidia1")] * 4
    assert mig_profile("Ampere", 42, 40192) == "3g.40gb" and mig_profile("Hopper", 16, 9984) == "1g.10gb"
    assert mig_profile("Blackwell", 18, 23040) is None and mig_profile("Ampere", 15, 9856) is None


def test_slurm_conf_counts_the_instances_by_profile():
    attrs = dict(node_attributes(FACTS, mig_fact()))
    assert attrs["Gres"] == "gpu:1g.20gb:4"


def test_autodetect_nvml_where_the_plugin_exists():
    assert gres_lines({"gpu1": mig_fact()}, plugin_files=["gpu_nvml.so"], autodetect=True) == ["NodeName=gpu1 AutoDetect=nvml"]


def test_multiple_files_with_the_caps_files():
    lines = gres_lines({"gpu1": mig_fact(MIG_MINORS)})
    assert lines == ["NodeName=gpu1 Name=gpu Type=1g.20gb MultipleFiles=/dev/nvidia1,/dev/nvidia-caps/nvidia-cap%d,/dev/nvidia-caps/nvidia-cap%d"
                     % (138 + gi * 9, 139 + gi * 9) for gi in range(3, 7)]


def test_the_collapsed_line_is_refused():
    # what the issue reproduced: four instances, one File=/dev/nvidia1
    with pytest.raises(SlurmConfError, match="MIG instance .*AutoDetect=nvml"):
        gres_lines({"gpu1": mig_fact()})
    fact = mig_fact()
    for dev in fact["devices"]:
        dev["mig"] = None
    with pytest.raises(SlurmConfError, match="same device file /dev/nvidia1"):
        gres_lines({"gpu1": fact})


def test_impossible_values_are_refused():
    with pytest.raises(NvidiaSmiError, match="minor_number -1"):
        parse_nvidia_smi_xml(T4.replace("<minor_number>0</minor_number>", "<minor_number>-1</minor_number>"))
    with pytest.raises(NvidiaSmiError, match="no entry for GPU minor 1 GPU instance 3"):
        apply_mig_minors(parse_nvidia_smi_xml(XML)["gpus"], parse_mig_minors("gpu0/gi3/access 30\n"))
    for bad in ("gpu1/gi3/access x\n", "nonsense 4\n", "config 1\n"):
        with pytest.raises(NvidiaSmiError, match="mig-minors"):
            parse_mig_minors(bad)


def test_cores_from_numa_affinity():
    fact = gpu_facts("nvidia", parse_nvidia_smi_xml(T4)["gpus"], driver_loaded=True)
    fact["numa_node_count"] = 2
    fact["devices"][0]["numa_node"] = 1
    assert gres_lines({"gpu1": fact}, node_facts={"gpu1": FACTS}) == ["NodeName=gpu1 Name=gpu Type=t4 File=/dev/nvidia0 Cores=16-31"]
    fact["numa_node_count"] = 3  # 32 cores do not split in 3: no Cores= rather than a wrong one
    assert gres_lines({"gpu1": fact}, node_facts={"gpu1": FACTS}) == ["NodeName=gpu1 Name=gpu Type=t4 File=/dev/nvidia0"]
