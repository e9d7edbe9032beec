"""Render a node's HAProxy configuration and map files (the data plane's whole policy).

Runtime state lives in map files so the runtime API can change it without a reload:
  allow.map       source IP/CIDR → 1: checked first; an allowed source skips every other check
  blacklist.map   source IP/CIDR → expiry (Unix seconds); HAProxy compares with `date`
  geo.map         CIDR → country code (geo_block policy; prefixes from the ASN API)
  waf_<kind>.map  regex → rule id; kinds: block, log and one score map per severity
Per-source counters live in the frontend's stick table:
  gpt0 = flagged as a flood, gpc0 = WAF blocks, gpc1 = flood/rate-limit/SYN denials.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from actors.mitigation.settings import NodeSettings
from actors.mitigation.waf_rules import SEVERITY_SCORES
from rayfleet.crs.config import CLIENT_HEADER

WAF_MAPS = ("block", "log", *SEVERITY_SCORES)
FRONTEND = "mitigation"
BACKEND = "origin"
DIRECT_BACKEND = "origin_direct"  # crs: allowlisted sources skip the inspection tier
# Fields of a log line, `|`-separated (see `log_format`).
LOG_FIELDS = ("src", "status", "reason", "block", "log", *SEVERITY_SCORES, "score", "time_ms", "term")


@dataclass(frozen=True)
class NodePaths:
    """Files of one HAProxy instance (socket paths stay short: under a /tmp folder)."""

    root: Path

    @property
    def config(self) -> Path:
        return self.root / "haproxy.cfg"

    @property
    def admin_socket(self) -> Path:
        return self.root / "admin.sock"

    @property
    def master_socket(self) -> Path:
        return self.root / "master.sock"

    @property
    def certificate(self) -> Path:
        """The TLS listener's certificate and key in one PEM (0600), as `crt` and `set ssl cert` name it."""
        return self.root / "node.pem"

    @property
    def blacklist(self) -> Path:
        return self.root / "blacklist.map"

    @property
    def allow(self) -> Path:
        return self.root / "allow.map"

    @property
    def geo(self) -> Path:
        return self.root / "geo.map"

    def waf(self, kind: str) -> Path:
        return self.root / f"waf_{kind}.map"

    def all_maps(self) -> list[Path]:
        return [self.allow, self.blacklist, self.geo, *(self.waf(k) for k in WAF_MAPS)]


def log_format() -> str:
    waf_vars = "|".join(f"%[var(txn.w_{k})]" for k in WAF_MAPS)
    return f"%ci|%ST|%[var(txn.reason)]|{waf_vars}|%[var(txn.score)]|%Ta|%tsc"


def _global(settings: NodeSettings, paths: NodePaths, log_port: int) -> list[str]:
    return [
        "global",
        f"  stats socket {paths.admin_socket} mode 600 level admin",
        f"  maxconn {settings.maxconn}",
        f"  log 127.0.0.1:{log_port} len 4096 format rfc3164 local0 info",
        "  hard-stop-after 10s",
        "",
        "defaults",
        f"  mode {'http' if settings.mode == 'l7' else 'tcp'}",
        "  log global",
        "  option dontlognull",
        f"  maxconn {settings.maxconn}",
        "  timeout connect 2s",
        "  timeout client 30s",
        "  timeout server 30s",
        f"  timeout http-request {int(settings.http_request_timeout_s * 1000)}ms",
        "  timeout http-keep-alive 10s",
        "",
    ]


def _tcp_rule(settings: NodeSettings) -> str:
    """`tcp-request connection` rules see the socket peer; with `accept_proxy` the source is the
    PROXY header's, which `tcp-request session` rules see."""
    return "tcp-request session" if settings.accept_proxy else "tcp-request connection"


def _trusted(settings: NodeSettings) -> str:
    """The ACL of the trusted proxies (`trusted_proxies` inline)."""
    return "{ src " + " ".join(settings.trusted_proxies) + " }"


