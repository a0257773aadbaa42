# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The inventory's variables for the collection: a misspelt name is named with the nearest known one,
a value a role's argument spec refuses is named with the spec's reason, everything the roles and
site.yml read passes (the whole-playbook proof: tests/harness/test_preflight.py, and every Molecule
scenario's inventory runs through site.yml's preflight play)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from ansible_collections.gpucluster.training.plugins.lookup import variable_errors as variable_errors_lookup
from ansible_collections.gpucluster.training.plugins.lookup.variable_errors import collection_specs
from ansible_collections.gpucluster.training.plugins.plugin_utils._role_options import (
    PLAYBOOK_OUTPUTS, PLAYBOOK_PREFIXES, ROLE_OUTPUTS, SITE_VARIABLES, RoleOptionsError, argument_specs_options,
    collection_variables, variable_errors)

ROOT = Path(__file__).resolve().parents[4]
SPECS = collection_specs(str(ROOT / "roles"))


def test_every_role_has_its_options_read():
    assert set(SPECS) == {path.name for path in (ROOT / "roles").iterdir() if (path / "meta" / "argument_specs.yml").is_file()}
    assert "slurm_common_cluster_name" in SPECS["slurm_common"]["main"]
    assert "gpu_common_key_url" in SPECS["gpu_common"]["apt_key"]


@pytest.mark.parametrize("text, message", [
    ("argument_specs: [", "is not YAML"),
    ("other: {}", "no argument_specs mapping"),
    ("argument_specs: {main: {options: [a, b]}}", "entry point main has no options mapping"),
])
def test_a_broken_spec_file_is_named(text, message):
    with pytest.raises(RoleOptionsError, match=message):
        argument_specs_options("r", text)


def test_only_the_collections_names_are_read():
    names = ["slurm_common_cluster_name", "site_stages", "ansible_host", "gpucluster_address", "__rdma_state",
             "slurm_x", "rdma_gid_index", "inventory_hostname", 3]
    assert collection_variables(names, SPECS) == ["rdma_gid_index", "site_stages", "slurm_common_cluster_name"]


def test_a_misspelt_name_is_named_with_the_hosts_and_the_nearest_known_name():
    errors = variable_errors({"ctl1": {"slurm_common_cluster_nmae": "prod"}, "gpu1": {"slurm_common_cluster_nmae": "prod"},
                              "gpu2": {"site_gpu_drvier": "rocm", "__untemplated__": ["rdma_gid_idx"]}}, SPECS)
    assert errors == [
        "rdma_gid_idx (set on gpu2) is not a variable of gpucluster.training: Ansible would ignore it. "
        "Did you mean rdma_gid_index?",
        "site_gpu_drvier (set on gpu2) is not a variable of gpucluster.training: Ansible would ignore it. "
        "Did you mean site_gpu_driver?",
        "slurm_common_cluster_nmae (set on ctl1, gpu1) is not a variable of gpucluster.training: Ansible would ignore it. "
        "Did you mean slurm_common_cluster_name?"]


def test_a_name_far_from_every_known_one_has_no_suggestion():
    assert variable_errors({"h": {"validate_zzzzzzzzzzzz": 1}}, SPECS) == [
        "validate_zzzzzzzzzzzz (set on h) is not a variable of gpucluster.training: Ansible would ignore it."]


def test_a_refused_value_is_named_once_with_its_hosts_and_the_specs_reason():
    errors = variable_errors({"gpu1": {"training_jobs_megatron_launch": "exce", "rdma_gid_index": "three"},
                              "gpu2": {"training_jobs_megatron_launch": "exce", "rdma_gid_index": 3}}, SPECS)
    assert len(errors) == 2
    assert errors[0].startswith("rdma_gid_index (set on gpu1) is refused by role rdma's argument spec: ")
    assert "to int" in errors[0]
    assert errors[1] == ("training_jobs_megatron_launch (set on gpu1, gpu2) is refused by role training_jobs's argument spec: "
                         "value of training_jobs_megatron_launch must be one of: exec, run, got: exce.")


def test_a_boolean_given_as_text_is_refused():
    # -e validate_drain=false gives the text "false": the spec takes it, Ansible leaves it text, and
    # "validate_drain and ..." drained the failing nodes anyway
    errors = variable_errors({"gpu1": {"validate_drain": "false", "validate_resume": False}}, SPECS)
    assert errors == ["validate_drain (set on gpu1) is the text 'false', not a boolean: Ansible does not convert it, and in role "
                      "validate's expressions any non-empty text is true. Give it in YAML (validate_drain: false) or as JSON "
                      "(-e '{\"validate_drain\": false}')."]


def test_values_the_roles_take_pass_and_an_untemplated_value_is_not_judged():
    assert variable_errors({"gpu1": {"training_jobs_megatron_launch": "run", "rdma_gid_index": "3", "site_stages": ["base"],
                                     "slurm_common_config": {"KillWait": 10}, "rdma_nccl_hcas": [],
                                     "__untemplated__": ["training_jobs_finetune_image"]}}, SPECS) == []


