"""Validation of list entries and parsing of imported lists (hosts files, plain lists, adblock, CIDR)."""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from dataclasses import dataclass, field

from actors.webfilter import hostregex

_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")  # always fullmatch: `$` also matches before a final newline
# control characters and whitespace (Unicode too): one inside an entry could become a second ACL line
_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")
# the same in an imported line, where a tab may separate a hosts file's fields
_UNSAFE_LINE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
_ADBLOCK = re.compile(r"^\|\|([^\^/$|*]+)\^?(?:\$(.*))?$")
# options that narrow a rule to some pages, clients or record types, or undo another rule: honouring
# such a rule as a plain block would block more than the list means, so it is skipped
_ADBLOCK_UNSUPPORTED = {"badfilter", "denyallow", "dnsrewrite", "dnstype", "client", "ctag", "domain", "redirect"}
# element hiding (`site##.banner`, `##.ad`, `#@#`, `#?#`, `#$#`...): hides part of a page, never blocks a site
_COSMETIC = re.compile(r"^[^\s#]*#@?[?$%]?#[^#\s]")
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


def domain_rule(text: str) -> str:
    """A domain list rule in canonical form, one of three kinds:

    - `ads.example` (also written `.ads.example`): the name and every subdomain;
    - `*.ads.example`: the subdomains only, not `ads.example` itself (a name of at least two labels follows);
    - `/^track[0-9]+\\./`: a host pattern (`hostregex.check`), matched anywhere in the host name.
    """
    value = _clean(text, "a domain rule")
    if len(value) >= 2 and value.startswith("/") and value.endswith("/"):
        try:
            return "/" + hostregex.check(value[1:-1]) + "/"
        except hostregex.PatternError as exc:
            raise EntryError(f"{exc}: {text[:100]!r}") from None
    wildcard = value.startswith("*.")
    name = value[2:] if wildcard else value
    if "*" in name:
        raise EntryError(f"only a leading `*.` wildcard is supported: {text[:100]!r}")
    if wildcard:
        if name.startswith(".") or name.count(".") < 1:
            raise EntryError(f"a `*.` wildcard needs a name of at least two labels after it: {text[:100]!r}")
        return "*." + domain_entry(name)
    return domain_entry(name)


def is_pattern(rule: str) -> bool:
    """A `*.` wildcard or `/regex/` rule (Squid: dstdom_regex), not a plain name (Squid: dstdomain)."""
    return rule.startswith(("*.", "/"))


@dataclass
class ParsedList:
    entries: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)  # adblock `@@` rules: whitelist entries
    invalid: int = 0
    bogon_skipped: int = 0
    duplicates: int = 0
    reasons: Counter[str] = field(default_factory=Counter)  # every skipped line, by reason

    def skip(self, reason: str) -> None:
        self.reasons[reason] += 1
        if reason in ("invalid", "invalid_regex"):
            self.invalid += 1
        elif reason == "bogon":
            self.bogon_skipped += 1
        elif reason == "duplicate":
            self.duplicates += 1


Line = tuple[str, str]  # ("entry" | "exception", token) or ("skip", reason)


def _adblock(line: str) -> Line:
    """`||name^` (with options) -> an entry; URL rules and options that change the rule's meaning -> skipped."""
    match = _ADBLOCK.match(line)
    if not match:
        return "skip", "adblock_url_rule"
    options = {o.strip().lstrip("~").split("=", 1)[0] for o in (match.group(2) or "").split(",") if o.strip()}
    if options & _ADBLOCK_UNSUPPORTED:
        return "skip", "adblock_option"
    return "entry", match.group(1)


def _classify_line(line: str, kind: str) -> Line | None:
    """What one line of an imported list is: None for blank lines, comments and headers. A line with a
    control character is an entry whole, so the entry check refuses it (never split into two entries)."""
    if _UNSAFE_LINE.search(line):
        return "entry", line
    line = line.strip()
    if _COSMETIC.match(line):
        return "skip", "adblock_cosmetic"
    if not line or line.startswith(("!", "[", "#", ";")):
        return None
    if line.startswith("@@"):
        if kind != "domain":
            return "skip", "invalid"
        verdict, token = _adblock(line[2:]) if line.startswith("@@|") else ("entry", line[2:].strip())
        return ("exception", token) if verdict == "entry" else (verdict, token)
    if line.startswith("|"):
        return _adblock(line)
    if line.startswith("/") and kind == "domain":
        return "entry", line
    line = re.split(r"#|\s;", line, maxsplit=1)[0].strip()
    parts = line.split()
    if kind == "domain" and len(parts) >= 2:
        try:
            ipaddress.ip_address(parts[0])
        except ValueError:
            return "entry", parts[0]
        return "entry", parts[1]  # hosts file: "0.0.0.0 name [aliases]"
    return ("entry", parts[0]) if parts else None


def _entry(token: str, kind: str) -> str:
    """The canonical entry of `token`; EntryError if it is none."""
    if kind == "ip":
        return ip_entry(token)
    return domain_rule(token)


def parse_list(text: str, kind: str) -> ParsedList:
    """Parse an imported list of `kind` 'ip' or 'domain': plain lists, hosts files, adblock (`||name^`,
    `@@||name^` exceptions), `*.` wildcards and `/regex/` host patterns, CIDR. Comments (`#`, `!`, `;`) and
    headers are skipped; every other line is an entry, an exception or a skipped line with its reason."""
    out = ParsedList()
    seen: dict[str, set[str]] = {"entry": set(), "exception": set()}
    for raw in text.split("\n"):  # not splitlines(): it also splits at \v, \f, \x1c-\x1e, \x85, \u2028...
        line = _classify_line(raw.removesuffix("\r"), kind)
        if line is None:
            continue
        verdict, token = line
        if verdict == "skip":
            out.skip(token)
            continue
        if kind == "domain" and token in _HOSTS_NAMES:
            out.skip("hosts_boilerplate")
            continue
        try:
            value = _entry(token, kind)
        except EntryError:
            out.skip("invalid_regex" if token.startswith("/") else "invalid")
            continue
        if kind == "ip" and is_bogon(value):
            out.skip("bogon")
            continue
        if value in seen[verdict]:
            out.skip("duplicate")
            continue
        seen[verdict].add(value)
        (out.entries if verdict == "entry" else out.exceptions).append(value)
    return out
