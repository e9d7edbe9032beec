"""DNS over TLS upstreams: dnsmasq (the filter) forwards to a local unbound on loopback, which forwards
over TLS only, verifying every upstream's certificate and name.

`dns_upstreams` entries of the form `tls://ADDR[:PORT]#NAME` (port 853 by default, `[v6]` for IPv6)
replace dnsmasq's `server=` lines by one, the forwarder's `127.0.0.1#<port>`. unbound verifies the chain
with `tls-cert-bundle` (`dns_upstream_ca_file`, default the system store) and the name after `#` (its
`forward-addr: ADDR@PORT#NAME`; unbound checks the name only when both are given, so both always are). It
has `forward-first: no` (no query of its own beside the forwarders): a failed handshake answers SERVFAIL,
never a plain query. Plain and `tls://` entries cannot be mixed (dnsmasq would send plain queries beside
the encrypted ones), which the setting refuses.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

PREFIX = "tls://"
DEFAULT_PORT = 853
SYSTEM_CA = "/etc/ssl/certs/ca-certificates.crt"  # Debian's ca-certificates bundle
CHILD = "unbound-dot"  # the supervised forwarder's name (children in /health, its pid file)
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_ENTRY = re.compile(r"tls://(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<v4>[0-9.]+))(?::(?P<port>[0-9]{1,5}))?#(?P<name>[^#]+)")


@dataclass(frozen=True)
class TlsUpstream:
    address: ipaddress.IPv4Address | ipaddress.IPv6Address
    port: int
    name: str  # the name the upstream's certificate must carry

    def __str__(self) -> str:
        host = f"[{self.address}]" if self.address.version == 6 else str(self.address)
        return f"{PREFIX}{host}:{self.port}#{self.name}"

    @property
    def forward_addr(self) -> str:
        return f"{self.address}@{self.port}#{self.name}"


def is_tls(entry: str) -> bool:
    return entry.lower().startswith(PREFIX)


def parse(entry: str) -> TlsUpstream:
    """`tls://198.18.0.2:853#dns.example` (or `tls://[2001:db8::1]#dns.example`); ValueError with the reason."""
    match = _ENTRY.fullmatch(entry.lower())
    if match is None:
        raise ValueError("expected tls://ADDR[:PORT]#NAME (an IP address, then the name its certificate carries)")
    try:
        address = ipaddress.ip_address(match["v6"] or match["v4"])
    except ValueError:
        raise ValueError("not an IP address (a name would need a resolver to find the resolver)") from None
    if (address.version == 6) != bool(match["v6"]):
        raise ValueError("an IPv6 address goes in brackets: tls://[2001:db8::1]:853#NAME")
    port = int(match["port"] or DEFAULT_PORT)
    if not 0 < port < 65536:
        raise ValueError(f"port {port} out of range")
    name = match["name"].rstrip(".")
    if len(name) > 253 or _NAME.fullmatch(name) is None:
        raise ValueError("the name to verify must be a DNS name (letters, digits, hyphens, dots)")
    return TlsUpstream(address, port, name)


def tls_upstreams(entries: list[str]) -> list[TlsUpstream]:
    return [parse(e) for e in entries if is_tls(e)]


def dnsmasq_servers(entries: list[str], forwarder: str) -> list[str]:
    """dnsmasq's `server=` values: the plain entries as they are, or, when the entries are `tls://`, only the
    forwarder (`127.0.0.1#<port>`; none when it has no port yet: nothing leaves the machine in plain)."""
    if any(is_tls(e) for e in entries):
        return [forwarder] if forwarder else []
    return list(entries)


def ca_file(setting: str) -> str:
    return setting or SYSTEM_CA


def unbound_conf(upstreams: list[TlsUpstream], ca: str, port: int, root: Path, pid_file: Path) -> str:
    """unbound as a forwarder on 127.0.0.1:`port`, answering only loopback, forwarding every name over TLS
    to `upstreams`, certificate chain checked against `ca` and each upstream's name checked. No cache of its
    own beyond unbound's default (dnsmasq caches in front), no DNSSEC module (dnsmasq forwards what it gets),
    no control socket, no privileges dropped (it runs as the data plane's user, like dnsmasq)."""
    six = any(u.address.version == 6 for u in upstreams)
    server = [
        "interface: 127.0.0.1",
        f"port: {port}",
        "do-daemonize: no",
        'username: ""',
        'chroot: ""',
        f'directory: "{root}"',
        f'pidfile: "{pid_file}"',
        "use-syslog: no",
        'logfile: ""',
        "verbosity: 1",
        "num-threads: 1",
        "so-reuseport: no",
        f"do-ip6: {'yes' if six else 'no'}",
        "access-control: 127.0.0.0/8 allow",
        'module-config: "iterator"',
        "do-not-query-localhost: no",  # an upstream on loopback (a local DoT proxy) is the operator's choice
        "hide-identity: yes",
        "hide-version: yes",
        f'tls-cert-bundle: "{ca}"',
    ]
    forward = ['name: "."', "forward-tls-upstream: yes", "forward-first: no"]
    forward += [f"forward-addr: {u.forward_addr}" for u in upstreams]
    lines = ["server:", *(f"    {s}" for s in server), "forward-zone:", *(f"    {f}" for f in forward)]
    lines += ["remote-control:", "    control-enable: no"]
    return "\n".join(lines) + "\n"
