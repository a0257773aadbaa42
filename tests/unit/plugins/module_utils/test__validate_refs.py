# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One place per concept: the reference table, its documentation and the role's copies of the
Python constants agree."""

from __future__ import annotations

from pathlib import Path

import yaml

from ansible_collections.gpucluster.training.plugins.module_utils._validate_policy import DRAIN_PREFIX, TESTS
from ansible_collections.gpucluster.training.plugins.module_utils._validate_refs import INTER, INTRA

ROOT = Path(__file__).resolve().parents[4]


def test_every_reference_has_a_source_and_a_figure():
    for ref_id, entry in list(INTRA.items()) + list(INTER.items()):
        assert entry["source"].startswith("https://"), ref_id
        assert 0 < entry["busbw_gbs"] < 2000, ref_id


def test_docs_list_every_reference_with_its_figure():
    text = (ROOT / "docs" / "validate-references.md").read_text(encoding="utf-8")
    for ref_id, entry in list(INTRA.items()) + list(INTER.items()):
        row = [line for line in text.splitlines() if line.startswith("| `%s` |" % ref_id)]
        assert len(row) == 1, ref_id
        assert "| %g |" % entry["busbw_gbs"] in row[0], ref_id
        assert entry["source"].split(" ", 1)[0] in row[0], ref_id


def test_role_vars_repeat_the_python_constants():
    role_vars = yaml.safe_load((ROOT / "roles" / "validate" / "vars" / "main.yml").read_text(encoding="utf-8"))
    assert tuple(role_vars["__validate_tests_known"]) == TESTS
    assert role_vars["__validate_drain_prefix"] == DRAIN_PREFIX
    specs = yaml.safe_load((ROOT / "roles" / "validate" / "meta" / "argument_specs.yml").read_text(encoding="utf-8"))
    choices = specs["argument_specs"]["main"]["options"]["validate_tests"]["choices"]
    assert tuple(choices) == TESTS
