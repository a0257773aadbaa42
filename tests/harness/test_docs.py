# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""docs/roles.md and docs/plugins.md match the argument specs and plugin docs, and every role
default is a documented argument (and the other way round)."""
import subprocess
import sys

import pytest
import yaml

from conftest import ROOT

ROLES = sorted(p.parts[-3] for p in ROOT.glob("roles/*/meta/argument_specs.yml"))


def test_generated_docs_are_current():
    res = subprocess.run([sys.executable, str(ROOT / "tools/gen_docs.py"), "--check"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("role", ROLES)
def test_defaults_match_argument_specs(role):
    specs = yaml.safe_load((ROOT / f"roles/{role}/meta/argument_specs.yml").read_text())["argument_specs"]
    documented = set()
    for spec in specs.values():
        documented |= set(spec.get("options") or {})
    defaults_file = ROOT / f"roles/{role}/defaults/main.yml"
    defaults = yaml.safe_load(defaults_file.read_text()) or {} if defaults_file.exists() else {}
    assert set(defaults) <= documented, f"undocumented defaults: {sorted(set(defaults) - documented)}"
    main = specs["main"].get("options") or {}
    without_default = [n for n, o in main.items() if n not in defaults and not o.get("required")]
    assert not without_default, f"optional arguments with no value in defaults/main.yml: {without_default}"
    for name in defaults:
        if name in main and "default" in main[name]:
            assert main[name]["default"] == defaults[name], f"{name}: argument_specs default differs from defaults/main.yml"
