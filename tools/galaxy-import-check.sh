#!/usr/bin/env bash
# Builds the collection with `ansible-galaxy collection build` (build_ignore in galaxy.yml decides
# what ships) and runs galaxy-importer, the checker Galaxy and Automation Hub run on upload, on
# the tarball. Fails when the import fails or reports any error or warning (ansible-lint findings
# on the built artifact, missing role READMEs, bad docs, ...). Offline; no container engine.
#   tools/galaxy-import-check.sh            (make lint runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
python=${GALAXY_IMPORTER_PYTHON:-python}
work=$(mktemp -d /var/tmp/gpucluster-galaxy-import.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build" "$work/run" "$work/tmp"

ansible-galaxy collection build --output-path "$work/build" "$ROOT" >/dev/null
tarball=$(ls "$work"/build/*.tar.gz)

log=$work/importer.log
rc=0
# galaxy-importer writes importer_result.json into its working directory: run it in $work/run.
(cd "$work/run" && GALAXY_IMPORTER_CONFIG="$ROOT/tools/galaxy-importer.cfg" \
  GALAXY_IMPORTER_TMP_ROOT_DIR="$work/tmp" GALAXY_IMPORTER_ANSIBLE_LOCAL_TMP="$work/tmp/ansible" \
  "$python" -m galaxy_importer.main "$tarball") >"$log" 2>&1 || rc=$?
problems=$(grep -E '^(ERROR|WARNING|CRITICAL)' "$log" || true)
if [[ $rc -ne 0 || -n "$problems" ]] || ! grep -q '^Importer processing completed successfully' "$log"; then
  grep -v '^Loading ' "$log" >&2
  echo "galaxy-import-check: FAILED: Galaxy would refuse or flag $(basename "$tarball") (log above)" >&2
  exit 1
fi
echo "galaxy-import-check: $(basename "$tarball") ($(tar tzf "$tarball" | wc -l) entries) imports cleanly: $(grep -m1 '^Importing with' "$log")"
