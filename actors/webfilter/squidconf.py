"""Rendering of Squid's configuration and ACL files from the effective policy (pure functions).

Order of `http_access` (first match wins), each deny tagged with the rule that logs it:
manager (loopback only) -> clients outside `allowed_networks` -> blocked sources ->
WAF categories -> direct-IP requests -> egress default-deny -> whitelists (allow) ->
domain blacklist (`dstdomain`, subdomains included) -> IP blacklist (`dst`) -> allow.

With `ssl_bump` the listener decrypts HTTPS (`peek` at step 1 to read the SNI, then `bump`), so the
same rules see every request inside a CONNECT as a full `https://` URL; without it a CONNECT is
decided on its `host:port` and then tunnelled.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from actors.webfilter import crsrules, dotforward, grouprules, hostregex, waf
from actors.webfilter.domainindex import DomainMemo, normal
from rayfleet.crs.config import CLIENT_HEADER, PROSE_EXCLUSIONS

CERT_DB_SIZE = "16MB"  # security_file_certgen database (created with -c, then used by sslcrtd_program)
REGEX_ACL = "dstdom_regex -n -i"  # -n: an address is matched as written, never looked up in reverse DNS
LOG_FORMAT = "%ts.%03tu %>a %rm %>Hs %Ss %>st %<st %tr %{rule}note %ru %{User-Agent}>h"

REASONS: dict[str, str] = {
    "client_not_allowed": "your address is outside the networks allowed to use this proxy",
    "source_blocked": "your address is on the blocked-sources list",
    "direct_ip": "requests to bare IP addresses are blocked",
    "egress_default_deny": "egress is default-deny and this destination is not on the egress allowlist",
    "domain_blacklist": "the domain (or a parent domain) is on the domain blacklist, or matches one of its patterns",
    "ip_blacklist": "the destination address is on the IP blacklist",
    "waf:CRS": "the OWASP Core Rule Set refused the request (a protocol violation, a scanner, or an attack "
    "outside the WAF categories)",
}
CRS_PEER = "waf_crs"


@dataclass
class Policy:
    """Everything Squid enforces; built from the database by `store.effective_policy`."""

    domain_blacklist: list[str] = field(default_factory=list)
    ip_blacklist: list[str] = field(default_factory=list)
    domain_whitelist: list[str] = field(default_factory=list)
    ip_whitelist: list[str] = field(default_factory=list)
    egress_domains: list[str] = field(default_factory=list)
    egress_ips: list[str] = field(default_factory=list)
    blocked_sources: list[str] = field(default_factory=list)
    allowed_networks: list[str] = field(default_factory=lambda: ["127.0.0.0/8", "::1"])
    enable_domain_blacklist: bool = True
    enable_ip_blacklist: bool = True
    block_direct_ip: bool = False
    egress_default_deny: bool = False
    enable_waf: bool = True
    waf_categories: list[str] = field(default_factory=list)
    waf_engine: str = "url_regex"  # or "crs": plain-HTTP requests go through the CRS tier (`crstier`)
    waf_paranoia_level: int = 2
    waf_anomaly_threshold: int = 5
    waf_exclusions: list[int] = field(default_factory=lambda: list(PROSE_EXCLUSIONS))  # CRS rule ids removed
    ssl_bump: bool = False
    proxy_listen: list[str] = field(default_factory=list)  # "addr:port" Squid also listens on (LAN clients)
    dns_listen: list[str] = field(default_factory=list)  # addresses dnsmasq also answers clients on (port 53)
    dns_upstreams: list[str] = field(default_factory=list)  # "addr", "addr#port", or "tls://addr:port#name"
    dns_upstream_ca_file: str = ""  # the CA bundle tls:// upstreams are verified with ("": the system store)
    dns_block_mode: str = "sinkhole"  # a blocked name answers 0.0.0.0 and :: ("sinkhole") or NXDOMAIN
    groups: list[grouprules.GroupPolicy] = field(default_factory=list)  # client groups, in the order they apply
    tls_splice: list[str] = field(default_factory=list)  # domain rules passed through unbumped (list + categories)


@dataclass(frozen=True)
class TlsFiles:
    """Squid's TLS files: the interception CA (a copy Squid's user can read), the certificate generator
    and its database (used when bumping), and an optional extra CA file to verify origins with."""

    ca_cert: Path
    ca_key: Path
    certgen: str
    cert_db: Path
    outgoing_cafile: str = ""


def dstdomain_entries(domains: list[str]) -> list[str]:
    """`.example.com` lines (domain and subdomains), a listed subdomain of a listed parent dropped
    (Squid rejects overlapping dstdomain entries). Sorted by the reversed name plus a final dot: a
    parent comes right before its subdomains (only `-` sorts below `.` among the characters of a
    host name, and it cannot follow the final dot), and reversing a string is far cheaper than
    splitting it into labels (100 000 names in a fraction of the time)."""
    out: list[str] = []
    for name in sorted({normal(d) for d in domains} - {""}, key=lambda d: d[::-1] + "."):
        if out and name.endswith("." + out[-1]):
            continue
        out.append(name)
    return ["." + d for d in out]


# the indexes of the domain lists of the last renders: a list edit costs the rules it changed (domainindex)
_LISTS = DomainMemo()


def plain_names(rules: list[str]) -> list[str]:
    """A domain list's plain names (its `*.` and `/regex/` rules left out), as `dstdomain_entries` keeps
    them, without the leading dot."""
    return list(_LISTS.index(rules).kept_names)


def pattern_rules(rules: list[str]) -> set[str]:
    """A domain list's `*.name` and `/regex/` rules (from its index, which a render of the list uses too)."""
    return _LISTS.index(rules).pattern_rules