def _source_checks(settings: NodeSettings, paths: NodePaths) -> list[str]:
    """Connection-level checks shared by both modes: blacklist, geo block, per-source connections.

    With `accept_proxy` they run as `tcp-request session` rules: `tcp-request connection` rules
    see the load balancer's address, session rules the one in the PROXY header. A trusted
    proxy's connection is not tracked here: its requests are, under the client's address."""
    rule = _tcp_rule(settings)
    store = "conn_rate(1s),conn_cur,gpt0,gpc0,gpc1"
    if settings.mode == "l7":
        store = "http_req_rate(1s),http_err_rate(10s)," + store
    track = f"  {rule} track-sc0 src" + (f" if !{_trusted(settings)}" if settings.trusted_proxies else "")
    lines = [
        # ipv6 holds both families: an IPv4 source is stored as ::ffff:a.b.c.d
        f"  stick-table type ipv6 size 200k expire {settings.ban_seconds}s store {store}",
        # the allowlist first: an allowed source is neither tracked nor checked
        f"  {rule} accept if {{ src,map_ip({paths.allow}) -m found }}",
        track,
        f"  {rule} set-var(sess.now) date",
        f"  {rule} set-var(sess.bl) src,map_ip({paths.blacklist},0)",
        f"  {rule} reject if {{ var(sess.bl),sub(sess.now) -m int gt 0 }}",
        f"  {rule} reject if {{ src,map_ip({paths.geo}) -m found }}",
        f"  {rule} reject if {{ sc_conn_cur(0) gt {settings.max_conn_per_source} }}",
    ]
    if settings.mode == "l7":  # a source flagged as an HTTP flood is refused at connection time until it expires
        lines += [
            f"  {rule} sc-inc-gpc1(0) if {{ sc_get_gpt0(0) gt 0 }}",
            f"  {rule} reject if {{ sc_get_gpt0(0) gt 0 }}",
        ]
    return lines


def _client_from_proxy(settings: NodeSettings, paths: NodePaths) -> list[str]:
    """Behind a trusted proxy the client is the last X-Forwarded-For hop (the one the proxy added):
    it becomes the source, is tracked, and gets the checks a direct client gets at connection time."""
    if not settings.trusted_proxies:
        return []
    xff = "hdr_ip(X-Forwarded-For,-1)"
    return [
        f"  http-request set-src {xff} if {_trusted(settings)} {{ {xff} -m found }}",
        f"  http-request deny deny_status 403 if {{ src,map_ip({paths.geo}) -m found }}",
    ]


def _l7_rules(settings: NodeSettings, paths: NodePaths) -> list[str]:
    allowed = f"{{ src,map_ip({paths.allow}) -m found }}"
    lines = _client_from_proxy(settings, paths)
    lines += [
        f"  http-request set-log-level silent if {allowed}",
        f"  http-request allow if {allowed}",
    ]
    if settings.trusted_proxies:  # a direct client is tracked already: this tracks the proxied ones
        lines.append("  http-request track-sc0 src")
    lines += [
        # a source blacklisted while its keep-alive connection is open
        "  http-request set-var(txn.now) date",
        f"  http-request set-var(txn.bl) src,map_ip({paths.blacklist},0)",
        "  http-request set-log-level silent if { var(txn.bl),sub(txn.now) -m int gt 0 }",
        "  http-request deny deny_status 403 if { var(txn.bl),sub(txn.now) -m int gt 0 }",
        f"  http-request sc-set-gpt0(0) 1 if {{ sc_http_req_rate(0) gt {settings.flood_rps} }}",
        "  http-request set-var(txn.reason) str(http_flood) if { sc_get_gpt0(0) gt 0 }",
    ]
    if settings.rate_limit_rps is not None:
        lines.append(
            f"  http-request set-var(txn.reason) str(rate_limited) if !{{ var(txn.reason) -m found }} "
            f"{{ sc_http_req_rate(0) gt {settings.rate_limit_rps} }}"
        )
    lines += [
        "  http-request sc-inc-gpc1(0) if { var(txn.reason) -m found }",
        "  http-request set-log-level silent if { var(txn.reason) -m found } { rand(100) ge 1 }",
        "  http-request deny deny_status 429 if { var(txn.reason) -m found }",
        # WAF: one normalised target, one map_reg lookup per rule kind
        "  http-request set-var(txn.h) req.hdrs,url_dec,lower",
        '  http-request set-var(txn.t) url,url_dec(1),url_dec(1),lower,concat(" ",txn.h,)',
    ]
    lines += [f"  http-request set-var(txn.w_{k}) var(txn.t),map_reg({paths.waf(k)})" for k in WAF_MAPS]
    lines.append("  http-request set-var(txn.score) int(0)")
    lines += [
        f"  http-request set-var(txn.score) var(txn.score),add({score}) if {{ var(txn.w_{sev}) -m found }}"
        for sev, score in SEVERITY_SCORES.items()
    ]
    lines += [
        "  http-request set-var(txn.reason) str(waf) if { var(txn.w_block) -m found } || "
        f"{{ var(txn.score) -m int ge {settings.anomaly_threshold} }}",
        "  http-request set-log-level silent if !{ var(txn.reason) -m found } !{ var(txn.w_log) -m found } "
        f"{{ var(txn.score) -m int eq 0 }} {{ rand(100) ge {settings.log_sample_percent} }}",
        "  http-request sc-inc-gpc0(0) if { var(txn.reason) -m str waf }",
        '  http-request deny deny_status 403 content-type text/plain string "Request blocked by the WAF" '
        "if { var(txn.reason) -m str waf }",
    ]
    if settings.crs:
        lines.append(f"  use_backend {DIRECT_BACKEND} if {allowed}")
    lines.append(f"  default_backend {BACKEND}")
    return lines


