# -*- coding: utf-8 -*-
# Copyright: gpucluster.training contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
name: linear
short_description: Ansible's linear strategy, with tasks that only compute variables run in ansible-playbook's own process
version_added: "1.0.0"
description:
  - The same order and semantics as C(ansible.builtin.linear). Every host finishes a task before any host starts
    the next; failures, C(run_once), handlers, C(any_errors_fatal) and C(max_fail_percentage) work as there.
  - C(ansible.builtin.linear) forks a worker process for every task on every host, also for a task that never
    reaches the host (C(set_fact), C(assert), C(debug), C(fail), the includes, C(gpucluster.training.checks)).
    This strategy runs those tasks in ansible-playbook's own process instead, one host after another, with
    Ansible's own C(TaskExecutor) on a copy of the task, and hands the result to the result queue a worker
    uses, so callbacks, registered variables and facts see the same results.
    Every other task is queued to a worker as C(ansible.builtin.linear) does.
  - A task runs in the process only when its action is C(set_fact), C(assert), C(debug), C(fail),
    C(include_vars), C(include_tasks), C(include_role), C(validate_argument_spec) (a role's argument check) or
    C(gpucluster.training.checks) (by its resolved name),
    and it has no C(timeout), C(async), C(until), C(delegate_to), C(loop_control.pause) or debugger. Those keep
    their worker (a timeout is a signal in the worker, and a delay would hold every other host).
  - Applied while the play (or its batch, with C(serial)) has at most C(GPUCLUSTER_INPROCESS_MAX_HOSTS) hosts
    (32 by default). A task that only computes still costs its templating on every host, and in the process
    that is one host after another on one processor core, where workers spread it over the controller's
    cores. Up to 16 compute nodes the bench measured the process faster (README, Speed of a rerun); larger
    plays keep the workers unless this is raised.
  - Applied on ansible-core 2.19 only (the version whose worker this mirrors). On any other version every task
    is queued to a worker, as with C(ansible.builtin.linear).
  - The repository's C(ansible.cfg) sets it (C(strategy = gpucluster.training.linear)); a play may still name
    another strategy. C(GPUCLUSTER_INPROCESS=false) in the environment queues every task to a worker.
author:
  - gpucluster.training maintainers (@gpucluster)
"""

import os

from ansible.plugins import loader as plugin_loader
from ansible.plugins.strategy.linear import StrategyModule as LinearStrategyModule
from ansible.release import __version__ as ansible_version
from ansible.utils.display import Display
from ansible_collections.gpucluster.training.plugins.plugin_utils import _ansible_release

display = Display()

try:
    from ansible._internal._errors._error_utils import result_dict_from_exception
    from ansible._internal._task import TaskContext
    from ansible.executor.task_executor import TaskExecutor
    from ansible.executor.task_result import _RawTaskResult
    HAS_INTERNALS = True
except ImportError:  # pragma: no cover - another ansible-core
    HAS_INTERNALS = False

DEFAULT_MAX_HOSTS = 32

# Actions that compute on the controller only: no connection, no module, no file of the host.
IN_PROCESS_ACTIONS = frozenset(
    prefix + name
    for name in ("set_fact", "assert", "debug", "fail", "include_vars", "include_tasks", "include_role",
                 "validate_argument_spec")
    for prefix in ("", "ansible.builtin.", "ansible.legacy.")
) | frozenset(("gpucluster.training.checks",))


def enabled():
    """True when this ansible-core is one the in-process path mirrors and it is not turned off."""
    flag = os.environ.get("GPUCLUSTER_INPROCESS", "true").strip().lower()
    return (HAS_INTERNALS and _ansible_release.unsupported(ansible_version) is None
            and flag not in ("0", "false", "no", "off"))


def max_hosts():
    """The most hosts a play (or batch) may have for its tasks to run in the process."""
    value = os.environ.get("GPUCLUSTER_INPROCESS_MAX_HOSTS", "")
    try:
        return int(value) if value.strip() else DEFAULT_MAX_HOSTS
    except ValueError:
        display.warning("GPUCLUSTER_INPROCESS_MAX_HOSTS=%r is not a number: %d is used" % (value, DEFAULT_MAX_HOSTS))
        return DEFAULT_MAX_HOSTS


def in_process(task):
    """True for a task this strategy runs in ansible-playbook's own process."""
    actions = [a for a in (task.resolved_action, task.action) if isinstance(a, str)]
    if not actions or actions[0] not in IN_PROCESS_ACTIONS:
        return False
    if task.timeout or task.async_val or task.until or task.delegate_to:
        return False
    if task.loop_control and task.loop_control.pause:
        return False
    if task.debugger not in (None, "never"):
        return False
    return True


class StrategyModule(LinearStrategyModule):

    def __init__(self, tqm):
        super().__init__(tqm)
        self._gpucluster_in_process = enabled()
        self._gpucluster_max_hosts = max_hosts()

    def _queue_task(self, host, task, task_vars, play_context):
        if not (self._gpucluster_in_process and len(self._hosts_cache) <= self._gpucluster_max_hosts
                and in_process(task)):
            return super()._queue_task(host, task, task_vars, play_context)
        self._queued_task_cache[(host.name, task._uuid)] = {
            "host": host,
            "task": task,
            "task_vars": task_vars,
            "play_context": play_context,
        }
        self._tqm.send_callback("v2_runner_on_start", host, task)
        # TaskExecutor templates the task in place (post_validate): it works on a copy, as a worker
        # works on the copy its fork made. The parent blocks are copied without their task lists.
        own = task.copy(exclude_tasks=True)
        try:
            with TaskContext(own):
                result = TaskExecutor(host, own, task_vars, play_context, self._loader,
                                      plugin_loader.get_plugin_loader_namespace(), self._final_q,
                                      self._variable_manager).run()
        except Exception as ex:  # a worker reports what TaskExecutor did not catch as the task's failure
            result = result_dict_from_exception(ex)
        self._final_q.send_task_result(_RawTaskResult(host=host, task=own, return_data=result,
                                                      task_fields=own.dump_attrs()))
        self._pending_results += 1