def domain_names(rules: list[str]) -> list[str]:
    """The dstdomain lines of a domain list's plain names (its `*.` and `/regex/` rules left out)."""
    return ["." + name for name in _LISTS.index(rules).kept_names]


def host_patterns(rules: list[str]) -> list[str]:
    """The dstdom_regex lines of a domain list's `*.name` rules (any subdomain of name) and `/regex/` rules."""
    patterns = _LISTS.index(rules).pattern_rules
    return sorted({hostregex.from_wildcard(r) if r.startswith("*.") else r[1:-1] for r in patterns})


def _lines(prefix: str, items: list[str], suffix: str = "") -> str:
    """`prefix + item + suffix` a line, each line ended by a newline (one join: 200 000 lines in a few ms)."""
    return prefix + (suffix + "\n" + prefix).join(items) + suffix + "\n" if items else ""


def error_page(rule: str) -> str:
    kind, _, name = rule.partition(":")
    if kind == "group":
        reason = grouprules.reason(name)
    else:
        reason = REASONS.get(rule) or f"the request matched the WAF category {name}"
    return (
        "<html><head><title>Blocked by policy</title></head><body>"
        "<h1>Blocked by the web filter</h1>"
        f"<p>Rule: <b>{rule}</b></p><p>Why: {reason}.</p>"
        "<p>URL: %U</p><p>Client: %i</p><p>Time: %T</p></body></html>\n"
    )


def page_name(rule: str) -> str:
    return "ERR_RF_" + rule.upper().replace(":", "_")


def _unique(entries: list[str]) -> list[str]:
    return sorted(set(entries))


AclSource = tuple[Callable[[list[str]], str], list[str]]


def _text(make: Callable[[list[str]], list[str]]) -> Callable[[list[str]], str]:
    """An ACL file's text from a function giving its lines."""
    return lambda entries: _lines("", make(entries))


def domain_text(rules: list[str]) -> str:
    """The `dstdomain` ACL file of a domain list (`domain_names`, one a line)."""
    return _lines(".", _LISTS.index(rules).kept_names)


def acl_sources(policy: Policy) -> dict[str, AclSource]:
    """ACL file name -> (how its text is made, from which entries): a renderer can skip a file whose
    entries did not change."""
    patterns, unique = _text(host_patterns), _text(_unique)
    files: dict[str, AclSource] = {
        "domain_blacklist.txt": (domain_text, policy.domain_blacklist),
        "domain_blacklist_patterns.txt": (patterns, policy.domain_blacklist),
        "ip_blacklist.txt": (unique, policy.ip_blacklist),
        "domain_whitelist.txt": (domain_text, policy.domain_whitelist),
        "domain_whitelist_patterns.txt": (patterns, policy.domain_whitelist),
        "ip_whitelist.txt": (unique, policy.ip_whitelist),
        "egress_domains.txt": (_text(dstdomain_entries), policy.egress_domains),
        "egress_ips.txt": (unique, policy.egress_ips),
        "blocked_sources.txt": (unique, policy.blocked_sources),
        "allowed_networks.txt": (unique, policy.allowed_networks),
        "tls_splice.txt": (domain_text, policy.tls_splice),
        "tls_splice_patterns.txt": (patterns, policy.tls_splice),
    }
    for cat, lines in waf.CATEGORIES.items():
        files[f"{waf.acl_name(cat)}.txt"] = (_text(list), list(lines))
    for group in policy.groups:
        for stem, entries in grouprules.acl_entries(group).items():
            if stem.endswith("_src"):
                files[f"{stem}.txt"] = (unique, entries)
            else:
                files[f"{stem}.txt"] = (domain_text, entries)
                files[f"{stem}_patterns.txt"] = (patterns, entries)
    return files


