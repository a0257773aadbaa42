# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Render a role's templates and variables with Ansible's own templar, for one operating system's
facts, without a host: the fixture ``templates`` for the test module's ``ROLE`` (a role name)."""

import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.gpucluster.training.tests.unit.plugins.filter.role_render import with_collection_filters

ROLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "roles")

FACTS = {
    "ubuntu2204": {"distribution": "Ubuntu", "os_family": "Debian", "distribution_version": "22.04",
                   "distribution_major_version": "22", "distribution_release": "jammy"},
    "ubuntu2404": {"distribution": "Ubuntu", "os_family": "Debian", "distribution_version": "24.04",
                   "distribution_major_version": "24", "distribution_release": "noble"},
    "debian12": {"distribution": "Debian", "os_family": "Debian", "distribution_version": "12.7",
                 "distribution_major_version": "12", "distribution_release": "bookworm"},
    "rhel9": {"distribution": "RedHat", "os_family": "RedHat", "distribution_version": "9.4",
              "distribution_major_version": "9", "distribution_release": "Plow"},
    "rocky9": {"distribution": "Rocky", "os_family": "RedHat", "distribution_version": "9.4",
               "distribution_major_version": "9", "distribution_release": "Blue Onyx"},
}


def _trust(data):
    if isinstance(data, str):
        return trust_as_template(data)
    if isinstance(data, list):
        return [_trust(item) for item in data]
    if isinstance(data, dict):
        return {key: _trust(item) for key, item in data.items()}
    return data


def _load(path):
    with open(path, encoding="utf-8") as handle:
        return _trust(yaml.safe_load(handle) or {})


class RoleTemplates:
    """A role's defaults, vars/main.yml and OS vars file (as its main.yml loads them) for one OS."""

    def __init__(self, role):
        self.path = os.path.join(ROLES, role)

    def templar(self, os_name, **overrides):
        facts = dict(FACTS[os_name], kernel="6.8.0-45-generic", architecture="x86_64")
        names = [facts["distribution"], facts["os_family"]]
        vars_dir = os.path.join(self.path, "vars")
        os_file = next(os.path.join(vars_dir, n + ".yml") for n in names if os.path.exists(os.path.join(vars_dir, n + ".yml")))
        variables = {}
        for path in (os.path.join(self.path, "defaults", "main.yml"), os.path.join(vars_dir, "main.yml"), os_file):
            variables.update(_load(path))
        variables.update(overrides)
        variables.update(ansible_facts=facts, ansible_managed="Ansible managed", inventory_hostname="node1")
        return with_collection_filters(Templar(loader=DataLoader(), variables=variables))

    def render(self, os_name, template, **overrides):
        """The template's lines, without blank lines and comments."""
        with open(os.path.join(self.path, "templates", template), encoding="utf-8") as handle:
            text = handle.read()
        out = self.templar(os_name, **overrides).template(trust_as_template(text))
        return [line for line in out.splitlines() if line and not line.startswith("#")]

    def value(self, os_name, expression, **overrides):
        """The value of a Jinja expression over the role's variables."""
        return self.templar(os_name, **overrides).template(trust_as_template("{{ %s }}" % expression))


@pytest.fixture
def templates(request):
    """RoleTemplates of the test module's ROLE."""
    return RoleTemplates(request.module.ROLE)