def _syn_rules(settings: NodeSettings) -> list[str]:
    rate, rule = settings.syn_conn_rate, _tcp_rule(settings)
    return [
        f"  {rule} sc-set-gpt0(0) 1 if {{ sc_conn_rate(0) gt {rate} }}",
        f"  {rule} sc-inc-gpc1(0) if {{ sc_conn_rate(0) gt {rate} }}",
        f"  {rule} reject if {{ sc_conn_rate(0) gt {rate} }}",
        f"  default_backend {BACKEND}",
    ]


def _bind_options(settings: NodeSettings, paths: NodePaths) -> str:
    """What follows the address on each `bind`: PROXY protocol, then TLS (the key is in the PEM file,
    never in this text)."""
    options = " accept-proxy" if settings.accept_proxy else ""
    tls = settings.tls
    if tls is not None:
        options += f" ssl crt {paths.certificate} ssl-min-ver {tls.min_version}"
        protocols = tls.protocols(settings.mode)
        if protocols:
            options += f" alpn {','.join(protocols)}"
    return options


def _server_options(settings: NodeSettings) -> str:
    """HTTPS to the origin: `verify required` against `ca_file` (or the system's CAs) and the SNI name."""
    origin = settings.origin_tls
    if origin is None:
        return ""
    if not origin.verify:
        return " ssl verify none"
    options = f" ssl verify required ca-file {origin.ca_file or '@system-ca'}"
    if origin.sni:
        options += f" sni str({origin.sni})"
    return options


def render(settings: NodeSettings, paths: NodePaths, port: int, log_port: int, waf_port: int = 0) -> str:
    """The complete haproxy.cfg of a node listening on `port`, logging to UDP `log_port`; with the
    crs engine its backend is the inspection tier on `waf_port`."""
    lines = _global(settings, paths, log_port)
    options = _bind_options(settings, paths)
    lines.append(f"frontend {FRONTEND}")
    lines += [
        f"  bind {host_port(h, port)} backlog 4096{options}" for h in [settings.listen_host, *settings.also_listen]
    ]
    if settings.mode == "l7":
        lines.append(f'  log-format "{log_format()}"')
    else:
        lines.append(f'  log-format "%ci|-|-|{"|".join("-" for _ in WAF_MAPS)}|-|%Tt|%ts"')
    lines += _source_checks(settings, paths)
    lines += _l7_rules(settings, paths) if settings.mode == "l7" else _syn_rules(settings)
    lines += ["", f"backend {BACKEND}"]
    if settings.mode == "l7":
        lines += ["  option forwardfor", "  http-reuse safe"]
    if settings.crs and waf_port:
        lines += _inspection_backend(settings, waf_port)
    else:
        lines += [f"  server origin {settings.origin} maxconn {settings.maxconn}{_server_options(settings)}", ""]
    return "\n".join(lines)


def _inspection_backend(settings: NodeSettings, waf_port: int) -> list[str]:
    """crs: requests go to the nginx + ModSecurity tier on loopback, with the client's address in a
    header nginx believes from loopback only (any copy the client sent is replaced). While the tier
    is down they get 503, or with `fail_open` go to the origin uninspected."""
    check = " check inter 1s fall 1 rise 1" if settings.waf.fail_open else ""
    lines = [
        f"  http-request set-header {CLIENT_HEADER} %[src]",
        f"  server waf 127.0.0.1:{waf_port} maxconn {settings.maxconn}{check}",
    ]
    if settings.waf.fail_open:
        lines.append(
            f"  server uninspected {settings.origin} maxconn {settings.maxconn}{_server_options(settings)} backup"
        )
    return [
        *lines,
        "",
        f"backend {DIRECT_BACKEND}",
        "  option forwardfor",
        "  http-reuse safe",
        f"  server origin {settings.origin} maxconn {settings.maxconn}{_server_options(settings)}",
        "",
    ]


def host_port(host: str, port: int) -> str:
    """`host:port`, with an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def table_key(address: str) -> str:
    """The stick-table key of a source address: IPv4 as the mapped IPv6 the table stores."""
    return address if ":" in address else f"::ffff:{address}"


def source_of(key: str) -> str:
    """The source address of a stick-table key (a mapped IPv4 shown as plain IPv4)."""
    return key.removeprefix("::ffff:") if key.startswith("::ffff:") and "." in key else key


def map_line(key: str, value: str) -> str:
    return f"{key} {value}"