def render_acl(source: AclSource) -> str:
    make, entries = source
    return make(entries)


def acl_files(policy: Policy) -> dict[str, str]:
    """ACL file name -> content (one entry a line)."""
    return {name: render_acl(source) for name, source in acl_sources(policy).items()}


def _deny(lines: list[str], acls: str, rule: str) -> None:
    mark = "mark_" + rule.replace(":", "_").lower()
    lines.append(f"acl {mark} annotate_transaction rule={rule}")
    lines.append(f"deny_info {page_name(rule)} {mark}")
    lines.append(f"http_access deny {acls} {mark}".replace("  ", " "))


def crs_on(policy: Policy) -> bool:
    return policy.enable_waf and policy.waf_engine == "crs"


def crs_lines(policy: Policy, crs_port: int) -> list[str]:
    """With the CRS engine, every plain-HTTP request (`proto HTTP`: not a CONNECT, not a bumped HTTPS
    request) goes to the CRS tier as a parent and never direct: with the tier down it is refused
    (503), never sent uninspected. Squid hands the tier the client's address (its own copy of the
    header removed first); a refusal of the tier has its category's status (`crsrules.STATUSES`), and
    Squid answers it with the category's error page, logged as that `waf:` rule."""
    if not crs_on(policy):
        return []
    lines = ["acl crs_inspected proto HTTP"]
    if crs_port:
        lines += [
            f"cache_peer 127.0.0.1 parent {crs_port} 0 no-query no-digest no-netdb-exchange "
            f"connect-timeout=2 connect-fail-limit=2 name={CRS_PEER}",
            f"cache_peer_access {CRS_PEER} allow crs_inspected",
            f"cache_peer_access {CRS_PEER} deny all",
        ]
    lines += [
        "never_direct allow crs_inspected",
        f"request_header_access {CLIENT_HEADER} deny all",
        f'request_header_add {CLIENT_HEADER} "%>a" crs_inspected',
    ]
    for name in (*policy.waf_categories, crsrules.GENERIC):
        acl = "crs_refused_" + name.lower()
        lines.append(f"acl {acl} http_status {crsrules.STATUSES[name]}")
        mark = "crs_mark_" + name.lower()
        lines.append(f"acl {mark} annotate_transaction rule={waf.rule_name(name)}")
        lines.append(f"deny_info {page_name(waf.rule_name(name))} {mark}")
        lines.append(f"http_reply_access deny {acl} {mark}")
    return lines


