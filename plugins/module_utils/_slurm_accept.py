# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Would Slurm accept these job scripts now: the pure part of the sbatch_test_only module.

Text in (the output of ``sinfo --noheader --Node --format %N`` and of each ``sbatch --test-only``),
verdicts out. ``sbatch --test-only`` validates a script and estimates when it would start, without
submitting it. A refusal is a failure, except one: on a cluster in use some nodes may be drained or
down, and Slurm then answers "Requested node configuration is not available" for a job that needs
every node. While some node is out of service that answer is inconclusive, not a failure.
"""

from __future__ import annotations

# The refusal that only means "not with the nodes in service now" (slurm/src/common/slurm_errno.c,
# ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE).
NODE_CONFIG_UNAVAILABLE = "Requested node configuration is not available"
# sinfo --states of the nodes out of service (drained or draining, down, in maintenance, failing, not responding).
OUT_OF_SERVICE_STATES = ("drain", "drng", "down", "maint", "fail", "no_respond")

ACCEPTED, INCONCLUSIVE, REFUSED = "accepted", "inconclusive", "refused"


class SlurmAcceptError(ValueError):
    """A tool's output is not what was asked for."""


def parse_node_names(text):
    """`sinfo --noheader --Node --format %N`: one node name a line (a node in several partitions is
    listed once per partition) -> the names, each once, in the order listed."""
    names = []
    for raw in (text or "").splitlines():
        name = raw.strip()
        if not name:
            continue
        if len(name.split()) != 1:
            raise SlurmAcceptError("sinfo: line %r is not one node name" % raw)
        if name not in names:
            names.append(name)
    return names


def judge_test_only(rc, output, out_of_service):
    """One `sbatch --test-only` (rc, its output, stdout and stderr together) -> accepted, inconclusive or refused."""
    if rc == 0:
        return ACCEPTED
    if NODE_CONFIG_UNAVAILABLE in (output or "") and out_of_service:
        return INCONCLUSIVE
    return REFUSED


def judge_jobs(runs, out_of_service):
    """runs: [{name, script, rc, output}] -> {jobs: [run + verdict, message], accepted, inconclusive, refused (names)}.

    message is Slurm's answer (the output, stripped): the start estimate, or why it refuses."""
    jobs = []
    verdicts = {ACCEPTED: [], INCONCLUSIVE: [], REFUSED: []}
    for run in runs:
        if not isinstance(run.get("rc"), int):
            raise SlurmAcceptError("sbatch --test-only %s: no exit status" % run.get("script"))
        verdict = judge_test_only(run["rc"], run.get("output"), out_of_service)
        jobs.append({"name": run["name"], "script": run["script"], "rc": run["rc"], "verdict": verdict,
                     "message": (run.get("output") or "").strip()})
        verdicts[verdict].append(run["name"])
    return dict(jobs=jobs, **verdicts)


def refusal_message(result):
    """One line for the failure: each refused job and Slurm's answer."""
    refused = [job for job in result["jobs"] if job["verdict"] == REFUSED]
    return "Slurm refuses %s: %s" % (
        ", ".join(job["name"] for job in refused),
        "; ".join("%s (%s): %s" % (job["name"], job["script"], job["message"] or "rc %d, no message" % job["rc"]) for job in refused))
