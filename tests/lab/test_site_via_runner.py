# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""site.yml on the running lab through ansible-runner, with a private data directory laid out
the way AWX lays out a job: project/, inventory/, env/, and the collections that project sync
would install under requirements_collections/. Needs the lab up (`make lab-up`); run by
`make lab-test`, which brings it up first."""
import json
import os
import pathlib
import shutil
import subprocess

import ansible_runner
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def private_data_dir(tmp_path_factory):
    pdd = tmp_path_factory.mktemp("awx-job")
    project = pdd / "project"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.split(b"\0")
    for rel in filter(None, files):
        src = ROOT / rel.decode()
        if src.is_file():
            dst = project / rel.decode()
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    # what AWX's project sync does with collections/requirements.yml: the collection and its
    # dependencies on a collections path of the job (the dependencies come from the venv here)
    coll = pdd / "requirements_collections" / "ansible_collections" / "gpucluster"
    coll.mkdir(parents=True)
    (coll / "training").symlink_to(project)
    shutil.copytree(ROOT / "inventories/lab", pdd / "inventory")
    (pdd / "env").mkdir()
    site_packages = next((ROOT / ".venv/lib").glob("python3*/site-packages"))
    (pdd / "env/envvars").write_text(json.dumps({
        "ANSIBLE_COLLECTIONS_PATH": f"{pdd / 'requirements_collections'}:{site_packages}",
        "ANSIBLE_FORCE_COLOR": "false",
        "CONTAINERS_CONF": os.environ.get("CONTAINERS_CONF", str(ROOT / "tools/containers.conf")),
    }))
    (pdd / "env/settings").write_text(json.dumps({"suppress_ansible_output": True, "job_timeout": 3600}))
    return pdd


def _run(pdd, ident):
    return ansible_runner.run(private_data_dir=str(pdd), project_dir=str(pdd / "project"), playbook="site.yml",
                              inventory=str(pdd / "inventory"), ident=ident, quiet=True)


def test_site_runs_as_an_awx_job_and_second_run_changes_nothing(private_data_dir):
    first = _run(private_data_dir, "first")
    artifacts = private_data_dir / "artifacts" / "first"
    assert (artifacts / "status").read_text() == "successful", (artifacts / "stdout").read_text()[-4000:]
    assert (artifacts / "rc").read_text() == "0"
    assert first.stats["failures"] == {} and first.stats["dark"] == {}
    assert set(first.stats["ok"]) == {"ctl1", "gpu1", "gpu2"}

    second = _run(private_data_dir, "second")
    assert second.status == "successful"
    assert second.stats["changed"] == {}, f"second run changed: {second.stats['changed']}"
    events = [e for e in second.events if e.get("event") == "playbook_on_stats"]
    assert events, "no recap event in the job's artifacts"