def access_rules(policy: Policy, acl_dir: Path) -> list[str]:
    """The ACL definitions and http_access lines; empty lists define no ACL (Squid warns on empty files)."""
    lines = ["http_access allow localhost manager", "http_access deny manager"]

    def acl(name: str, kind: str, file: str, entries: list[str]) -> bool:
        if not entries:
            return False
        lines.append(f'acl {name} {kind} "{acl_dir / file}"')
        return True

    if acl("allowed_clients", "src", "allowed_networks.txt", policy.allowed_networks):
        _deny(lines, "!allowed_clients", "client_not_allowed")
    else:
        _deny(lines, "", "client_not_allowed")
    if acl("blocked_sources", "src", "blocked_sources.txt", policy.blocked_sources):
        _deny(lines, "blocked_sources", "source_blocked")
    lines.append("http_access deny CONNECT !SSL_ports")
    if policy.enable_waf:
        # with CRS, the URL rules still stand for what the tier never sees (bumped HTTPS requests)
        uninspected = " !crs_inspected" if crs_on(policy) else ""
        for cat in policy.waf_categories:
            name = waf.acl_name(cat)
            lines.append(f'acl {name} url_regex -i "{acl_dir / (name + ".txt")}"')
            _deny(lines, name + uninspected, waf.rule_name(cat))
    if policy.block_direct_ip:
        lines.append(r"acl direct_ip url_regex -i ^[a-z]+://\[?[0-9a-f.:]+\]?(:[0-9]+)?(/|$)")
        lines.append(r"acl direct_ip_connect dstdom_regex ^\[?[0-9a-f.:]+\]?$")
        _deny(lines, "direct_ip", "direct_ip")
        _deny(lines, "CONNECT direct_ip_connect", "direct_ip")
    if policy.egress_default_deny:
        has_ip = acl("egress_ips", "dst", "egress_ips.txt", policy.egress_ips)
        has_dom = acl("egress_domains", "dstdomain", "egress_domains.txt", policy.egress_domains)
        allowed = ("!egress_ips " if has_ip else "") + ("!egress_domains" if has_dom else "")
        _deny(lines, allowed.strip(), "egress_default_deny")

    def domain_acl(stem: str, rules: list[str]) -> str | None:
        return _domain_acl(lines, acl, stem, rules)

    grouprules.access_lines(policy.groups, lines, acl, domain_acl, _deny)
    if acl("domain_whitelist", "dstdomain", "domain_whitelist.txt", plain_names(policy.domain_whitelist)):
        lines.append("http_access allow domain_whitelist")
    white_patterns = host_patterns(policy.domain_whitelist)
    if acl("domain_whitelist_patterns", REGEX_ACL, "domain_whitelist_patterns.txt", white_patterns):
        lines.append("http_access allow domain_whitelist_patterns")
    if acl("ip_whitelist", "dst", "ip_whitelist.txt", policy.ip_whitelist):
        lines.append("http_access allow ip_whitelist")
    if policy.enable_domain_blacklist:
        _deny_domains(lines, acl, policy.domain_blacklist)
    if policy.enable_ip_blacklist and acl("ip_blacklist", "dst", "ip_blacklist.txt", policy.ip_blacklist):
        _deny(lines, "ip_blacklist", "ip_blacklist")
    lines.append("http_access allow all")
    return lines


def _deny_domains(lines: list[str], acl: Callable[[str, str, str, list[str]], bool], rules: list[str]) -> None:
    """Rule 7: the plain names (dstdomain) and the patterns (dstdom_regex), one deny tagged `domain_blacklist`."""
    blocked = _domain_acl(lines, acl, "domain_blacklist", rules, either="domain_blocked")
    if blocked:
        _deny(lines, blocked, "domain_blacklist")


def _domain_acl(
    lines: list[str], acl: Callable[[str, str, str, list[str]], bool], stem: str, rules: list[str], either: str = ""
) -> str | None:
    """The ACLs of a domain list, `<stem>` (dstdomain, its plain names) and `<stem>_patterns` (dstdom_regex,
    its `*.` and regex rules), and the name of the ACL matching either (an `any-of`, named `either` or
    `<stem>_any`, when both are defined); None for an empty list."""
    defined = [
        name
        for name, kind, entries in (
            (stem, "dstdomain", plain_names(rules)),
            (f"{stem}_patterns", REGEX_ACL, host_patterns(rules)),
        )
        if acl(name, kind, f"{name}.txt", entries)
    ]
    if len(defined) == 2:
        either = either or f"{stem}_any"
        lines.append(f"acl {either} any-of {' '.join(defined)}")
        return either
    return defined[0] if defined else None


def tls_lines(files: TlsFiles | None, policy: Policy, acl_dir: Path) -> list[str]:
    """Origins' certificates are always verified (Squid's default CAs, plus `outgoing_cafile`); a failed
    verification is an error page, never a silent pass. With `policy.ssl_bump`, `peek` at step 1 reads the
    client's SNI; a name on `policy.tls_splice` (`ssl::server_name`, a name covering its subdomains, or
    `ssl::server_name_regex` for `*.`/regex rules) is then spliced: tunnelled with the origin's own
    certificate, never decrypted; every other CONNECT is bumped."""
    if files is None:
        return []
    lines = [f"tls_outgoing_options cafile={files.outgoing_cafile}"] if files.outgoing_cafile else []
    if not policy.ssl_bump:
        return lines
    lines += [
        f"sslcrtd_program {files.certgen} -s {files.cert_db} -M {CERT_DB_SIZE}",
        "sslcrtd_children 8 startup=1 idle=1",
        "acl tls_step1 at_step SslBump1",
        "ssl_bump peek tls_step1",
    ]
    for name, kind, entries in (
        ("splice_sni", "ssl::server_name", plain_names(policy.tls_splice)),
        ("splice_sni_patterns", "ssl::server_name_regex -i", host_patterns(policy.tls_splice)),
    ):
        if entries:
            file = "tls_splice.txt" if name == "splice_sni" else "tls_splice_patterns.txt"
            lines += [f'acl {name} {kind} "{acl_dir / file}"', f"ssl_bump splice {name}"]
    return [*lines, "ssl_bump bump all"]


