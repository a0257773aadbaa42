# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""command_not_run: a program that could not be started (the host has no Slurm client) is told from one that ran and
failed (slurmctld not answering). The results are what ansible.builtin.command registered with failed_when false."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.filter.command_not_run import FilterModule

NOT_RUN = FilterModule().filters()["command_not_run"]


def test_a_program_that_could_not_be_started():
    # ansible-core 2.19.14, argv [nosuchbinary-x, a]: rc 2, this message, nothing on stderr
    assert NOT_RUN({"changed": False, "cmd": "nosuchbinary-x a", "failed": False, "msg": "Error executing command.",
                    "rc": 2, "stderr": "", "stdout": ""}) is True
    # releases before 2.19 put the OS error in the message
    assert NOT_RUN({"rc": 2, "msg": "[Errno 2] No such file or directory: b'squeue'"}) is True


def test_a_program_that_ran_and_failed_or_passed_or_a_skipped_task():
    down = {"rc": 1, "msg": "non-zero return code", "stderr": "slurm_load_jobs error: Unable to contact slurm controller"}
    assert NOT_RUN(down) is False
    assert NOT_RUN({"rc": 0, "stdout": "4711"}) is False
    assert NOT_RUN({"skipped": True, "msg": "Error executing command."}) is False
    assert NOT_RUN(None) is False
