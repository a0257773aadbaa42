# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Facts are read from ansible_facts (and local facts from ansible_local), never as top-level
variables such as ansible_os_family: ansible-core 2.19 deprecates facts injected as top-level
variables, and a site that sets inject_facts_as_vars = false (the default to come) would see a
template that read ansible_os_family fail on the first run that reaches it. Names that are not facts
(magic, connection and play variables) are listed."""
import re

import pytest

from conftest import ROOT

FILES = sorted(p for pattern in ("roles/**/*.yml", "roles/**/*.j2", "playbooks/**/*.yml", "molecule/**/*.yml",
                                 "inventories/**/*.yml", "site.yml")
               for p in ROOT.glob(pattern) if p.is_file())
NOT_FACTS = frozenset((
    "ansible_facts", "ansible_local", "ansible_collections", "ansible_managed", "ansible_python_interpreter",
    "ansible_connection", "ansible_host", "ansible_user", "ansible_port", "ansible_become", "ansible_become_user",
    "ansible_become_method", "ansible_loop", "ansible_loop_var", "ansible_index_var", "ansible_check_mode",
    "ansible_diff_mode", "ansible_inventory_sources", "ansible_failed_result", "ansible_failed_task", "ansible_run_tags",
    "ansible_skip_tags", "ansible_version", "ansible_playbook_python", "ansible_config_file", "ansible_parent_role_names",
    "ansible_role_name", "ansible_role_names", "ansible_limit", "ansible_forks", "ansible_verbosity",
    "ansible_search_path", "ansible_play_hosts", "ansible_play_hosts_all", "ansible_play_batch", "ansible_play_name",
    "ansible_play_role_names", "ansible_dependent_role_names", "ansible_private_key_file", "ansible_ssh_common_args",
    "ansible_ssh_extra_args", "ansible_ssh_pipelining", "ansible_pipelining", "ansible_inventory",
    "ansible_job_id",  # an async result's key
))
NAME = re.compile(r"\bansible_[a-z0-9_]+\b")


def top_level_facts(text):
    return sorted({name for name in NAME.findall(text) if name not in NOT_FACTS})


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_facts_are_read_from_ansible_facts(path):
    found = top_level_facts(path.read_text())
    assert not found, "read these as ansible_facts['<name without ansible_>'] (top-level facts are deprecated in ansible-core 2.19): %s" % found


def test_the_check_finds_a_top_level_fact():
    assert top_level_facts("{{ ansible_os_family }} {{ ansible_facts['os_family'] }} {{ ansible_local.x }} "
                           "{{ hostvars[h]['ansible_default_ipv4'] }}") == ["ansible_default_ipv4", "ansible_os_family"]
