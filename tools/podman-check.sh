#!/usr/bin/env bash
# What the lab and the test suite rely on from podman, each failure said in one line with the fix.
#   sourced (tools/build-images.sh, tools/lab.sh): podman_check WHO   podman can run containers
#   run:  tools/podman-check.sh                                       all checks, including that two
#         containers on a test network reach each other by name (Molecule's test-double repository
#         hosts such as cuda-repo are reached by name; on podman 4.3 with CNI that needs the
#         dnsname plugin, package golang-github-containernetworking-plugin-dnsname)
podman_check() {
  local who=$1 err
  if ! command -v podman >/dev/null 2>&1; then
    echo "$who: podman is not installed: run 'make setup' as root (Debian 12) first" >&2; return 1
  fi
  if ! err=$(podman info 2>&1 >/dev/null); then
    err=$(printf '%s\n' "$err" | grep -m1 -iE 'error|denied|cannot|not permitted' || printf '%s\n' "$err" | head -n1)
    echo "$who: podman cannot run containers here: ${err:-podman info failed}" >&2; return 1
  fi
}

# Two containers on a fresh network: the second must resolve the first by its name.
podman_dns_check() {
  local who=$1 image=${2:-localhost/gpucluster-base:bookworm} net=gpucluster-dnscheck-$$ out rc
  podman image exists "$image" || { echo "$who: image $image is missing: run 'make setup' (tools/build-images.sh)" >&2; return 1; }
  podman network create "$net" >/dev/null 2>&1 || { echo "$who: podman cannot create a network: run 'make setup' as root (containernetworking-plugins)" >&2; return 1; }
  podman run -d --rm --name "$net-a" --network "$net" "$image" sleep 30 >/dev/null 2>&1
  out=$(podman run --rm --name "$net-b" --network "$net" "$image" getent hosts "$net-a" 2>&1); rc=$?
  podman rm -f -t 0 "$net-a" >/dev/null 2>&1
  podman network rm -f "$net" >/dev/null 2>&1
  if ((rc != 0)) || [[ -z $out ]]; then
    echo "$who: containers on a podman network cannot resolve each other's names (the test-double repository hosts are reached by name): install the CNI dnsname plugin with 'make setup' (Debian package golang-github-containernetworking-plugin-dnsname)" >&2
    return 1
  fi
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -uo pipefail
  cd "$(dirname "$0")/.." || exit 1
  export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/tools/containers.conf}
  podman_check podman-check || exit 1
  podman_dns_check podman-check || exit 1
  echo "podman-check: podman runs containers, and containers on a network resolve each other by name"
fi
