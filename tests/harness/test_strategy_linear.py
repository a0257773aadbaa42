# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpucluster.training.linear gives every task on every host the result ansible.builtin.linear gives.

The same playbook (tests/harness/playbooks/strategy/playbook.yml: loops, registers, includes of
files, variables and a role, run_once, ignored, rescued and host-removing failures, a handler notified
by a computed task, the checks action, a role's argument validation passing and refusing a value, a
module task) runs under both strategies with the JSON callback; every result and the recap are
compared. The first task records the process that templated
it, which shows the tasks ran in ansible-playbook's own process (one process for every host) under
gpucluster.training.linear, in a worker per host under ansible.builtin.linear and with
GPUCLUSTER_INPROCESS=false.
"""
import json

PLAYBOOK = "tests/harness/playbooks/strategy/playbook.yml"
VOLATILE = {"duration", "start", "end", "delta", "strategy_pid", "_ansible_no_log", "invocation"}


def _clean(value):
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _run(run_playbook, strategy, **env):
    result = run_playbook(PLAYBOOK, "-i", "h1,h2,h3,", "-c", "local", "-e", "ansible_python_interpreter={{ ansible_playbook_python }}",
                          extra_env=dict({"ANSIBLE_STRATEGY": strategy, "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
                                          "ANSIBLE_CALLBACKS_ENABLED": "gpucluster.training.preload"}, **env))
    assert result.returncode == 2, result.stdout[-3000:] + result.stderr  # h2 fails on purpose
    data = json.loads(result.stdout)
    per_host = {}  # each host's tasks in the order it ran them, with their results
    for play in data["plays"]:
        for task in play["tasks"]:
            for host, res in task["hosts"].items():
                per_host.setdefault(host, []).append((task["task"]["name"], res))
    pids = {host: seq[0][1]["ansible_facts"]["strategy_pid"] for host, seq in per_host.items()}
    tasks = {host: [(name, _clean(res)) for name, res in seq] for host, seq in per_host.items()}
    return pids, tasks, data["stats"]


def test_same_results_as_builtin_linear(run_playbook):
    b_pids, b_tasks, b_stats = _run(run_playbook, "ansible.builtin.linear")
    g_pids, g_tasks, g_stats = _run(run_playbook, "gpucluster.training.linear")
    assert len(set(b_pids.values())) == 3, b_pids      # a worker per host
    assert len(set(g_pids.values())) == 1, g_pids      # ansible-playbook's own process
    assert sorted(g_tasks) == ["h1", "h2", "h3"] == sorted(b_tasks)
    for host, want in b_tasks.items():
        assert [entry[0] for entry in g_tasks[host]] == [entry[0] for entry in want], host
        for got, expected in zip(g_tasks[host], want):
            assert got == expected, (host, got[0])
    assert g_stats == b_stats
    assert g_stats["h2"]["failures"] == 1 and g_stats["h1"]["changed"] == 1 and g_stats["h3"]["rescued"] == 1
    assert g_stats["h1"]["rescued"] == 1  # the role's argument_specs refused a value
    assert [len(g_tasks[h]) for h in ("h1", "h2", "h3")] == [22, 11, 14]  # h2 left the play at its failure


def test_turned_off_queues_every_task_to_a_worker(run_playbook):
    pids = _run(run_playbook, "gpucluster.training.linear", GPUCLUSTER_INPROCESS="false")[0]
    assert len(set(pids.values())) == 3, pids


def test_a_play_above_the_host_limit_keeps_the_workers(run_playbook):
    pids = _run(run_playbook, "gpucluster.training.linear", GPUCLUSTER_INPROCESS_MAX_HOSTS="2")[0]
    assert len(set(pids.values())) == 3, pids
