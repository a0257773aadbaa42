# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Render a role's variables and templates with Ansible's templating and the collection's filters
(test helper: no playbook run, no host)."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROOT = Path(__file__).resolve().parents[4]


def templar(role, files, variables):
    """A Templar over the role's ``files`` (defaults/vars, in order) updated by ``variables``."""
    loader = DataLoader()
    merged = {}
    for name in files:
        merged.update(loader.load_from_file(str(ROOT / "roles" / role / name), trusted_as_template=True))
    merged.update(variables)
    return with_collection_filters(Templar(loader=loader, variables=merged))


def with_collection_filters(tmpl):
    """``tmpl`` with the collection's filters under their FQCN, as the collection loader would resolve them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        filters = tmpl.environment.filters
    for path in sorted((ROOT / "plugins" / "filter").glob("*.py")):
        module = importlib.import_module("ansible_collections.gpucluster.training.plugins.filter.%s" % path.stem)
        for name, func in module.FilterModule().filters().items():
            filters["gpucluster.training.%s" % name] = func
    return tmpl


def render(tmpl, text):
    return tmpl.template(trust_as_template(text))


def render_template(tmpl, role, name):
    """A role template; ``{% include 'x' %}`` of the role's own templates is inlined first."""
    base = ROOT / "roles" / role / "templates"
    text = (base / name).read_text()
    for include in sorted(base.glob("_*.j2")):
        text = text.replace("{%% include '%s' %%}" % include.name, include.read_text())
    return render(tmpl, text)
