#!/usr/bin/env bash
# The whole test suite (`make test`, run by .ci/run): setup, then lint, sanity, units and harness in
# two lanes, then every Molecule scenario, two at a time (longest first), each in its own log. Prints the time of
# every phase and the total, and exits non-zero if any phase failed.
#   TEST_JOBS=1 tools/test-all.sh      scenarios one after the other
#   TEST_SCENARIOS="cluster rdma" ...  only these scenarios (make test passes it through)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PATH=$PWD/.venv/bin:$PATH
logs=.tmp/test-logs
mkdir -p "$logs"
jobs=${TEST_JOBS:-2}
# Longest first, so the two lanes finish close together (times in README, "Tests").
order=(cluster rocm slurm-trixie cuda slurm-repo rdma rdma_mismatch)
all=$(find molecule -mindepth 2 -maxdepth 2 -name molecule.yml | cut -d/ -f2 | sort)
scenarios=${TEST_SCENARIOS:-$( { printf '%s\n' "${order[@]}" | grep -Fxf <(echo "$all"); echo "$all" | grep -vFxf <(printf '%s\n' "${order[@]}"); } )}
# one name a line (TEST_SCENARIOS may separate them by spaces): xargs below takes a line per scenario
scenarios=$(tr -s '[:blank:]' '\n' <<< "$scenarios" | sed '/^$/d')

results=()
failed=0
start_all=$(date +%s)

phase() {  # phase NAME COMMAND...: run, time, record
  local name=$1; shift
  local t0 rc
  t0=$(date +%s)
  printf '\n===== %s\n' "$name"
  "$@"; rc=$?
  results+=("$(printf '%-22s %5ss  %s' "$name" "$(( $(date +%s) - t0 ))" "$([[ $rc == 0 ]] && echo ok || echo FAILED)")")
  ((rc == 0)) || failed=$((failed + 1))
  return "$rc"
}

summary() {
  local passed=$(( ${#results[@]} - failed ))
  printf '\n===== make test: time of every phase\n'
  printf '%s\n' "${results[@]}"
  printf '%-22s %5ss\n' total "$(( $(date +%s) - start_all ))"
  echo "phases: $passed passed, $failed failed"
}
trap summary EXIT

phase setup tools/setup.sh || exit 1

# lint, sanity, units and harness: each runs on one core, so two lanes of them (about 140 s each):
# each lane writes .tmp/test-logs/<phase>.log/.rc/.time; the logs are printed after, in order.
check_phase() {  # check_phase NAME COMMAND...
  local name=$1 t0 rc; shift
  t0=$(date +%s)
  "$@" > "$logs/$name.log" 2>&1; rc=$?
  echo "$rc" > "$logs/$name.rc"; echo "$(( $(date +%s) - t0 ))" > "$logs/$name.time"
}
rm -f "$logs"/{lint,sanity,units,harness}.{rc,time}
# (ansible-test's sanity and units in one lane: they share its venvs under ~/.ansible/test)
{ check_phase lint make -s lint-only; check_phase harness python -m pytest tests/harness -q -p no:cacheprovider; } &
{ check_phase sanity tools/ansible-test.sh sanity; check_phase units tools/ansible-test.sh units; } &
wait
for name in lint sanity units harness; do
  rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 1)
  printf '\n===== %s (%ss, two lanes)\n' "$name" "$(cat "$logs/$name.time" 2>/dev/null || echo '?')"
  cat "$logs/$name.log"
  results+=("$(printf '%-22s %5ss  %s' "$name" "$(cat "$logs/$name.time" 2>/dev/null || echo '?')" "$([[ $rc == 0 ]] && echo ok || echo FAILED)")")
  ((rc == 0)) || failed=$((failed + 1))
done

# Scenarios in parallel lanes; each writes .tmp/test-logs/<scenario>.log and a .rc/.time file.
run_one() {
  local s=$1 t0 rc
  t0=$(date +%s)
  tools/molecule.sh "$s" > ".tmp/test-logs/$s.log" 2>&1; rc=$?
  echo "$rc" > ".tmp/test-logs/$s.rc"; echo "$(( $(date +%s) - t0 ))" > ".tmp/test-logs/$s.time"
  printf 'molecule %-16s %5ss  %s\n' "$s" "$(cat ".tmp/test-logs/$s.time")" "$([[ $rc == 0 ]] && echo ok || echo FAILED)"
}
export -f run_one
printf '\n===== molecule: %s (%s at a time; logs in %s)\n' "$(tr '\n' ' ' <<< "$scenarios")" "$jobs" "$logs"
rm -f "$logs"/*.rc "$logs"/*.time
printf '%s\n' "$scenarios" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
for s in $scenarios; do  # one name a line: word splitting is wanted here
  rc=$(cat "$logs/$s.rc" 2>/dev/null || echo 1)
  results+=("$(printf '%-22s %5ss  %s' "molecule $s" "$(cat "$logs/$s.time" 2>/dev/null || echo '?')" "$([[ $rc == 0 ]] && echo ok || echo FAILED)")")
  if [[ $rc != 0 ]]; then
    failed=$((failed + 1))
    printf '\n===== molecule %s FAILED: last lines of %s\n' "$s" "$logs/$s.log"
    tail -n 60 "$logs/$s.log"
    # A task that retried prints a line per retry, which can push its failure out of the tail:
    # print the last failed task itself (colours off, long lines cut).
    last=$(grep -n -E '(fatal|failed): \[' "$logs/$s.log" | tail -n 1 | cut -d: -f1)
    if [[ -n $last ]]; then
      printf '\n===== molecule %s: the last failed task (line %s of %s)\n' "$s" "$last" "$logs/$s.log"
      sed -n "$((last > 3 ? last - 3 : 1)),$((last + 30))p" "$logs/$s.log" | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-600
    fi
  fi
done
((failed == 0))
