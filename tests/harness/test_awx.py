# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The AWX objects as code match the repository: one inventory source per inventories/<site>/,
every job template's playbook exists, and every survey variable is read by its playbook."""
import re

import yaml

from conftest import ROOT

CONFIG = yaml.safe_load((ROOT / "awx/controller_config.yml").read_text())
SITES = sorted(p.name for p in (ROOT / "inventories").iterdir() if (p / "hosts.yml").exists())


def test_one_inventory_source_per_site():
    sources = {s["source_path"]: s for s in CONFIG["controller_inventory_sources"]}
    assert sorted(sources) == [f"inventories/{site}/hosts.yml" for site in SITES]
    assert sorted(i["name"] for i in CONFIG["controller_inventories"]) == SITES
    for src in sources.values():
        assert src["source"] == "scm" and src["source_project"] == CONFIG["controller_projects"][0]["name"]


def test_job_templates_run_existing_playbooks():
    for template in CONFIG["controller_templates"]:
        assert (ROOT / template["playbook"]).is_file(), template["playbook"]
        assert template["inventory"] in SITES
        assert template["execution_environment"] in [e["name"] for e in CONFIG["controller_execution_environments"]]


def _playbook_text(path):
    """The playbook and every playbook it imports, as one text."""
    text = path.read_text()
    for imported in re.findall(r"import_playbook:\s*(\S+)", text):
        target = (path.parent / imported)
        if target.exists():
            text += _playbook_text(target)
    return text


def test_survey_variables_are_used():
    for template in CONFIG["controller_templates"]:
        spec = template.get("survey_spec")
        if not spec:
            continue
        text = _playbook_text(ROOT / template["playbook"])
        roles_text = "".join(p.read_text() for p in ROOT.glob("roles/*/meta/argument_specs.yml"))
        for question in spec["spec"]:
            var = question["variable"]
            assert var in text or re.search(rf"^\s+{re.escape(var)}:\s*$", roles_text, re.M), \
                f"survey variable {var} of {template['name']} is read by nothing"


def test_ee_definition_points_at_existing_files():
    ee = yaml.safe_load((ROOT / "execution-environment.yml").read_text())
    assert ee["version"] == 3
    for key in ("galaxy", "python", "system"):
        assert (ROOT / ee["dependencies"][key]).is_file()
    meta = yaml.safe_load((ROOT / "meta/execution-environment.yml").read_text())
    for key in ("python", "system"):
        assert (ROOT / meta["dependencies"][key]).is_file()
