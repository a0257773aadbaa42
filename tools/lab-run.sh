#!/usr/bin/env bash
# The lab's main job (make lab, after tools/lab.sh up): simulated hardware from real captures,
# site.yml end to end (validation judging supplied captures), a drain on a failing capture and the
# resume on a passing one, the 2-node CPU smoke training job through Slurm, and a short summary.
set -euo pipefail
cd "$(dirname "$0")/.."
export ANSIBLE_CONFIG=$PWD/ansible.cfg
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/tools/containers.conf}
mkdir -p .tmp
inv=inventories/lab

step() { printf '\n==== %s\n' "$*"; }
run() {  # run <log> <playbook args...>: progress on the terminal, everything in the log
  local log=$1; shift
  if ! ansible-playbook "$@" 2>&1 | tee "$log"; then
    echo "lab: ansible-playbook $* failed (log: $log)" >&2; return 1
  fi
}

# The fine-tuning venv's pinned wheels, for site.yml's training stage (no index on the nodes).
tools/lab-wheels.sh

step "1/5 simulated GPU and RDMA state on gpu1, gpu2 (built from captures of real machines)"
run .tmp/lab-sim.log -i "$inv" tests/sim/lab_hardware.yml >/dev/null

step "2/5 site.yml on the lab (every stage: preflight, base, gpu_driver, probe, rdma, slurm, training, validate)"
run .tmp/lab-site.log site.yml -i "$inv"
changed=$(sed -n '/^PLAY RECAP/,$p' .tmp/lab-site.log | grep -oE '^[a-z0-9-]+ +: .*changed=[0-9]+' \
          | sed -E 's/^([a-z0-9-]+) +: .*changed=([0-9]+)/\1=\2/' | grep -v '=0$' || true)

step "3/5 validation on SUPPLIED captures (real published outputs; nothing is measured in the lab)"
python3 - .tmp/lab-validate/report.json <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
print("site.yml's validate stage: verdict %s (%s)" % (r["verdict"], "SUPPLIED, not measured" if r["supplied"] else "measured"))
for name, node in sorted(r["nodes"].items()):
    print("- %s: %s%s" % (name, node["verdict"], (" (drained: %s)" % node["reason"]) if node.get("drain") else ""))
PYEOF
echo "report: .tmp/lab-validate/report.md (with report.png)"
fail_capture=tests/fixtures/nccl-log/rccl_ddp_1node_2x7900XTX_socket_fallback_rccl2.17.1_rccl1055.log
pass_capture=tests/fixtures/nccl-log/nccl_gather_perf_2node_A100_RoCE+IB_GDRDMA_nccl2.16.5_nccltests350.log
for case in fail pass; do
  capture=$fail_capture; [[ $case == pass ]] && capture=$pass_capture
  printf '{"validate_report_dir": "%s", "validate_supplied_results": [{"test": "nccl_log", "node": "gpu2", "src": "%s", "source": "%s"}]}\n' \
    "$PWD/.tmp/lab-validate-$case" "$PWD/$capture" "$capture" > ".tmp/lab-validate-$case.json"
  run ".tmp/lab-validate-$case.log" playbooks/validate.yml -i "$inv" -e "@.tmp/lab-validate-$case.json" >/dev/null
  echo "gpu2 given $(basename "$capture"): $(podman exec ctl1 sinfo --noheader --Node --nodes gpu2 --format '%t %E')"
done

step "4/5 smoke training job through Slurm (2 nodes, CPU, gloo, torchrun)"
run .tmp/lab-smoke.log playbooks/smoke_job.yml -i "$inv" >/dev/null
sed -n '/TASK \[Show the sacct line/,/^$/p' .tmp/lab-smoke.log | grep -E '^ +"' | sed -E 's/^ +"//; s/",?$//'

step "5/5 cluster summary"
run .tmp/lab-summary.log playbooks/cluster_summary.yml -i "$inv" >/dev/null
sed -n '/"msg": \[$/,/^    \]$/p' .tmp/lab-summary.log | sed -E '1d;$d; s/^ +"//; s/",?$//'

echo
if [[ -z "$changed" ]]; then
  echo "site.yml changed nothing on any host (changed=0 on ctl1, gpu1, gpu2): the lab was already in the wanted state."
else
  echo "site.yml made changes: $(echo "$changed" | tr '\n' ' ')(run make lab again: the second run changes nothing)"
fi
