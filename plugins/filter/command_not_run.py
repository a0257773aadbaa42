# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a registered command result is one whose program could not be started (documentation: command_not_run.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module

# ansible.builtin.command's message when the program could not be executed (ansible-core 2.19: "Error executing
# command."; releases before put the OS error in it: "[Errno 2] No such file or directory: b'squeue'")
NOT_RUN = ("Error executing command.", "No such file or directory")


def command_not_run(result):
    """A registered ansible.builtin.command result -> True when its program was not found (or could not be
    executed): the host has no such tool. False for a result whose program ran, whatever its exit status, and for
    a skipped task or anything else."""
    if not isinstance(result, dict) or result.get("skipped"):
        return False
    message = str(result.get("msg") or "")
    return any(text in message for text in NOT_RUN)


FilterModule = filter_module(command_not_run=command_not_run)