def squid_conf(
    policy: Policy,
    *,
    root: Path,
    port: int,
    dns: str,
    cache_mem_mb: int,
    user: str | None,
    tls: TlsFiles | None = None,
    log_rotate_keep: int = 3,
    crs_port: int = 0,
) -> str:
    """squid.conf; `tls` (required when `policy.ssl_bump`) holds the files an ssl-bump listener needs;
    `crs_port` is the CRS tier's (`crs_lines`)."""
    acl_dir = root / "acl"
    if policy.ssl_bump and tls is None:
        raise ValueError("policy.ssl_bump needs the interception CA and certificate generator")
    bump = ""
    if policy.ssl_bump and tls is not None:
        bump = (
            f" ssl-bump tls-cert={tls.ca_cert} tls-key={tls.ca_key}"
            " generate-host-certificates=on dynamic_cert_mem_cache_size=4MB"
        )
    # the loopback listener always (the API and the cache manager use it), then every `proxy_listen` address
    listeners = [f"http_port {address}{bump}" for address in [f"127.0.0.1:{port}", *policy.proxy_listen]]
    base = [
        *listeners,
        f"pid_filename {root / 'run' / 'squid.pid'}",
        f"cache_log {root / 'logs' / 'cache.log'}",
        "cache_store_log none",
        f"coredump_dir {root / 'run'}",
        f"dns_nameservers {dns}",
        "negative_dns_ttl 1 seconds",
        f"error_directory {root / 'errors'}",
        f"logformat rayfleet {LOG_FORMAT}",
        f"access_log stdio:{root / 'logs' / 'access.log'} logformat=rayfleet",
        f"logfile_rotate {log_rotate_keep}",  # on SIGUSR1 (`squid -k rotate`): access.log -> access.log.0 ...
        "acl SSL_ports port 443 8443",
        f"cache_mem {cache_mem_mb} MB",
        "shutdown_lifetime 1 seconds",
        "forwarded_for delete",
        "strip_query_terms off",
        "via off",
        "pinger_enable off",
        "visible_hostname rayfleet-webfilter",
    ]
    if user:
        base.append(f"cache_effective_user {user}")
    rules = [*tls_lines(tls, policy, acl_dir), *crs_lines(policy, crs_port), *access_rules(policy, acl_dir)]
    return "\n".join([*base, *rules]) + "\n"


def wildcard(listen: list[str]) -> str:
    """The first wildcard (`0.0.0.0`, `::`) in `listen`, or "" when it holds none. Our dnsmasqs then answer on every address of this
    node, of both families: dnsmasq's wildcard mode, which replies from the address a query was sent to
    (a socket bound to `0.0.0.0` in its `bind-interfaces` mode replies from whatever address the route
    picks, which a client that asked another address drops) and has no way to take every address of one
    family only."""
    return next((a for a in listen if ipaddress.ip_address(a).is_unspecified), "")


