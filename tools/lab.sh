#!/usr/bin/env bash
# The local lab cluster: podman containers ctl1, gpu1, gpu2 running systemd on a private
# network, as described by inventories/lab/hosts.yml.  Usage: tools/lab.sh up|down|status
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/tools/containers.conf}
NET=gpucluster-lab
SUBNET=10.89.50.0/24
# Debian 13 (trixie): the fine-tuning job needs PyTorch >= 2.4 for FSDP on CPU (Debian 12's
# python3-torch 1.13 cannot even import torch.distributed.fsdp on Python 3.11), and Slurm's
# controller must not be older than its nodes (bookworm's 22.05 cannot serve trixie's 24.11
# slurmd), so the controller moves with them.
IMAGE=${LAB_IMAGE:-localhost/gpucluster-node:trixie}
# name:address pairs; keep in step with inventories/lab/hosts.yml (tools/lab.sh checks).
NODES=(ctl1:10.89.50.10 gpu1:10.89.50.11 gpu2:10.89.50.12)

# shellcheck source=tools/podman-check.sh
source tools/podman-check.sh

die() { echo "lab: $*" >&2; exit 1; }

preflight() {
  podman_check lab || exit 1
  podman image exists "$IMAGE" || die "node image $IMAGE is missing: run 'make setup' (tools/build-images.sh)"
  for n in "${NODES[@]}"; do
    grep -q "gpucluster_address: ${n#*:}\$" "inventories/lab/host_vars/${n%%:*}.yml" 2>/dev/null \
      || die "inventories/lab/host_vars/${n%%:*}.yml does not give ${n%%:*} the address ${n#*:} used by tools/lab.sh"
  done
}

up() {
  preflight
  podman network exists "$NET" || podman network create --subnet "$SUBNET" "$NET" >/dev/null
  for n in "${NODES[@]}"; do
    name=${n%%:*} ip=${n#*:}
    if podman container exists "$name"; then
      [[ $(podman inspect -f '{{.State.Running}}' "$name") == true ]] || podman start "$name" >/dev/null
      continue
    fi
    echo "lab: starting $name ($ip)"
    # Per-host apt archive, kept across runs and shared with Molecule hosts of the same
    # name (apt locks its archive, so hosts cannot share one).
    mkdir -p ".tmp/apt-archives/$name/partial" .tmp/lab-wheels .tmp/lab-shared
    # /srv/gpucluster: the cluster's shared filesystem (NFS on a real cluster), where the
    # fine-tuning job keeps its checkpoints; /srv/gpucluster-wheels: the pinned wheels of the
    # fine-tuning venv (tools/lab-wheels.sh), as a site without a reachable index has them.
    podman run -d --name "$name" --hostname "$name" --network "$NET" --ip "$ip" \
      --privileged --systemd always --label gpucluster.lab=1 \
      -v "$PWD/.tmp/apt-archives/$name:/var/cache/apt/archives" \
      -v "$PWD/.tmp/lab-shared:/srv/gpucluster" \
      -v "$PWD/.tmp/lab-wheels:/srv/gpucluster-wheels:ro" \
      "$IMAGE" /sbin/init >/dev/null
  done
  for n in "${NODES[@]}"; do
    name=${n%%:*}
    for _ in $(seq 60); do
      state=$(podman exec "$name" systemctl is-system-running 2>/dev/null || true)
      [[ $state == running || $state == degraded ]] && break
      sleep 1
    done
    [[ $state == running || $state == degraded ]] || die "$name: systemd did not come up (state: ${state:-unknown})"
    # SSH mode: root logs in with the key tools/setup.sh made (ssh -i .tmp/ssh/id_ed25519 root@<address>)
    if [[ -f .tmp/ssh/id_ed25519.pub ]]; then
      podman exec -i "$name" sh -c 'install -d -m 700 /root/.ssh && cat > /root/.ssh/authorized_keys' < .tmp/ssh/id_ed25519.pub
    fi
  done
  echo "lab: ctl1 gpu1 gpu2 are up on $NET ($SUBNET)"
}

down() {
  for n in "${NODES[@]}"; do podman rm -f -t 5 "${n%%:*}" >/dev/null 2>&1 || true; done
  podman network rm "$NET" >/dev/null 2>&1 || true
  echo "lab: removed"
}

status() { podman ps -a --filter label=gpucluster.lab=1 --format '{{.Names}} {{.Status}}'; }

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) die "usage: tools/lab.sh up|down|status" ;;
esac
