#!/usr/bin/env bash
# The pinned wheels of the fine-tuning venv (roles/training_jobs/files/requirements-finetune.txt)
# for the lab's Debian 13 nodes (CPython 3.13, x86_64), fetched by this machine's pip into
# .tmp/lab-wheels, which tools/lab.sh mounts at /srv/gpucluster-wheels. Only the pinned packages:
# their dependencies come from Debian on the nodes (venv with --system-site-packages).
set -euo pipefail
cd "$(dirname "$0")/.."
req=roles/training_jobs/files/requirements-finetune.txt
mkdir -p .tmp/lab-wheels
if python -m pip download -q --no-deps --only-binary=:all: --implementation cp --python-version 3.13 \
     --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
     --dest .tmp/lab-wheels -r "$req" > .tmp/lab-wheels.log 2>&1; then
  echo "lab-wheels: $(grep -cE '^[a-z]' "$req") pinned packages in .tmp/lab-wheels"
else
  grep -v "^WARNING: Location" .tmp/lab-wheels.log >&2; echo "lab-wheels: pip download failed" >&2; exit 1
fi
