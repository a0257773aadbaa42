#!/usr/bin/env bash
# Builds the collection with `ansible-galaxy collection build` (build_ignore in galaxy.yml decides
# what ships) and runs galaxy-importer, the checker Galaxy and Automation Hub run on upload, on
# the tarball. Fails when the import fails or reports any error or warning (missing role READMEs,
# bad docs, a bad changelog, ...). Galaxy's own ansible-lint pass is off (tools/galaxy-importer.cfg:
# `make lint` runs a superset of it first); instead every playbook of the built collection must
# pass `ansible-playbook --syntax-check` from the unpacked tarball alone, so a playbook that needs a
# file build_ignore leaves out fails here. Offline; no container engine.
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
# The built playbooks, from the unpacked tarball and nothing else (their roles and plugins by FQCN).
unpacked=$work/unpacked/ansible_collections/gpucluster/training
mkdir -p "$unpacked"
tar -xzf "$tarball" -C "$unpacked"
: > "$work/ansible.cfg"  # not the checkout's: nothing of it ships
mapfile -t playbooks < <(cd "$unpacked" && ls site.yml playbooks/*.yml)
if ! (cd "$unpacked" && ANSIBLE_CONFIG="$work/ansible.cfg" ANSIBLE_COLLECTIONS_PATH="$work/unpacked:$ROOT/.venv/lib/python3.11/site-packages" \
      ANSIBLE_LOCAL_TEMP="$work/tmp/ansible" ansible-playbook --syntax-check -i localhost, "${playbooks[@]}" >"$work/syntax.log" 2>&1); then
  cat "$work/syntax.log" >&2
  echo "galaxy-import-check: FAILED: a playbook of the built collection fails its syntax check (log above)" >&2
  exit 1
fi
echo "galaxy-import-check: $(basename "$tarball") ($(tar tzf "$tarball" | wc -l) entries) imports cleanly: $(grep -m1 '^Importing with' "$log"); ${#playbooks[@]} built playbooks pass --syntax-check"
