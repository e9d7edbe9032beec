"""Validation of list entries and parsing of imported lists (hosts files, plain lists, adblock, CIDR)."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")  # always fullmatch: `$` also matches before a final newline
# control characters and whitespace (Unicode too): one inside an entry could become a second ACL line
_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")
# the same in an imported line, where a tab may separate a hosts file's fields
_UNSAFE_LINE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
_ADBLOCK = re.compile(r"^\|\|([^\^/$]+)\^?(\$.*)?$")
_HOSTS_NAMES = {"localhost", "localhost.localdomain", "local", "broadcasthost", "ip6-localhost", "ip6-loopback"}
_BOGON_V4 = [
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
]


class EntryError(ValueError):
    """An entry that is not a valid address, network or domain."""


def _clean(text: str, what: str) -> str:
    """`text` without surrounding spaces; EntryError if a control character or whitespace is left in it."""
    value = text.strip(" ")
    if _UNSAFE.search(value):
        raise EntryError(f"{what} contains a control character or whitespace: {value[:100]!r}")
    return value


def ip_entry(text: str) -> str:
    """`1.2.3.4` or `1.2.3.0/24` (host bits cleared) in canonical form."""
    value = _clean(text, "an address")
    try:
        net = ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise EntryError(f"not an IP address or CIDR: {value[:100]!r}") from None
    if net.num_addresses == 1:
        return str(net.network_address)
    return str(net)


_BOGON_V4_RANGES = [(int(n.network_address), int(n.broadcast_address)) for n in _BOGON_V4]


def is_bogon(entry: str) -> bool:
    """Private, loopback, link-local, documentation, multicast and reserved space, or any network that
    overlaps them (never blacklisted by an import: a bogon in a public list would cut the LAN off)."""
    net = ipaddress.ip_network(entry, strict=False)
    if net.version == 4:
        first, last = int(net.network_address), int(net.broadcast_address)
        return any(first <= end and start <= last for start, end in _BOGON_V4_RANGES)
    addr = net.network_address
    return bool(addr.is_private or addr.is_loopback or addr.is_link_local or addr.is_multicast or addr.is_reserved)


def domain_entry(text: str) -> str:
    """A lower-case ASCII (IDNA) domain with at least two labels; a leading `*.` or `.` is dropped
    (every entry covers its subdomains)."""
    value = _clean(text, "a domain").lower().rstrip(".")
    for prefix in ("*.", "."):
        if value.startswith(prefix):
            value = value[len(prefix) :]
    if "://" in value:
        value = value.split("://", 1)[1].split("/", 1)[0]
    if not value or len(value) > 253:
        raise EntryError(f"not a domain: {text[:100]!r}")
    try:
        ascii_name = value.encode("idna").decode("ascii") if not value.isascii() else value
    except UnicodeError:
        raise EntryError(f"invalid internationalised domain: {text[:100]!r}") from None
    labels = ascii_name.split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels):
        raise EntryError(f"not a domain: {text[:100]!r}")
    if labels[-1].isdigit():
        raise EntryError(f"an IP address is not a domain: {text[:100]!r}")
    try:
        if ascii_name != value or any(label.startswith("xn--") for label in labels):
            ascii_name.encode("ascii").decode("idna")
    except UnicodeError:
        raise EntryError(f"invalid IDNA label in {text[:100]!r}") from None
    return ascii_name


def classify(entry: str) -> tuple[str, str]:
    """Egress allowlist entries: ('cidr', canonical) or ('domain', canonical)."""
    try:
        return "cidr", ip_entry(entry)
    except EntryError:
        return "domain", domain_entry(entry)


@dataclass
class ParsedList:
    entries: list[str] = field(default_factory=list)
    invalid: int = 0
    bogon_skipped: int = 0
    duplicates: int = 0


def _candidate(line: str, kind: str) -> str | None:
    """The entry of one line: comments (`#`, `!`, ` ;`) and hosts-file addresses removed. A line with a
    control character is returned whole, so the entry check refuses it (never split into two entries)."""
    if _UNSAFE_LINE.search(line):
        return line
    line = re.split(r"#|\s;", line, maxsplit=1)[0].strip()
    if not line or line.startswith(("!", ";", "[")):
        return None
    adblock = _ADBLOCK.match(line)
    if adblock:
        return adblock.group(1)
    parts = line.split()
    if kind == "domain" and len(parts) >= 2:
        try:
            ipaddress.ip_address(parts[0])
        except ValueError:
            return parts[0]
        return parts[1]  # hosts file: "0.0.0.0 name [aliases]"
    return parts[0]


def parse_list(text: str, kind: str) -> ParsedList:
    """Parse an imported list of `kind` 'ip' or 'domain'. Comments (`#`, `!`, `;`) and hosts-file
    boilerplate are skipped; bogons are dropped and counted for IP lists."""
    out = ParsedList()
    seen: set[str] = set()
    for raw in text.split("\n"):  # not splitlines(): it also splits at \v, \f, \x1c-\x1e, \x85, \u2028...
        raw = raw.removesuffix("\r")
        token = _candidate(raw, kind)
        if token is None:
            continue
        try:
            if kind == "ip":
                value = ip_entry(token)
                if is_bogon(value):
                    out.bogon_skipped += 1
                    continue
            else:
                if token in _HOSTS_NAMES:
                    continue
                value = domain_entry(token)
        except EntryError:
            out.invalid += 1
            continue
        if value in seen:
            out.duplicates += 1
            continue
        seen.add(value)
        out.entries.append(value)
    return out
