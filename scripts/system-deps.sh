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
  # proxies and resolvers are started by the components on loopback ports: keep the packages'
  # own services (squid on 3128, dnsmasq on 53, haproxy) from starting during the install
  policy=/usr/sbin/policy-rc.d
  added_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 755 "$policy" && added_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" || status=$?
  [ -z "$added_policy" ] || $sudo rm -f "$policy"
  [ "$status" -eq 0 ] || exit "$status"
}
trap install_missing EXIT
want openssh-client
want git
want chromium  # browser tests: memory REST preflight, lxc web UI (playwright, executable_path=/usr/bin/chromium)
want squid-openssl  # webfilter data plane, OpenSSL build (ssl_bump, security_file_certgen); replaces Debian's
                    # GnuTLS `squid` (same /usr/sbin/squid); started on loopback by the component, service stays off
want dnsmasq  # webfilter DNS sinkhole (no upstream; loopback only)
want nftables  # webfilter per-group DNS: steers a client group's queries to its own dnsmasq (nft table of its own)
want haproxy   # mitigation nodes: the data plane of every node (the system service stays off)
want wrk       # bench/mitigation.py: clean-traffic load generator
want bubblewrap  # tasknet: upgrade packages' tests run under bwrap (no network, read-only /usr, tmpfs workspace)
want c-icap    # bench/webfilter.py: the ICAP REQMOD hop (echo service) measured against the url_regex WAF; bench only, the system service stays off
want nginx-light  # mitigation: the CRS inspection tier's nginx (started by the node on loopback; the system service stays off)
want libnginx-mod-http-modsecurity  # mitigation: ModSecurity v3 (libmodsecurity3) in that nginx
want modsecurity-crs  # mitigation: the OWASP Core Rule Set the tier runs
want unbound  # webfilter: the DNS-over-TLS forwarder dnsmasq forwards to for `tls://` dns_upstreams (started on loopback by the
              # proxy actor, certificate verification always on); the tests' DoT server too. The system service stays off
