"""Prefix arithmetic for the ASN dataset: parsing, flattening, address counting.

A routing table holds nested prefixes (a /16 and a more specific /24 inside it,
often of different origin ASNs). Longest-prefix match over nested prefixes needs
a tree; over *disjoint* ranges it is one binary search. `flatten` turns the
nested table into sorted disjoint ranges, each labelled with the most specific
prefix covering it, once at load time.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

V4_BITS = 32
V6_BITS = 128
_BEYOND_ALL = 1 << (V6_BITS + 1)


@dataclass(frozen=True, slots=True)
class Prefix:
    """One announced prefix: family (4/6), first and last address as ints, length, origin ASN."""

    family: int
    start: int
    length: int
    asn: int

    @property
    def bits(self) -> int:
        return V4_BITS if self.family == 4 else V6_BITS

    @property
    def stop(self) -> int:
        """Last address covered (inclusive)."""
        return self.start + (1 << (self.bits - self.length)) - 1

    @property
    def size(self) -> int:
        return 1 << (self.bits - self.length)

    def text(self) -> str:
        return f"{format_address(self.family, self.start)}/{self.length}"


def address_to_int(text: str) -> tuple[int, int]:
    """Parse an IPv4 or IPv6 address into (family, integer). Raises ValueError."""
    if ":" in text:
        try:
            packed = socket.inet_pton(socket.AF_INET6, text)
        except OSError as exc:
            raise ValueError(f"invalid IPv6 address: {text!r}") from exc
        return 6, int.from_bytes(packed, "big")
    try:
        packed = socket.inet_pton(socket.AF_INET, text)
    except OSError as exc:
        raise ValueError(f"invalid IPv4 address: {text!r}") from exc
    return 4, int.from_bytes(packed, "big")


def format_address(family: int, value: int) -> str:
    if family == 4:
        return socket.inet_ntop(socket.AF_INET, value.to_bytes(4, "big"))
    return socket.inet_ntop(socket.AF_INET6, value.to_bytes(16, "big"))


def parse_prefix(text: str, asn: int) -> Prefix:
    """Parse `a.b.c.d/len` or `x::/len`; host bits must be zero. Raises ValueError."""
    address, sep, length_text = text.partition("/")
    if not sep or not length_text.isdigit():
        raise ValueError(f"invalid prefix: {text!r}")
    family, start = address_to_int(address)
    bits = V4_BITS if family == 4 else V6_BITS
    length = int(length_text)
    if length > bits:
        raise ValueError(f"invalid prefix length: {text!r}")
    if start & ((1 << (bits - length)) - 1):
        raise ValueError(f"host bits set in prefix: {text!r}")
    return Prefix(family, start, length, asn)


def read_ipasn_lines(lines: Iterable[str]) -> Iterator[Prefix]:
    """Rows of pyasn's IPASN text format: `prefix<TAB>asn`, `;` starts a comment.

    Raises ValueError naming the line number on a malformed row, so a corrupt
    file never loads half-way.
    """
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith(";"):
            continue
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            raise ValueError(f"line {number}: expected '<prefix> <asn>', got {line[:80]!r}")
        try:
            yield parse_prefix(fields[0], int(fields[1]))
        except ValueError as exc:
            raise ValueError(f"line {number}: {exc}") from exc


def flatten(prefixes: list[Prefix]) -> list[tuple[int, int, int]]:
    """Disjoint, sorted (start, stop, prefix_index) ranges of one address family.

    Each range is labelled with the index (into `prefixes`) of the most specific
    prefix that covers it. Prefixes are sorted by start, then shortest first, so
    a prefix is always visited after every prefix that contains it.
    """
    order = sorted(range(len(prefixes)), key=lambda i: (prefixes[i].start, prefixes[i].length))
    out: list[tuple[int, int, int]] = []
    stack: list[int] = []  # indexes of open, nested prefixes; innermost last
    cursor = 0  # first address not yet emitted

    def close_until(limit: int) -> None:
        """Emit ranges for open prefixes that end before `limit`."""
        nonlocal cursor
        while stack and prefixes[stack[-1]].stop < limit:
            top = prefixes[stack[-1]]
            if cursor <= top.stop:
                out.append((cursor, top.stop, stack[-1]))
                cursor = top.stop + 1
            stack.pop()

    for index in order:
        prefix = prefixes[index]
        close_until(prefix.start)
        if stack:
            # CIDR blocks nest or are disjoint: whatever is still open contains `prefix`.
            top = stack[-1]
            if prefixes[top].start == prefix.start and prefixes[top].length == prefix.length:
                continue  # the same prefix announced twice: the first row wins
            if cursor < prefix.start:
                out.append((cursor, prefix.start - 1, top))
        cursor = max(cursor, prefix.start)
        stack.append(index)
    close_until(_BEYOND_ALL)
    return out


def union_size(ranges: Iterable[tuple[int, int]]) -> int:
    """Number of addresses covered by inclusive (start, stop) ranges, overlaps counted once."""
    total = 0
    current_start = current_stop = -1
    for start, stop in sorted(ranges):
        if start > current_stop + 1 or current_stop < 0:
            if current_stop >= 0:
                total += current_stop - current_start + 1
            current_start, current_stop = start, stop
        elif stop > current_stop:
            current_stop = stop
    if current_stop >= 0:
        total += current_stop - current_start + 1
    return total
