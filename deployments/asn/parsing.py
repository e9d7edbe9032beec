"""Parsing of user input (AS numbers, IP addresses) and of the AS-name strings of the dataset."""

from __future__ import annotations

import re
from dataclasses import dataclass

from deployments.asn.prefixes import address_to_int, format_address

ASN_MIN = 1
ASN_MAX = 4_294_967_295  # 32-bit AS numbers (RFC 6793); AS0 is reserved (RFC 7607)

_ASPLAIN = re.compile(r"(?:AS)?([0-9]{1,10})", re.IGNORECASE)
_ASDOT = re.compile(r"(?:AS)?([0-9]{1,5})\.([0-9]{1,5})", re.IGNORECASE)
_COUNTRY = re.compile(r"[A-Z]{2}")
_HANDLE = re.compile(r"[A-Z0-9](?:[A-Z0-9._-]*[A-Z0-9])?")


def parse_asn(text: str) -> int:
    """`15169`, `AS15169`, `as15169` or asdot `AS1.10` → int in 1..4294967295.

    Raises ValueError with a message fit for a 400 response.
    """
    match = _ASPLAIN.fullmatch(text)
    if match:
        value = int(match.group(1))
    else:
        dotted = _ASDOT.fullmatch(text)
        if not dotted:
            raise ValueError(f"malformed AS number {text[:40]!r}: expected 15169, AS15169 or asdot 1.10")
        high, low = int(dotted.group(1)), int(dotted.group(2))
        if high > 65535 or low > 65535:
            raise ValueError(f"malformed asdot AS number {text[:40]!r}: both halves must be 0..65535")
        value = high * 65536 + low
    if not ASN_MIN <= value <= ASN_MAX:
        raise ValueError(f"AS number {value} is out of range {ASN_MIN}..{ASN_MAX}")
    return value


def parse_ip(text: str) -> tuple[int, int, str]:
    """An IPv4/IPv6 address → (family, integer, canonical text).

    IPv4-mapped IPv6 addresses (`::ffff:8.8.8.8`) are looked up as IPv4.
    Raises ValueError.
    """
    if len(text) > 64 or "%" in text:
        raise ValueError(f"malformed IP address {text[:40]!r}")
    family, value = address_to_int(text)
    if family == 6 and value >> 32 == 0xFFFF:
        family, value = 4, value & 0xFFFFFFFF
    return family, value, format_address(family, value)


@dataclass(frozen=True, slots=True)
class AsName:
    """The parts of an `asnames.json` value such as `GOOGLE - Google Inc., US`."""

    name: str | None
    organisation: str | None
    country: str | None
    description: str


def parse_asname(raw: str) -> AsName:
    """Split `HANDLE - Organisation, CC` (ARIN style) or `HANDLE Organisation, CC` (RIPE style).

    The country is the trailing `, CC` when CC is two upper-case letters; `ZZ`
    (unknown, used for reserved and private ranges) becomes None. Entries such as
    `-Private Use AS-` have no handle and keep their text as the name. When the
    first word does not look like a registry handle (`A.P. Moller - Maersk A/S`),
    name and organisation are both the whole text.
    """
    body, sep, tail = raw.rpartition(", ")
    country: str | None = None
    if sep and _COUNTRY.fullmatch(tail):
        country = None if tail == "ZZ" else tail
    else:
        body = raw
    body = body.strip()
    if body.startswith("-") and body.endswith("-") and len(body) > 1:
        label = body.strip("-").strip()
        return AsName(label or None, None, country, body)
    head, dash, rest = body.partition(" - ")
    if dash and " " not in head and _HANDLE.fullmatch(head):
        return AsName(head, rest.strip() or None, country, body)
    first, space, rest = body.partition(" ")
    if space and _HANDLE.fullmatch(first):
        return AsName(first, rest.strip() or None, country, body)
    if not space and _HANDLE.fullmatch(first):
        return AsName(first, None, country, body)
    return AsName(body or None, body or None, country, body)
