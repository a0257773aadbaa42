#!/usr/bin/python
# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: sbatch_test_only
short_description: Ask Slurm whether it would accept job scripts now (sbatch --test-only), in one call
version_added: 0.1.0
description:
  - Reads the nodes out of service (C(sinfo --noheader --Node --states=<states> --format %N)) and runs
    C(sbatch --test-only) on each job script, all in one round trip, with C(LANG=C). Nothing is submitted -
    C(--test-only) validates the script and estimates when it would start.
  - Fails when Slurm refuses a job, naming each refused job and Slurm's answer, or when C(sinfo) fails.
  - One refusal is not a failure - on a cluster in use some nodes may be drained or down, and Slurm answers
    C(Requested node configuration is not available) for a job that needs every node. While some node is out of
    service that answer is inconclusive - the job is listed in RV(inconclusive) and the caller reports it.
  - Read-only (C(changed=false)); it runs the same in check mode, where the scripts may not have been written yet,
    so a role usually skips it there.
options:
  jobs:
    description: The job scripts, on the host the module runs on (a Slurm submit host).
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The job's name, used in the messages and the results.
        type: str
        required: true
      script:
        description: Absolute path of the batch script.
        type: path
        required: true
  out_of_service_states:
    description: The C(sinfo --states) of nodes that count as out of service.
    type: list
    elements: str
    default: [drain, drng, down, maint, fail, no_respond]
attributes:
  check_mode:
    description: Read-only; runs the same in check mode.
    support: full
  diff_mode:
    description: Changes nothing, so there is no diff.
    support: none
  platform:
    description: A Slurm submit host (C(sinfo) and C(sbatch) in the path, the controller reachable).
    support: full
    platforms: posix
author:
  - gpucluster.training maintainers (@gpucluster)
"""

EXAMPLES = r"""
- name: Slurm would accept each job (one call; nothing is submitted)
  gpucluster.training.sbatch_test_only:
    jobs:
      - {name: llama2_pretrain, script: /opt/jobs/llama2_pretrain.sbatch}
      - {name: smoke, script: /opt/jobs/smoke.sbatch}
  register: accept
  when: not ansible_check_mode

- name: Say which checks were inconclusive
  ansible.builtin.debug:
    msg: "{{ accept.inconclusive | join(', ') }}: nodes {{ accept.out_of_service | join(', ') }} are out of service"
  when: accept.inconclusive | default([]) | length > 0
"""

RETURN = r"""
out_of_service:
  description: The nodes out of service, each once, in the order sinfo lists them.
  returned: always
  type: list
  elements: str
  sample: [gpu3]
jobs:
  description: Slurm's answer for each job, in the order given.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: O(jobs[].name).
      type: str
    script:
      description: O(jobs[].script).
      type: str
    rc:
      description: Exit status of C(sbatch --test-only).
      type: int
    verdict:
      description: V(accepted), V(inconclusive) (see the description) or V(refused).
      type: str
      choices: [accepted, inconclusive, refused]
    message:
      description: Slurm's answer (stdout and stderr) - the start estimate, or why it refuses.
      type: str
  sample:
    - name: smoke
      script: /opt/jobs/smoke.sbatch
      rc: 0
      verdict: accepted
      message: "sbatch: Job 639625 to start at 2021-11-13T04:47:02 using 256 processors on nodes nid001294 in partition standard"
accepted:
  description: Names of the jobs Slurm would accept.
  returned: always
  type: list
  elements: str
  sample: [smoke]
inconclusive:
  description: Names of the jobs Slurm could not place with the nodes in service now.
  returned: always
  type: list
  elements: str
  sample: [llama2_pretrain]
refused:
  description: Names of the jobs Slurm refuses (the module fails when there is one).
  returned: always
  type: list
  elements: str
  sample: []
msg:
  description: One line with the outcome.
  returned: always
  type: str
  sample: "Slurm would accept 1 of 2 job(s); 1 inconclusive (nodes out of service: gpu3)"
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_accept import (
    OUT_OF_SERVICE_STATES, SlurmAcceptError, judge_jobs, parse_node_names, refusal_message)
from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_read import LANG_C


def tool(module, name):
    path = module.get_bin_path(name)
    if not path:
        module.fail_json(msg="%s not found: run this on a Slurm submit host" % name)
    return path


def main():
    module = AnsibleModule(
        argument_spec=dict(
            jobs=dict(type="list", elements="dict", required=True, options=dict(
                name=dict(type="str", required=True),
                script=dict(type="path", required=True),
            )),
            out_of_service_states=dict(type="list", elements="str", default=list(OUT_OF_SERVICE_STATES)),
        ),
        supports_check_mode=True,
    )
    params = module.params
    sinfo, sbatch = tool(module, "sinfo"), tool(module, "sbatch")
    rc, out, err = module.run_command([sinfo, "--noheader", "--Node", "--states=" + ",".join(params["out_of_service_states"]),
                                       "--format", "%N"], environ_update=LANG_C)
    if rc != 0:
        module.fail_json(msg="sinfo failed (rc %d): %s" % (rc, (err or out).strip()), rc=rc, stdout=out, stderr=err)
    runs = []
    for job in params["jobs"]:
        job_rc, job_out, job_err = module.run_command([sbatch, "--test-only", job["script"]], environ_update=LANG_C)
        runs.append({"name": job["name"], "script": job["script"], "rc": job_rc,
                     "output": "\n".join(part.strip() for part in (job_out, job_err) if part and part.strip())})
    try:
        out_of_service = parse_node_names(out)
        result = judge_jobs(runs, out_of_service)
    except SlurmAcceptError as exc:
        module.fail_json(msg=str(exc))
    result["out_of_service"] = out_of_service
    if result["refused"]:
        module.fail_json(msg=refusal_message(result), **result)
    msg = "Slurm would accept %d of %d job(s)" % (len(result["accepted"]), len(runs))
    if result["inconclusive"]:
        msg += "; %d inconclusive (nodes out of service: %s)" % (len(result["inconclusive"]), ", ".join(out_of_service))
    module.exit_json(changed=False, msg=msg, **result)


if __name__ == "__main__":
    main()
