# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The role variables that feed and split the one-call checks of a rerun (issue 16), rendered:

- megatron's one managed_state call, split by its drift_items (kind and name), not by the text:
  the mount paths it looked for (missing ones), and the engine's drift (engine.yml runs on it);
- training_jobs' one sbatch_test_only call: every job script of the submit hosts.

The managed_state results are built with the module's own drift_record (the records it returns)."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import drift_record
from ansible_collections.gpucluster.training.tests.unit.plugins.filter.role_render import render, templar

UNIT_FILE = "/lib/systemd/system/podman-restart.service"


def _result(*records):
    """A managed_state result as the module returns it, from (kind, item, drift lines, missing)."""
    items = [drift_record(*record) for record in records]
    return {"drift": [line for item in items for line in item["drift"]], "drift_items": items, "found": {"groups": {}}}


def _render(result, **variables):
    tmpl = templar("megatron", ["defaults/main.yml", "vars/main.yml", "vars/Debian.yml"],
                   dict({"__megatron_vendor": "amd", "__megatron_check_engine": True, "__megatron_paths": result}, **variables))
    return render(tmpl, "{{ __megatron_paths_missing }}"), render(tmpl, "{{ __megatron_engine_drift }}")


KFD = ("files", {"path": "/dev/kfd"}, ["/dev/kfd: missing"], True)
IB = ("files", {"path": "/dev/infiniband"}, ["/dev/infiniband: missing"], True)


def test_missing_mount_paths_are_not_engine_drift():
    service = ("services", {"name": "podman-restart"}, ["service podman-restart: disabled, expected enabled"], False)
    missing, engine = _render(_result(IB, KFD, service))
    assert missing == ["/dev/infiniband", "/dev/kfd"]
    assert engine == ["service podman-restart: disabled, expected enabled"]


def test_podman_restart_unit_not_shipped_is_no_drift():
    unit = ("files", {"path": UNIT_FILE}, ["%s: missing" % UNIT_FILE], True)
    service = ("services", {"name": "podman-restart"}, ["service podman-restart: no such unit"], True)
    package = ("packages", {"name": "podman"}, ["package podman: not installed"], True)
    missing, engine = _render(_result(KFD, unit, service, package))
    assert missing == ["/dev/kfd", UNIT_FILE]
    assert engine == ["package podman: not installed"]


@pytest.mark.parametrize("variables", [{}, {"megatron_engine": "docker"}])
def test_in_sync(variables):
    assert _render(_result(), **variables) == ([], [])


def test_docker_package_and_service():
    package = ("packages", {"name": "docker.io"}, ["package docker.io: not installed"], True)
    service = ("services", {"name": "docker"}, ["service docker: inactive, expected started"], False)
    missing, engine = _render(_result(IB, package, service), megatron_engine="docker")
    assert missing == ["/dev/infiniband"]
    assert engine == ["package docker.io: not installed", "service docker: inactive, expected started"]


@pytest.mark.parametrize("megatron, torchrun, want", [
    (True, [{"name": "finetune"}, {"name": "smoke"}], ["llama2_pretrain", "finetune", "smoke"]),
    (False, [{"name": "smoke"}], ["smoke"]),
    (False, [], [])])
def test_training_jobs_asks_slurm_about_each_job_script(megatron, torchrun, want):
    """training_jobs' sbatch_test_only call gets every job script the submit hosts hold, by name."""
    tmpl = templar("training_jobs", ["defaults/main.yml", "vars/main.yml"],
                   {"training_jobs_megatron": megatron, "__training_jobs_torchrun": torchrun, "training_jobs_dir": "/opt/jobs"})
    assert render(tmpl, "{{ __training_jobs_accept_jobs }}") == [{"name": name, "script": "/opt/jobs/%s.sbatch" % name} for name in want]
