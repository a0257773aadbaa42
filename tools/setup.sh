#!/usr/bin/env bash
# One-time, idempotent set-up of a Debian 12 machine for the lab and the test suite:
# Debian packages, the Python venv with pinned tools, the FQCN symlink, the ansible-test
# pip bootstrap, and the node images. Safe to run again: each step skips what is done.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n== %s\n' "$*"; }

# Every package the lab and the test suite use on this machine (tests/harness/test_tools.py checks
# that each command the tools call comes from one of these or from a base Debian system):
#   golang-github-containernetworking-plugin-dnsname: containers on a CNI network (podman 4.3)
#   resolve each other by name (Molecule's test-double repository hosts); tools/podman-check.sh
#   openssh-client: the lab's SSH mode (ssh-keygen here, ssh for Ansible's ssh connection)
#   procps: sysctl (the inotify limit below)
need_pkgs=(podman runc uidmap debootstrap python3-venv slirp4netns fuse-overlayfs
           containernetworking-plugins golang-github-containernetworking-plugin-dnsname
           make git shellcheck openssh-client procps)
missing=()
for p in "${need_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then echo "setup: run as root to install ${missing[*]}" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  say "Debian packages present"
fi

# systemd in each container holds several inotify instances (systemd, journald, logind, ...); Linux
# allows 128 per user by default, which about 20 containers use up: the next container's systemd
# then stalls at boot, every job waiting (seen with the 16-node bench lab and a Molecule scenario
# beside it). Raised now and at every boot (/etc/sysctl.d).
inotify_want=1024
if (( $(sysctl -n fs.inotify.max_user_instances) < inotify_want )); then
  say "raising fs.inotify.max_user_instances to $inotify_want (systemd in many containers)"
  if [[ $(id -u) -ne 0 ]]; then echo "setup: run as root to raise fs.inotify.max_user_instances" >&2; exit 1; fi
  printf '# gpucluster.training lab (tools/setup.sh): systemd in many containers\nfs.inotify.max_user_instances = %s\n' \
    "$inotify_want" > /etc/sysctl.d/60-gpucluster-lab.conf
  sysctl -q -w fs.inotify.max_user_instances="$inotify_want"
fi

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
if [[ ! -x .venv/bin/python ]]; then
  say "creating .venv with $PY"
  "$PY" -m venv .venv
fi
stamp=.venv/.requirements.sha
want=$(sha256sum requirements/dev.txt | cut -d' ' -f1)
if [[ "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
  say "installing pinned Python tools"
  .venv/bin/python -m pip install -q --upgrade pip
  if ! .venv/bin/python -m pip install -q -r requirements/dev.txt > .venv/pip-install.log 2>&1; then
    grep -v "^WARNING: Location" .venv/pip-install.log >&2; exit 1
  fi
  .venv/bin/python -m pip check >/dev/null
  echo "$want" > "$stamp"
else
  say "Python tools up to date"
fi

# gpucluster.training.* resolves from the checkout through this link (see ansible.cfg).
mkdir -p .tmp/collections/ansible_collections/gpucluster
ln -sfn ../../../.. .tmp/collections/ansible_collections/gpucluster/training

# ansible-test downloads a pip bootstrap from a host this machine cannot reach; it first
# looks in its cache, so place a bootstrap of our own there (see tools/get_pip_offline.py).
pipver=$(.venv/bin/python - <<'PYEOF'
import re, pathlib, ansible_test
src = pathlib.Path(ansible_test.__file__).parent / "_internal" / "python_requirements.py"
m = re.search(r"\bpip=['\"]([0-9.]+)['\"]", src.read_text()) if src.exists() else None
print(m.group(1) if m else "")
PYEOF
)
if [[ -n "$pipver" ]]; then
  mkdir -p "$HOME/.ansible/test/cache"
  cp tools/get_pip_offline.py "$HOME/.ansible/test/cache/get_pip_${pipver//./_}.py"
fi

tools/build-images.sh

# The lab's SSH key (the bench's SSH mode; tools/lab.sh and bench/converge authorize it for root
# in the containers). Local state: never committed, made once.
if [[ ! -f .tmp/ssh/id_ed25519 ]]; then
  mkdir -p .tmp/ssh && chmod 700 .tmp/ssh
  ssh-keygen -q -t ed25519 -N '' -C gpucluster-lab -f .tmp/ssh/id_ed25519
fi
tools/podman-check.sh
say "setup complete"
