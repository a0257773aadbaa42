#!/usr/bin/env bash
# Prints one line saying what is missing and exits 1 when podman cannot run containers here.
# Sourced checks for tools/build-images.sh and tools/lab.sh.
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
