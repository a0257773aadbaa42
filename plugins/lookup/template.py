# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Render a role's template files as values, as ansible.builtin.template's lookup does, without
copying every variable of the host for each file."""

from __future__ import annotations

DOCUMENTATION = r"""
name: template
version_added: 0.1.0
author:
  - gpucluster.training maintainers (@gpucluster)
short_description: Render template files as values, reading the host's variables in place
description:
  - Renders each file as the P(ansible.builtin.template#lookup) lookup does with its defaults
    (C(trim_blocks), trailing newlines kept, backslashes not escaped, files found in the role's or
    play's C(templates) folders, C(include) and C(import) searched there), and returns the texts.
  - The difference is the variables. The builtin lookup gives each file a deep copy of every
    variable of the host (ansible-core 2.19), which on a host with many facts costs more than the
    rendering. This lookup gives the file the host's variables in place, under its own (O(template_vars),
    C(ansible_managed) when not set). The roles of this collection render their managed files on every
    run to compare them with the host, and their templates do not modify the variables they read.
  - C(ansible_managed) is the C(DEFAULT_MANAGED_STR) setting with C({file}), C({host}) and C({uid})
    and the file's modification time filled in, when no variable of that name is set.
    The other C(template_*) variables of the builtin lookup are not set.
options:
  _terms:
    description: Template file names, looked up in the C(templates) folders of the role and the play.
    type: list
    elements: str
    required: true
  template_vars:
    description: Variables for the templates, over the host's.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Compare the rendered file with what the host has (no copy of every variable)
  ansible.builtin.set_fact:
    rendered: "{{ lookup('gpucluster.training.template', 'slurm.conf.j2') }}"

- name: A job's step script, the job as the template's item
  ansible.builtin.set_fact:
    step_script: "{{ lookup('gpucluster.training.template', 'step.sh.j2', template_vars={'item': job}) }}"
"""

RETURN = r"""
_raw:
  description: The rendered text of each file, in the order given.
  type: list
  elements: str
"""

import collections
import os
import pwd
import time

from ansible import constants as C
from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase
from ansible.template import trust_as_template

# ansible.builtin.template's defaults for files (the lookup's trim_blocks option defaults to true)
_OVERRIDES = {"trim_blocks": True}


def managed_string(setting, path, mtime, host, uid):
    """The ansible_managed text for one file: the setting's {file}, {host}, {uid}, then its time codes."""
    return time.strftime(setting.format(file=path, host=host, uid=uid), time.localtime(mtime))


def template_search_path(search_path, file_dir):
    """Jinja's include path for a file: its own folder, then each search path's templates folder and itself."""
    found = [file_dir]
    for path in search_path:
        found += [os.path.join(path, "templates"), path]
    return found


class LookupModule(LookupBase):
    """Render each term's file with the host's variables under the template's own."""

    def run(self, terms, variables=None, **kwargs):
        variables = variables if variables is not None else {}
        self.set_options(var_options=variables, direct=kwargs)
        own = dict(self.get_option("template_vars") or {})
        rendered = []
        for term in terms:
            path = self.find_file_in_search_path(variables, "templates", term)
            if not path:
                raise AnsibleError("template %s: not found in the templates folders of the role or play" % term)
            layer = dict(own)
            if "ansible_managed" not in variables and "ansible_managed" not in layer:
                stat = os.stat(path)
                try:
                    uid = pwd.getpwuid(stat.st_uid).pw_name
                except KeyError:
                    uid = stat.st_uid
                layer["ansible_managed"] = managed_string(C.config.get_config_value("DEFAULT_MANAGED_STR"), term, stat.st_mtime,
                                                          os.uname()[1], uid)
            templar = self._templar.copy_with_new_env(
                available_variables=collections.ChainMap(layer, variables),
                searchpath=template_search_path(variables.get("ansible_search_path", []), os.path.dirname(path)))
            text = trust_as_template(self._loader.get_text_file_contents(path))
            rendered.append(templar.template(text, escape_backslashes=False, overrides=_OVERRIDES))
        return rendered
