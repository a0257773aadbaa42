#!/usr/bin/env bash
# make lab-finetune (after make lab): the Alpaca FSDP fine-tuning job of role
# gpucluster.training.training_jobs through Slurm on the lab, on CPUs, submitted by a REGULAR
# user (LAB_FINETUNE_USER, default alice, the same uid on every lab node, as a directory service
# would give; made here when missing: no role of the collection owns site users):
#   1. sbatch finetune.sbatch as the role rendered it (2 nodes x 2 processes, gloo, FSDP);
#   2. after its first checkpoint, scontrol requeue: Slurm stops it and starts it again, and it
#      resumes from the checkpoint with the step counter and the loss continuing;
#   3. the same job on a malformed dataset: it fails naming the line and record, no traceback.
# Prints the job log (both nodes' ranks, loss per step, checkpoints, resume) and checks it.
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/tools/containers.conf}
JOBS=/opt/gpucluster/jobs
LOGS=/var/log/gpucluster/jobs
CTL=ctl1 FIRST=gpu1
TIMEOUT=${LAB_FINETUNE_TIMEOUT:-600}
USER_NAME=${LAB_FINETUNE_USER:-alice}
USER_UID=${LAB_FINETUNE_UID:-2001}

die() { echo "lab-finetune: $*" >&2; exit 1; }
on() { local h=$1; shift; podman exec "$h" "$@"; }
step() { printf '\n==== %s\n' "$*"; }
as_user() { local h=$1; shift; podman exec --workdir "/home/$USER_NAME" "$h" runuser -u "$USER_NAME" -- "$@"; }
sacct_line() { on "$CTL" sacct -X -n -P -j "$1" -o JobID,JobName,User,NNodes,NodeList,State,ExitCode,Elapsed | head -n 1; }
state() { sacct_line "$1" | cut -d'|' -f6 | cut -d' ' -f1; }
log_of() { on "$FIRST" cat "$LOGS/finetune-$1.out" 2>/dev/null || true; }
wait_for() {  # wait_for <seconds> <command...>: until the command succeeds
  local limit=$1; shift
  for _ in $(seq "$limit"); do "$@" && return 0; sleep 1; done
  return 1
}
ended() { case "$(state "$1")" in COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|BOOT_FAIL) return 0 ;; *) return 1 ;; esac; }

for h in $CTL $FIRST gpu2; do
  [[ $(podman inspect -f '{{.State.Running}}' "$h" 2>/dev/null) == true ]] || die "$h is not running: run 'make lab' first"
done
on "$CTL" test -f "$JOBS/finetune.sbatch" || die "$JOBS/finetune.sbatch is missing on $CTL: run 'make lab' (training_jobs_finetune in inventories/lab)"
# The regular user, the same uid on every node (idempotent: made only when missing).
for h in $CTL $FIRST gpu2; do
  on "$h" getent passwd "$USER_NAME" >/dev/null \
    || on "$h" useradd --uid "$USER_UID" --create-home --shell /bin/bash "$USER_NAME"
  [[ $(on "$h" id -u "$USER_NAME") == "$USER_UID" ]] || die "$h: $USER_NAME has uid $(on "$h" id -u "$USER_NAME"), not $USER_UID"
