#!/usr/bin/env bash
# The local lab cluster: podman containers ctl1, gpu1, gpu2 running systemd on a private
# network, as described by inventories/lab/hosts.yml.  Usage: tools/lab.sh up|down|status
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/tools/containers.conf}
NET=gpucluster-lab
SUBNET=10.89.50.0/24
IMAGE=${LAB_IMAGE:-localhost/gpucluster-node:bookworm}
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
    mkdir -p ".tmp/apt-archives/$name/partial"
    podman run -d --name "$name" --hostname "$name" --network "$NET" --ip "$ip" \
      --privileged --systemd always --label gpucluster.lab=1 \
      -v "$PWD/.tmp/apt-archives/$name:/var/cache/apt/archives" \
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
