#!/usr/bin/env bash
# Runs ansible-test (sanity | units) on a copy of the collection at
# <tmp>/ansible_collections/gpucluster/training, outside any git repository: inside the
# checkout ansible-test either refuses to run or, worse, skips every target and passes.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
what=${1:?usage: tools/ansible-test.sh sanity|units [ansible-test args]}; shift
tree=$(mktemp -d /var/tmp/gpucluster-ansible-test.XXXXXX)
trap 'rm -rf "$tree"' EXIT
dest=$tree/ansible_collections/gpucluster/training
mkdir -p "$dest"
if [[ -n "${GPUCLUSTER_INDEX_ONLY:-}" ]]; then
  # only what is staged in git (what the next commit will hold)
  git checkout-index -a --prefix="$dest/"
else
  git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - | tar -xf - -C "$dest"
fi
cd "$dest"
log=$tree/ansible-test.log
set +e
"$ROOT/.venv/bin/ansible-test" "$what" --venv --python 3.11 --color no "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if grep -q "All targets skipped" "$log"; then
  echo "ansible-test $what: every target was skipped: this run tested nothing" >&2; exit 1
fi
exit "$rc"
