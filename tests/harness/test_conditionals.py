# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every conditional of every task file and playbook is a string (or a boolean), as ansible-core
2.19 requires: an unquoted condition with ': ' in it (a message in a contains() test, say) is a
YAML mapping, which neither yamllint nor ansible-lint reports and which fails only when the task
runs ("Conditional expressions must be strings"), after every step before it."""
import pytest
import yaml

from conftest import ROOT

FILES = sorted(p for pattern in ("roles/*/tasks/*.yml", "roles/*/handlers/*.yml", "playbooks/**/*.yml", "molecule/*/*.yml",
                                 "molecule/*/tasks/*.yml", "site.yml")
               for p in ROOT.glob(pattern) if p.name != "molecule.yml")
KEYS = ("when", "changed_when", "failed_when", "until")
ASSERTS = ("assert", "ansible.builtin.assert")


def tasks_of(node):
    """Every task dict in a playbook or task file, blocks and plays walked."""
    if isinstance(node, list):
        for item in node:
            yield from tasks_of(item)
    elif isinstance(node, dict):
        if "name" in node or any(k in node for k in KEYS):
            yield node
        for key in ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always"):
            if key in node:
                yield from tasks_of(node[key])


def bad_conditions(task):
    found = []
    for key in KEYS:
        if key in task:
            values = task[key] if isinstance(task[key], list) else [task[key]]
            found += ["%s: %r" % (key, v) for v in values if not isinstance(v, (str, bool))]
    for module in ASSERTS:
        if isinstance(task.get(module), dict) and "that" in task[module]:
            that = task[module]["that"]
            found += ["that: %r" % v for v in (that if isinstance(that, list) else [that]) if not isinstance(v, (str, bool))]
    return found


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_conditions_are_strings(path):
    bad = [(task.get("name", "?"), found) for task in tasks_of(yaml.safe_load(path.read_text()) or []) for found in bad_conditions(task)]
    assert not bad, "conditions that YAML read as something else than a string (quote them): %s" % bad


def test_the_check_sees_a_condition_yaml_made_a_mapping():
    task = yaml.safe_load("- name: x\n  ansible.builtin.assert:\n    that:\n      - a is contains('b: c')\n")[0]
    assert bad_conditions(task) == ["that: {\"a is contains('b\": \"c')\"}"]