def test_a_secrets_refused_value_is_not_shown():
    # the validator's reasons quote the value ("'hunter2' cannot be converted to an int")
    specs = {"r": {"main": {"r_secret": {"type": "int", "no_log": True}, "r_port": {"type": "int"}}}}
    errors = variable_errors({"h": {"r_secret": "hunter2", "r_port": "eighty"}}, specs)
    assert errors[0].startswith("r_port (set on h) is refused by role r's argument spec: ") and "eighty" in errors[0]
    assert errors[1] == "r_secret (set on h) is refused by role r's argument spec: not a valid int (the value is a secret: not shown)."
    assert "hunter2" not in " ".join(errors)
    # the collection's secrets are marked so
    assert SPECS["slurm_controller"]["main"]["slurm_controller_db_password"]["no_log"]
    assert SPECS["slurm_common"]["main"]["slurm_common_munge_key"]["no_log"]


def test_an_option_required_by_its_role_is_not_required_here():
    # gpu_common's apt_key options are required where the GPU roles include it; a variable for one is judged
    # by its type only
    assert variable_errors({"h": {"gpu_common_key_name": "NVIDIA CUDA"}}, SPECS) == []


def test_the_role_outputs_are_the_role_prefixed_facts_the_roles_set():
    prefixes = tuple("%s_" % role for role in SPECS)
    found = set()
    for path in (ROOT / "roles").glob("*/tasks/*.yml"):
        for task in _tasks(yaml.safe_load(path.read_text()) or []):
            facts = task.get("ansible.builtin.set_fact") or task.get("set_fact")
            if isinstance(facts, dict):
                found.update(name for name in facts if name.startswith(prefixes) and name != "cacheable")
            registered = task.get("register")
            if isinstance(registered, str) and registered.startswith(prefixes):
                found.add(registered)
    assert found == ROLE_OUTPUTS


def _tasks(items):
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            yield item
            for key in ("block", "rescue", "always"):
                yield from _tasks(item.get(key))


def test_the_site_variables_are_the_ones_site_yml_reads():
    text = (ROOT / "playbooks" / "site.yml").read_text()
    assert set(re.findall(r"\b(site_[a-z_]+)\b", text)) - {"site_known_stages", "site_unreachable", "site_variable_errors"} \
        == SITE_VARIABLES


PLAYBOOK_POINTS = argument_specs_options("playbooks", (ROOT / "playbooks" / "meta" / "argument_specs.yml").read_text())


def test_each_day2_playbook_has_options_with_its_prefix_and_the_lookup_names_them():
    assert set(PLAYBOOK_POINTS) == set(PLAYBOOK_PREFIXES)
    for playbook, options in PLAYBOOK_POINTS.items():
        assert (ROOT / "playbooks" / ("%s.yml" % playbook)).is_file()
        assert all(name.startswith(PLAYBOOK_PREFIXES[playbook]) for name in options), playbook
    choices = yaml.safe_load(variable_errors_lookup.DOCUMENTATION)["options"]["playbook"]["choices"]
    assert sorted(choices) == sorted(PLAYBOOK_PREFIXES)


@pytest.mark.parametrize("playbook", sorted(PLAYBOOK_PREFIXES))
def test_a_day2_playbooks_options_are_the_names_it_reads_with_its_prefix(playbook):
    text = (ROOT / "playbooks" / ("%s.yml" % playbook)).read_text()
    read = set(re.findall(r"(?<![\w])(%s[a-z_]+)\b" % re.escape(PLAYBOOK_PREFIXES[playbook]), text))
    assert read - PLAYBOOK_OUTPUTS == set(PLAYBOOK_POINTS[playbook]), playbook
    # and it asks the lookup for its own checks
    assert "variable_errors', playbook='%s'" % playbook in text


def test_a_playbooks_prefix_is_read_only_in_its_own_run():
    names = ["maintenance_serial", "plan_search", "slurm_common_cluster_name"]
    assert collection_variables(names, SPECS) == ["slurm_common_cluster_name"]
    assert collection_variables(names, SPECS, "rolling_maintenance") == ["maintenance_serial", "slurm_common_cluster_name"]
    with pytest.raises(RoleOptionsError, match="site is not a day-2 playbook"):
        collection_variables(names, SPECS, "site")


def test_a_day2_option_misspelt_or_refused_is_named_with_its_playbook():
    options = PLAYBOOK_POINTS["rolling_maintenance"]
    errors = variable_errors({"gpu1": {"maintenance_rebot": "never", "maintenance_wait_timeout": "soon",
                                       "maintenance_serial": "25%"}}, SPECS, "rolling_maintenance", options)
    assert errors == [
        "maintenance_rebot (set on gpu1) is not a variable of gpucluster.training: Ansible would ignore it. "
        "Did you mean maintenance_reboot?",
        "maintenance_wait_timeout (set on gpu1) is refused by playbook rolling_maintenance's argument spec: "
        "argument 'maintenance_wait_timeout' is of type str and we were unable to convert to int: "
        "\"'soon'\" cannot be converted to an int."]


def test_a_day2_boolean_given_as_text_passes_the_playbook_reads_it_with_bool():
    options = PLAYBOOK_POINTS["munge_key_rotate"]
    assert variable_errors({"h": {"munge_key_rotate_partial": "true"}}, SPECS, "munge_key_rotate", options) == []
    assert "munge_key_rotate_partial | default(false) | bool" in (ROOT / "playbooks" / "munge_key_rotate.yml").read_text()
