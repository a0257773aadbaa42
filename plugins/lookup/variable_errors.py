# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The misspelt names and refused values among the inventory's variables for this collection."""

from __future__ import annotations

DOCUMENTATION = r"""
name: variable_errors
version_added: 0.2.0
author:
  - gpucluster.training maintainers (@gpucluster)
short_description: Misspelt names and refused values among the collection's variables of every host
description:
  - Reads every variable of each host of O(hosts) whose name is the collection's (a role's name and C(_), such as
    C(slurm_common_), or C(site_)) and returns what is wrong with them, one message each.
  - A name that no role's argument spec, no fact a role sets for later stages and no variable of C(site.yml)
    has - Ansible ignores such a variable, and the role runs with its default - is named with the hosts that
    have it and the nearest name the collection knows.
  - A value that the option's argument spec (the role's C(meta/argument_specs.yml), any entry point) refuses -
    its type, its choices, the elements of a list or the options of a dict - is named with the host and the
    spec's reason. Ansible checks a role's options only when the role starts, after the stages before it
    changed the hosts; C(site.yml)'s preflight play asks this lookup first.
  - A value that cannot be templated yet (it names a variable set later in the run) has its name checked only.
  - With O(playbook), the run of one of the collection's day-2 playbooks, the variables with that playbook's prefix
    (such as C(maintenance_) for C(rolling_maintenance)) are checked against its options in the same way.
  - The argument specs are read from the collection's own C(roles) folder, the day-2 playbooks' options from
    C(playbooks/meta/argument_specs.yml).
options:
  hosts:
    description: The hosts whose variables are read (default the play's hosts, C(ansible_play_hosts_all)).
    type: list
    elements: str
  playbook:
    description:
      - The day-2 playbook of the collection whose run this is, by its file name without C(.yml).
    type: str
    choices: [munge_key_rotate, plan, rolling_maintenance, smoke_job, torchrun_noslurm]
"""

EXAMPLES = r"""
- name: The inventory's variables for this collection are all known, with valid values
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join(' ') }}"
  vars:
    __errors: "{{ lookup('gpucluster.training.variable_errors') }}"
  run_once: true

- name: The maintenance options and the roles' variables are known, with valid values
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join(' ') }}"
  vars:
    __errors: "{{ lookup('gpucluster.training.variable_errors', playbook='rolling_maintenance') }}"
  run_once: true
"""

RETURN = r"""
_raw:
  description: One message per misspelt name and per refused value; empty when there is nothing wrong.
  type: list
  elements: str
"""

import os

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpucluster.training.plugins.plugin_utils._role_options import (
    RoleOptionsError, argument_specs_options, collection_variables, variable_errors)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ROLES = os.path.join(ROOT, "roles")
PLAYBOOK_SPECS = os.path.join(ROOT, "playbooks", "meta", "argument_specs.yml")


def collection_specs(roles_dir=ROLES):
    """``{role: {entry_point: {option: spec}}}`` of every role of the collection."""
    specs = {}
    for role in sorted(os.listdir(roles_dir)):
        path = os.path.join(roles_dir, role, "meta", "argument_specs.yml")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                specs[role] = argument_specs_options(role, handle.read())
    return specs


def playbook_options(playbook, path=PLAYBOOK_SPECS):
    """``{option: spec}`` of a day-2 playbook (its entry point in playbooks/meta/argument_specs.yml)."""
    with open(path, encoding="utf-8") as handle:
        points = argument_specs_options("playbooks", handle.read())
    if playbook not in points:
        raise RoleOptionsError("playbooks/meta/argument_specs.yml has no entry point %s" % playbook)
    return points[playbook]


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables or {}
        hosts = self.get_option("hosts")
        playbook = self.get_option("playbook")
        if hosts is None:
            hosts = variables.get("ansible_play_hosts_all") or []
        try:
            specs = collection_specs()
            options = playbook_options(playbook) if playbook else None
        except (OSError, RoleOptionsError) as exc:
            raise AnsibleError("variable_errors: %s" % exc) from exc
        hostvars = variables.get("hostvars") or {}
        values_by_host = {}
        for host in hosts:
            if host not in hostvars:
                continue
            their = hostvars[host]
            values, untemplated = {}, []
            for name in collection_variables(list(their), specs, playbook):
                try:
                    values[name] = their[name]
                except AnsibleError:
                    untemplated.append(name)
            if untemplated:
                values["__untemplated__"] = untemplated
            values_by_host[host] = values
        return [variable_errors(values_by_host, specs, playbook, options)]
