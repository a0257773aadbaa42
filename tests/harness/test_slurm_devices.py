# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""slurm_compute's GPU device check reads the check-first call's drift items (issue 16: no stat per
device file where that call compared them already) and looks for the files itself only where the
call did not run. The real role tasks on this machine, the device files being files under tmp_path."""

import json


def _devices(tmp_path):
    return [str(tmp_path / name) for name in ("renderD128", "renderD129")]


def _run(run_playbook, tmp_path, drift_items, present):
    devices = _devices(tmp_path)
    for path in devices:
        if path.rsplit("/", 1)[1] in present:
            open(path, "w", encoding="utf-8").close()
    extra = {"__slurm_compute_device_files": devices, "gpu1_drift_items": drift_items}
    result = run_playbook("tests/harness/playbooks/slurm_devices.yml", "-i", "tests/harness/inventories/slurm-render/hosts.yml",
                          "-e", json.dumps(extra))
    return result, result.stdout + result.stderr


def test_missing_device_files_fail_each_node_with_their_names(run_playbook, tmp_path):
    # gpu1's check found renderD129 missing (and slurm.conf differing, not a device); on gpu2 the stat finds it
    devices = _devices(tmp_path)
    result, out = _run(run_playbook, tmp_path, [
        {"kind": "files", "name": devices[1], "missing": True, "drift": ["%s: missing" % devices[1]]},
        {"kind": "files", "name": "/etc/slurm/slurm.conf", "missing": False, "drift": ["/etc/slurm/slurm.conf: content differs"]},
    ], present=["renderD128"])
    assert result.returncode == 2, out
    for node in ("gpu1", "gpu2"):
        assert "%s: GPU device files missing: %s (is the GPU driver loaded?" % (node, devices[1]) in out, out
    assert "has every GPU device file" not in out, out
    # the files were looked for on gpu2 only: gpu1's check had compared them
    stat_task = out.split("TASK [gpucluster.training.slurm_compute : Look for the GPU device files")[1].split("TASK [")[0]
    assert "skipping: [gpu1]" in stat_task and "ok: [gpu2] => (item=%s)" % devices[0] in stat_task, out


def test_present_device_files_pass(run_playbook, tmp_path):
    # gpu1 drifted elsewhere (slurmd stopped): its device files are not in the drift items
    result, out = _run(run_playbook, tmp_path, [
        {"kind": "services", "name": "slurmd", "missing": False, "drift": ["service slurmd: inactive, expected started"]},
    ], present=["renderD128", "renderD129"])
    assert result.returncode == 0, out
    for node in ("gpu1", "gpu2"):
        assert "%s has every GPU device file" % node in out, out
