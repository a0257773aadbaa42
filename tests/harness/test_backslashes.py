# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Jinja string literal in a templated value (a module argument, a variable, delegate_to) is
read with its backslashes kept as written (ansible-core's escape_backslashes): outside YAML's
double quotes, '(\\\\.|$)' is the regular expression "a backslash, then any character", not "a dot".
Such a pattern fails quietly: select('match', '^gpu1(\\\\.|$)') finds no host named gpu1.example.com.
Conditions (when, that, until, changed_when, failed_when) are read without that escaping, and a
double-quoted YAML scalar halves the backslashes first, so both may double them. This check finds a
doubled backslash in any other scalar that holds a template."""
import pytest
import yaml

from conftest import ROOT

FILES = sorted(p for pattern in ("roles/*/tasks/*.yml", "roles/*/handlers/*.yml", "roles/*/vars/*.yml", "roles/*/defaults/*.yml",
                                 "playbooks/**/*.yml", "molecule/*/*.yml", "molecule/*/tasks/*.yml", "site.yml")
               for p in ROOT.glob(pattern))
CONDITIONS = frozenset(("when", "changed_when", "failed_when", "until", "that"))


def doubled(node, under_condition=False):
    """(line, text) of every scalar below node, not double-quoted and not a condition, holding a
    template and a doubled backslash."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from doubled(value, under_condition or (isinstance(key, yaml.ScalarNode) and key.value in CONDITIONS))
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from doubled(item, under_condition)
    elif isinstance(node, yaml.ScalarNode) and not under_condition and node.style != '"':
        if ("{{" in node.value or "{%" in node.value) and "\\\\" in node.value:
            yield node.start_mark.line + 1, node.value.strip()[:160]


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_no_doubled_backslash_in_a_templated_value(path):
    found = list(doubled(yaml.compose(path.read_text())))
    assert not found, "doubled backslashes that reach Jinja as two (write one): %s" % found


def test_the_check_finds_a_doubled_backslash_and_spares_conditions():
    text = ("- name: x\n  ansible.builtin.debug:\n    msg: >-\n      {{ hosts | select('match', '^a(\\\\.|$)') }}\n"
            "  when: a | regex_replace('\\\\s', '') == 'b'\n"
            "- name: y\n  ansible.builtin.debug:\n    msg: \"{{ hosts | select('match', '^a(\\\\.|$)') }}\"\n")
    assert [found[0] for found in doubled(yaml.compose(text))] == [3]  # the line of the folded scalar's indicator
