# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""site.yml on broken inventories fails in preflight, naming the host, before any change.

The hosts use the local connection and the run is in check mode, so even a preflight that
let a bad inventory through could not change this machine."""
import re

import pytest

CASES = [
    ("missing-address", "host gpu2 in group cluster has no gpucluster_address"),
    ("duplicate-name", "hostname gpu1 is used by more than one host: gpu1, gpu1.example.org"),
    ("duplicate-address", "address 192.0.2.11 is given to more than one host: gpu1, gpu2"),
    # every failed Slurm check is named at once (gpucluster.training.checks), not only the first
    ("slurm-settings", "2 of 6 checks failed: (1) slurm_common_cluster_name=\"gpu cluster\" is not a Slurm cluster name"),
    ("slurm-settings", "(2) slurm_common_packages takes lists of package names"),
    # read in one pass over the compute nodes: only the node asking for more GPUs than it has is named
    ("gpu-count", '"msg": "gpu1: slurm_common_gpu_count=3 is greater than the 2 GPUs probed on it (gpucluster_gpus)"}'),
    # hand-written GPUs with their devices as a string: the node and the key, not a template error
    ("gpu-malformed", "gpu_devices: gpu2: gpucluster_gpus.devices must be a list of devices, got a string"),
    # a layout Megatron-LM takes but train_llama2.sh would not run as planned (FSDP=1 resets TP to 1)
    ("megatron-fsdp-tp", "training_jobs_megatron_layout has fsdp true with tp 8: train_llama2.sh resets TP to 1 "
                         "when FSDP=1 (and turns sequence parallel off), so the job would silently run TP=1"),
    # a cancelled exec-mode step would be killed by Slurm before it stopped its processes in the container
    ("megatron-stop-grace", "training_jobs_megatron_stop_grace=10 must be at least 1 and below Slurm's KillWait (10 s)"),
    # a node with fewer GPUs than the controller recorded at the last run: named before its GRES line shrinks and
    # slurm.conf changes on every node of a cluster in use
    ("gpu-lost", "gpu1 had 4 GPUs at the last run (recorded on ctl1) and 2 now: drain it (scontrol update nodename=gpu1 "
                 "state=drain reason=\"GPU lost\") and repair it, or set slurm_common_gpu_count=2 for it to configure it with 2"),
    # a misspelt variable and a value the role's argument spec refuses: named before the first stage, not ignored or
    # found when the training stage starts
    ("variable-typo", "slurm_common_cluster_nmae (set on ctl1, gpu1, gpu2) is not a variable of gpucluster.training: "
                      "Ansible would ignore it. Did you mean slurm_common_cluster_name?"),
    ("variable-typo", "training_jobs_megatron_launch (set on ctl1, gpu1, gpu2) is refused by role training_jobs's argument "
                      "spec: value of training_jobs_megatron_launch must be one of: exec, run, got: exce."),
    # the fine-tuning job as the defaults give it: no image holding train.py, its output in a removed container
    ("finetune-image", "training_jobs_finetune_program=image runs train.py in a container of its own per step: "
                       "set training_jobs_finetune_image to the image that holds it"),
    # the tutorial's relative output_dir in a container removed when the step ends
    ("finetune-output", "training_jobs_finetune_args.output_dir=output must be under a directory mounted read-write into the "
                        "job's container (/checkpoints): it is relative and training_jobs_finetune_workdir is not set."),
]


@pytest.mark.parametrize("inventory, message", CASES)
def test_broken_inventory_fails_in_preflight(run_playbook, inventory, message):
    result = run_playbook("site.yml", "-i", f"tests/harness/inventories/{inventory}/hosts.yml", "--check")
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert message in re.sub(r"\s+", " ", out), out
    # nothing ran past preflight: no task reported a change on any host
    recap = out.split("PLAY RECAP")[-1]
    changed = [int(n) for n in re.findall(r"changed=(\d+)", recap)]
    assert changed and all(n == 0 for n in changed), recap
    assert "Install the packages every node needs" not in out
