#!/usr/bin/env bash
# Builds the node images for the lab and Molecule without any registry:
#   localhost/gpucluster-base:<release>  debootstrap minbase, imported
#   localhost/gpucluster-node:<release>  + systemd and python3 (tools/Containerfile.node)
# Releases: bookworm (Debian 12, Slurm 22.05) and trixie (Debian 13, Slurm 24.11).
# A node image is rebuilt only when its Containerfile changes (label gpucluster.recipe).
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/tools/containers.conf}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
RELEASES=${RELEASES:-bookworm trixie}
# shellcheck source=tools/podman-check.sh
source tools/podman-check.sh
podman_check build-images || exit 1
command -v debootstrap >/dev/null || { echo "build-images: debootstrap is not installed: run 'make setup' as root" >&2; exit 1; }
recipe=$(sha256sum tools/Containerfile.node | cut -c1-16)

for rel in $RELEASES; do
  base=localhost/gpucluster-base:$rel node=localhost/gpucluster-node:$rel
  if ! podman image exists "$base"; then
    echo "== debootstrap $rel (about 30 s)"
    root=$(mktemp -d /var/tmp/gpucluster-rootfs.XXXXXX)
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase "$rel" "$root" "$MIRROR" > "$root.log" 2>&1 \
      || { tail -20 "$root.log" >&2; echo "build-images: debootstrap $rel failed (log: $root.log)" >&2; exit 1; }
    tar -C "$root" -c . | podman import --change 'CMD ["/bin/bash"]' - "$base" >/dev/null
    rm -rf "$root" "$root.log"; trap - EXIT
  fi
  have=$(podman image inspect --format '{{ index .Labels "gpucluster.recipe" }}' "$node" 2>/dev/null || true)
  if [[ "$have" != "$recipe" ]]; then
    echo "== building $node"
    podman build -q --build-arg RELEASE="$rel" --label gpucluster.recipe="$recipe" \
      -t "$node" -f tools/Containerfile.node tools >/dev/null
  else
    echo "== $node is up to date"
  fi
done
