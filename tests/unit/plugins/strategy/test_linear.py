# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which tasks gpucluster.training.linear runs in ansible-playbook's own process (the rest keep their
worker); tests/harness/test_strategy_linear.py compares whole runs with ansible.builtin.linear."""

from __future__ import annotations

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.playbook.task import Task

from ansible_collections.gpucluster.training.plugins.strategy import linear


def task(data):
    return Task.load(data, loader=DataLoader())


@pytest.mark.parametrize("data", [
    {"ansible.builtin.set_fact": {"a": 1}},
    {"set_fact": {"a": 1}, "loop": [1, 2]},
    {"ansible.builtin.assert": {"that": "true"}, "run_once": True},
    {"ansible.builtin.debug": {"msg": "x"}, "when": "false"},
    {"ansible.builtin.fail": {"msg": "x"}, "ignore_errors": True},
    {"ansible.builtin.include_vars": {"file": "x.yml"}},
    {"ansible.builtin.include_tasks": {"file": "x.yml"}},
    {"gpucluster.training.checks": {"checks": []}},
    {"ansible.builtin.validate_argument_spec": {"argument_spec": {}, "provided_arguments": {}}},
])
def test_tasks_that_only_compute_run_in_the_process(data):
    assert linear.in_process(task(data))


@pytest.mark.parametrize("data", [
    {"ansible.builtin.command": "true"},
    {"ansible.builtin.ping": {}},
    {"ansible.builtin.setup": {}},
    {"ansible.builtin.set_fact": {"a": 1}, "delegate_to": "other"},
    {"ansible.builtin.set_fact": {"a": 1}, "timeout": 5},
    {"ansible.builtin.debug": {"msg": "x"}, "until": "true", "retries": 2},
    {"ansible.builtin.debug": {"msg": "x"}, "async": 10, "poll": 0},
    {"ansible.builtin.debug": {"msg": "x"}, "loop": [1], "loop_control": {"pause": 1}},
    {"ansible.builtin.debug": {"msg": "x"}, "debugger": "on_failed"},
])
def test_tasks_that_reach_a_host_or_wait_keep_their_worker(data):
    assert not linear.in_process(task(data))


@pytest.mark.parametrize("value, expected", [(None, True), ("true", True), ("false", False), ("0", False), ("off", False)])
def test_turned_off_by_the_environment(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("GPUCLUSTER_INPROCESS", raising=False)
    else:
        monkeypatch.setenv("GPUCLUSTER_INPROCESS", value)
    monkeypatch.setattr(linear, "ansible_version", "2.19.4")
    assert linear.enabled() is expected


def test_only_on_the_ansible_core_it_mirrors(monkeypatch):
    monkeypatch.delenv("GPUCLUSTER_INPROCESS", raising=False)
    monkeypatch.setattr(linear, "ansible_version", "2.20.0")
    assert not linear.enabled()


@pytest.mark.parametrize("value, expected", [(None, 32), ("", 32), ("100", 100), ("0", 0), ("many", 32)])
def test_the_host_limit(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("GPUCLUSTER_INPROCESS_MAX_HOSTS", raising=False)
    else:
        monkeypatch.setenv("GPUCLUSTER_INPROCESS_MAX_HOSTS", value)
    assert linear.max_hosts() == expected
