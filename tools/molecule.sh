#!/usr/bin/env bash
# molecule wrapper: creates the per-host apt archive folders a scenario's platforms mount
# (podman refuses a missing bind-mount source), then runs molecule.
# Usage: tools/molecule.sh <scenario> [molecule command, default: test]
set -euo pipefail
cd "$(dirname "$0")/.."
# as tools/lab.sh and the Makefile: without it podman fails here with "error setting rlimit type 7"
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/tools/containers.conf}
# as ansible.cfg (Molecule writes an ansible.cfg of its own): the collection's Jinja plugins loaded
# once per playbook run instead of once per task and host (plugins/callback/preload.py)
export ANSIBLE_CALLBACKS_ENABLED=gpucluster.training.preload
# and the strategy ansible.cfg sets: tasks that only compute variables run in ansible-playbook's own
# process (plugins/strategy/linear.py), so every scenario runs the roles as site.yml runs them
export ANSIBLE_STRATEGY=${ANSIBLE_STRATEGY:-gpucluster.training.linear}
scenario=${1:?usage: tools/molecule.sh <scenario> [command]}; shift
cmd=${1:-test}; shift || true
.venv/bin/python - "$scenario" <<'PY'
import os, sys, yaml
cfg = yaml.safe_load(open(f"molecule/{sys.argv[1]}/molecule.yml"))
for p in cfg.get("platforms", []):
    os.makedirs(f".tmp/apt-archives/{p['name']}/partial", exist_ok=True)
PY
# Molecule 26 sees galaxy.yml, takes the checkout for a collection and warns "Molecule scenarios
# should migrate to 'extensions/molecule'" while still using molecule/. The layout is fixed at
# molecule/: naming the scenario glob (what Molecule itself defaults to outside a collection)
# skips the collection detection and its warning.
export MOLECULE_GLOB="${MOLECULE_GLOB:-molecule/*/molecule.yml}"
exec molecule "$cmd" -s "$scenario" "$@"