done
# The run directory from the rendered step: --output_dir of finetune_alpaca.py, whose ${USER}
# the program expands to the user the job runs as.
out=$(on "$FIRST" grep -oE -- "--output_dir [^ ]+" "$JOBS/finetune.step.sh" | tail -n 1 | cut -d' ' -f2 | tr -d "'")
[[ -n "$out" ]] || die "no --output_dir in $FIRST:$JOBS/finetune.step.sh (training_jobs_finetune_program must be alpaca_fsdp)"
out=${out//"\${USER}"/$USER_NAME}
out=${out//"\$USER"/$USER_NAME}

step "1/3 $USER_NAME (uid $USER_UID on ctl1, gpu1, gpu2) runs sbatch $JOBS/finetune.sbatch (fresh run directory $out, shared by gpu1 and gpu2)"
on "$FIRST" rm -rf "$out" "$out-malformed"
job=$(as_user "$CTL" sbatch --parsable "$JOBS/finetune.sbatch" | cut -d';' -f1)
echo "$USER_NAME submitted job $job"
# Watch the shared run directory (the job log reaches the file in chunks): the first complete
# checkpoint is the one with its DONE marker.
first_done() { on "$FIRST" sh -c "ls -d $out/checkpoints/step-*/DONE 2>/dev/null | head -n 1" | grep -q DONE; }
wait_for "$TIMEOUT" first_done || { log_of "$job" | tail -n 30; die "job $job wrote no checkpoint in ${TIMEOUT}s ($(sacct_line "$job"))"; }
first_ckpt=$(on "$FIRST" sh -c "ls -d $out/checkpoints/step-*/DONE | head -n 1" | grep -oE 'step-[0-9]+' | grep -oE '[1-9][0-9]*$')
echo "job $job saved its checkpoint at step $first_ckpt"

step "2/3 scontrol requeue $job (as a preemption or a node failure with --requeue would)"
on "$CTL" scontrol requeue "$job"
wait_for "$TIMEOUT" bash -c "podman exec $FIRST grep -q 'finetune: resumed from checkpoint' $LOGS/finetune-$job.out 2>/dev/null" \
  || { log_of "$job" | tail -n 30; die "job $job did not resume in ${TIMEOUT}s ($(sacct_line "$job"))"; }
wait_for "$TIMEOUT" ended "$job" || die "job $job did not end in ${TIMEOUT}s ($(sacct_line "$job"))"
text=$(log_of "$job")
echo "sacct: $(sacct_line "$job")"
echo "log $FIRST:$LOGS/finetune-$job.out (--open-mode=append: both runs of the job):"
grep -E '^job |node rank|finetune: (job|model|no checkpoint|resumed|step|checkpoint|done)|error' <<<"$text" \
  | sed -E 's/^\[default0\]://' | sed 's/^/  /'

# Checks: the regular user's job completed, both nodes took part, the loss fell, the requeued run
# resumed where the first stopped, and the checkpoints belong to the user.
[[ $(state "$job") == COMPLETED ]] || die "job $job did not complete: $(sacct_line "$job")"
[[ $(sacct_line "$job" | cut -d'|' -f3) == "$USER_NAME" ]] || die "job $job did not run as $USER_NAME: $(sacct_line "$job")"
owner=$(on "$FIRST" stat -c %U "$out/checkpoints")
[[ $owner == "$USER_NAME" ]] || die "$out/checkpoints belongs to $owner, not $USER_NAME"
echo "checkpoints: $(on "$FIRST" stat -c '%U %A %n' "$out/checkpoints") under $(on "$FIRST" stat -c '%U %A %n' "${out%/*/*}")"
grep -qE 'finetune: job .* ranks=.*gpu1/.*gpu2/|finetune: job .* ranks=.*gpu2/.*gpu1/' <<<"$text" || die "the ranks line does not name gpu1 and gpu2"
mapfile -t steps < <(grep -oE 'finetune: step [0-9]+/' <<<"$text" | grep -oE '[0-9]+')
resumed=$(grep -oE 'resumed from checkpoint [^:]+: step [0-9]+' <<<"$text" | grep -oE '[0-9]+$' | tail -n 1)
[[ ${steps[0]} == 1 ]] || die "the first run did not start at step 1"
after=$(grep -A100000 'finetune: resumed from checkpoint' <<<"$text" | grep -oE 'finetune: step [0-9]+/' | head -n 1 | grep -oE '[0-9]+')
[[ $after == $((resumed + 1)) ]] || die "after resuming from step $resumed the job went on at step $after"
(( resumed >= first_ckpt )) || die "resumed from step $resumed, before the first checkpoint ($first_ckpt)"
python3 - "$text" <<'PYEOF' || die "the loss did not fall"
import re, sys
loss = [float(x) for x in re.findall(r"finetune: step \d+/\d+ loss ([0-9.]+)", sys.argv[1])]
first, last = sum(loss[:3]) / 3, sum(loss[-3:]) / 3
print("loss: first 3 steps %.4f -> last 3 steps %.4f (%d steps logged, requeue included)" % (first, last, len(loss)))
sys.exit(0 if last < first else 1)
PYEOF
echo "requeued job resumed from its step-$resumed checkpoint and went on at step $after: OK"

step "3/3 the same job on a malformed dataset (a record with a syntax error)"
bad="$out-malformed/alpaca_malformed.json"
as_user "$FIRST" mkdir -p "${bad%/*}"
# The lab dataset with the colon after "output" of record 3 removed.
as_user "$FIRST" python3 -c 'import sys; t = open(sys.argv[1]).read().split("\n"); i = [n for n, l in enumerate(t) if "\"output\":" in l][2]; t[i] = t[i].replace("\"output\":", "\"output\"", 1); open(sys.argv[2], "w").write("\n".join(t))' \
  "$JOBS/alpaca_lab.json" "$bad"
badjob=$(as_user "$CTL" sbatch --parsable "$JOBS/finetune.sbatch" --data_path "$bad" --output_dir "${bad%/*}/run" | cut -d';' -f1)
wait_for "$TIMEOUT" ended "$badjob" || die "job $badjob did not end in ${TIMEOUT}s"
bad_text=$(log_of "$badjob")
echo "sacct: $(sacct_line "$badjob")"
grep -E 'error|failed' <<<"$bad_text" | sed 's/^/  /'
[[ $(state "$badjob") == FAILED ]] || die "job $badjob on a malformed dataset did not fail: $(sacct_line "$badjob")"
grep -qE "finetune: error: $bad: record 3: line [0-9]+ column [0-9]+: Expecting ':' delimiter" <<<"$bad_text" || die "no line/record error in the log"
! grep -q Traceback <<<"$bad_text" || die "the malformed-dataset log has a traceback"
echo "malformed dataset: the job failed before any rank started, naming line and record, no traceback: OK"