def dnsmasq_conf(
    policy: Policy,
    *,
    own: str,
    hosts: Path,
    pid_file: Path,
    as_root: bool,
    query_log: Path | None = None,
    port: int = 53,
    blocklist: Path | None = None,
    servers_file: Path | None = None,
    forwarder: str = "",
) -> str:
    """dnsmasq's configuration: its loopback address for Squid (`own`, empty for a group's view, which
    answers only steered clients) plus `dns_listen` on `port` (with a wildcard, every address of the node:
    `wildcard`), the hosts file (test names), the blocklist
    (`blocklist`, default `blocklist.conf` beside the hosts file), and `dns_upstreams` as `server=` lines;
    never /etc/resolv.conf (`no-resolv`), so with no upstream nothing leaves the machine. With `query_log`,
    every query and how it was answered is logged there (`log-queries=extra`: each line carries the
    query's serial number), for the log store to tail. `servers_file` (the main dnsmasq's only): the names
    blocked since its last start (`dns_delta_file`), read again on SIGHUP. `forwarder` (`127.0.0.1#<port>`):
    where the DNS-over-TLS forwarder listens, the only `server=` when the upstreams are `tls://`."""
    lines = [
        f"port={port}",
        *(
            ["interface=*"]  # every interface, its addresses as they come and go; `own` is one of lo's
            if wildcard(policy.dns_listen)
            else [*(f"listen-address={a}" for a in [*([own] if own else []), *policy.dns_listen]), "bind-interfaces"]
        ),
        "no-resolv",
        "no-hosts",
        "local-ttl=5",
        f"addn-hosts={hosts}",
        f"conf-file={blocklist or hosts.parent / 'blocklist.conf'}",
        f"pid-file={pid_file}",
        *(f"server={upstream}" for upstream in dotforward.dnsmasq_servers(policy.dns_upstreams, forwarder)),
        *([f"servers-file={servers_file}"] if servers_file is not None else []),
    ]
    if query_log is not None:
        lines += ["log-queries=extra", f"log-facility={query_log}"]
    if as_root:
        lines.append("user=root")
    return "\n".join(lines) + "\n"


# names blocked since dnsmasq's last start kept in its servers-file before it restarts on a new base: dnsmasq's
# load of `server=/name/` lines is quadratic (2 000 names: well under 0.1 s; 32 000: over a second, answering
# nothing meanwhile; see the README's "Measured: a blocklist edit without a restart")
DELTA_LIMIT = 2000

# what decides dnsmasq's files besides the blacklist: a change to any of them restarts dnsmasq on a new base
_DNS_FIELDS = (
    "dns_listen",
    "dns_upstreams",
    "dns_upstream_ca_file",
    "enable_domain_blacklist",
    "domain_whitelist",
    "dns_block_mode",
)


def blocked_rules(policy: Policy) -> set[str]:
    """The blacklist's rules as its index holds them (normalised), the set a base is compared by."""
    return set(_LISTS.index(policy.domain_blacklist).rule_set)


def dns_delta(base: Policy, base_rules: set[str], policy: Policy) -> list[str] | None:
    """The plain names `policy` blocks beyond `base` (the policy dnsmasq's blocklist was rendered from at its
    last start, whose rules are `base_rules`), when they can be added to a running dnsmasq (`dns_delta_file` and
    a SIGHUP); None when dnsmasq must restart on a new base: a rule removed from the base, a `*.`/regex rule
    added, any other DNS setting or the whitelist changed, more than DELTA_LIMIT names, or an added name over
    or under a whitelisted one (the base has no exemption for it, and a `server=` line of equal specificity
    does not undo a blocked one)."""
    if not policy.enable_domain_blacklist or any(getattr(policy, f) != getattr(base, f) for f in _DNS_FIELDS):
        return None
    rules = _LISTS.index(policy.domain_blacklist).rule_set
    if policy.domain_blacklist is base.domain_blacklist or rules == base_rules:
        return []
    if len(rules) - len(base_rules) > DELTA_LIMIT or not rules >= base_rules:
        return None
    added = rules - base_rules
    if len(added) > DELTA_LIMIT or any(r.startswith(("*.", "/")) for r in added):
        return None
    white = {normal(w).removeprefix("*.") for w in policy.domain_whitelist if not w.startswith("/")}
    if any(_under(name, white) for name in added) or any(_under(w, added) for w in white):
        return None
    return sorted(added, key=lambda d: d[::-1])


def dns_delta_file(names: list[str], policy: Policy, sinkhole: str) -> str:
    """dnsmasq's servers-file for the names blocked since its last start: each name and its subdomains
    forwarded to the sinkhole (`sinkhole`: `addr#port`, a dnsmasq answering every name 0.0.0.0 and ::), or,
    in NXDOMAIN mode, local-only (`server=/name/`: dnsmasq answers NXDOMAIN itself). The first line is
    `DELTA_MARK`'s."""
    target = "" if policy.dns_block_mode == "nxdomain" else sinkhole
    return f"server=/{DELTA_MARK}/\n" + _lines("server=/", names, f"/{target}")


