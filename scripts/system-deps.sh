#!/usr/bin/env bash
# System packages the project needs at run or test time (Debian). Idempotent:
# `want PKG` records a package; whatever is missing is installed once, at exit,
# so components append their `want` lines below and nothing else.
set -euo pipefail
need=()
want() { dpkg -s "$1" >/dev/null 2>&1 || need+=("$1"); }
install_missing() {
  status=$?
  [ "$status" -eq 0 ] || exit "$status"
  [ "${#need[@]}" -eq 0 ] && exit 0
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "system-deps: installing ${need[*]}"
  $sudo apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
}
trap install_missing EXIT
want openssh-client
want git
want chromium  # browser tests: memory REST preflight, lxc web UI (playwright, executable_path=/usr/bin/chromium)
want haproxy   # mitigation nodes: the data plane of every node (the system service stays off)
want wrk       # bench/mitigation.py: clean-traffic load generator