# the servers-file's first line, so dnsmasq logs `using ...` once it read the file, even an empty delta with no
# upstream (the apply waits for that line); a reserved name (RFC 6761: `.invalid` answers NXDOMAIN anyway)
DELTA_MARK = "delta.rayfleet.invalid"


def sinkhole_conf(*, address: str, port: int, pid_file: Path, as_root: bool) -> str:
    """The sinkhole's configuration: every name answers 0.0.0.0 and ::, on loopback only; never edited."""
    lines = [
        f"port={port}",
        f"listen-address={address}",
        "bind-interfaces",
        "no-resolv",
        "no-hosts",
        "address=/#/0.0.0.0",
        "address=/#/::",
        f"pid-file={pid_file}",
    ]
    if as_root:
        lines.append("user=root")
    return "\n".join(lines) + "\n"


def _under(name: str, parents: set[str]) -> bool:
    """`name` is one of `parents` or a subdomain of one."""
    labels = name.split(".")
    return any(".".join(labels[i:]) in parents for i in range(len(labels)))


def dns_blocklist(policy: Policy) -> str:
    """DNS-level blocking from the same lists as the proxy, for clients that use our resolver (and for Squid):
    each blacklisted domain and its subdomains answer the null addresses (0.0.0.0, ::) or NXDOMAIN
    (`dns_block_mode`); a `*.name` rule blocks the subdomains of name only (dnsmasq's own `/*.name/`).
    Whitelists win: an exactly whitelisted rule is not blocked, and a whitelisted name (or `*.name`) under a
    blocked one is resolved normally (`server=/name/#`: the upstreams). `/regex/` rules have no dnsmasq form
    (this dnsmasq has no regex support): the proxy alone enforces them."""
    if not policy.enable_domain_blacklist:
        return ""
    white = {d.lower().strip(".") for d in policy.domain_whitelist if not d.startswith("/")}
    index = _LISTS.index(policy.domain_blacklist)
    if white & index.rule_set or any(r.startswith("/") for r in index.pattern_rules):
        index = _LISTS.index([d for d in policy.domain_blacklist if d not in white and not d.startswith("/")])
    wild = sorted(
        {r[2:] for r in index.pattern_rules if r.startswith("*.") and not index.covers(r[2:])}, key=lambda d: d[::-1]
    )
    wild_set = set(wild)

    def exempt(rule: str) -> bool:
        name = rule.removeprefix("*.")
        parent = name.split(".", 1)[1] if "." in name else ""
        return index.covers(parent) or _under(parent, wild_set) or (rule != name and index.covers(name))

    exempted = [w for w in sorted(white, key=lambda d: d.removeprefix("*.")[::-1]) if exempt(w)]
    answer = "" if policy.dns_block_mode == "nxdomain" else "#"
    return (
        _packed("address=/", index.kept_names, f"/{answer}")
        + _lines("address=/*.", wild, f"/{answer}")
        + _lines("server=/", exempted, "/#")
    )


# names a dnsmasq `address=` line holds: dnsmasq parses 200 000 names in a third of the time as 12 500 lines
# of 16 than as a line each (it restarts on every blocklist edit); its lines end at 1 024 characters
NAMES_A_LINE = 16
LINE_BUDGET = 900


def _packed(prefix: str, names: list[str], suffix: str) -> str:
    """`prefix + name/name/... + suffix` lines of NAMES_A_LINE names; a line over LINE_BUDGET (long names)
    is written a name a line instead."""
    runs = range(0, len(names), NAMES_A_LINE)
    lines = [prefix + "/".join(names[at : at + NAMES_A_LINE]) + suffix for at in runs]
    if all(len(line) <= LINE_BUDGET for line in lines):
        return _lines("", lines)
    fitted: list[str] = []
    for at, line in zip(runs, lines, strict=True):
        fitted += [line] if len(line) <= LINE_BUDGET else [prefix + n + suffix for n in names[at : at + NAMES_A_LINE]]
    return _lines("", fitted)


def hosts_file(static: dict[str, str], sinkhole: list[str]) -> str:
    """dnsmasq's hosts file: the test names, then blacklisted domains answered 0.0.0.0 (DNS sinkhole)."""
    lines = [f"{addr} {name}" for name, addr in sorted(static.items())]
    lines += [f"0.0.0.0 {d}" for d in sorted(set(sinkhole)) if d not in static]
    return "".join(line + "\n" for line in lines)
