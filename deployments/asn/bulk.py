"""Bulk IP lookup (`POST /api/v1/ip/bulk`): the body, its rate-limit cost, and the lookups.

The body is `{"addresses": ["8.8.8.8", "2606:4700::1", ...]}` with at most
`MAX_ADDRESSES` entries. Each address costs one rate-limit hit, exactly as one
`GET /api/v1/ip/{address}` would, so a client cannot multiply its limit by batching:
the guard reads the body first (`cost`) and charges the whole batch at once, all or
nothing. The route then validates it (`parse`) and looks every address up.
"""

from __future__ import annotations

import json
import socket
from typing import Any

from deployments.asn.errors import ApiError
from deployments.asn.parsing import parse_ip
from deployments.asn.store import AsnStore

PATH = "/api/v1/ip/bulk"
MAX_ADDRESSES = 10_000
MAX_BODY_BYTES = 1 << 20  # 10k IPv6 addresses in full form are about 420 KB


def _addresses(raw: bytes) -> list[Any]:
    """The `addresses` list of the body; ApiError 422 when the body is not shaped that way."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ApiError(422, 'body is not JSON; expected {"addresses": ["8.8.8.8", ...]}') from None
    if not isinstance(body, dict) or not isinstance(body.get("addresses"), list):
        raise ApiError(422, 'expected a JSON object {"addresses": ["8.8.8.8", ...]}')
    if set(body) != {"addresses"}:
        raise ApiError(422, f"unknown fields: {sorted(set(body) - {'addresses'})[:5]}")
    addresses: list[Any] = body["addresses"]
    return addresses


def cost(raw: bytes) -> int:
    """Hits a bulk body costs: one per address; 1 for a body that will be refused anyway."""
    try:
        addresses = _addresses(raw)
    except ApiError:
        return 1
    return len(addresses) if 0 < len(addresses) <= MAX_ADDRESSES else 1


def _address(text: object) -> tuple[int, int, str] | None:
    """(family, integer, canonical text) of one entry, or None when it is not an address.

    IPv4 takes the strict `inet_pton` path (no leading zeros, exactly four parts), whose
    canonical form is the input itself; everything else goes through `parse_ip`.
    """
    if not isinstance(text, str):
        return None
    if ":" not in text and len(text) <= 15:
        try:
            return 4, int.from_bytes(socket.inet_pton(socket.AF_INET, text), "big"), text
        except (OSError, ValueError):  # ValueError: an embedded NUL
            return None
    try:
        return parse_ip(text)
    except ValueError:
        return None


def parse(raw: bytes) -> list[tuple[int, int, str]]:
    """(family, integer, canonical text) of every address, in order.

    413 beyond `MAX_ADDRESSES`; 422 for an empty list, a non-string entry or a malformed
    address (the first few are named, with their index), so nothing is half-answered.
    """
    addresses = _addresses(raw)
    if len(addresses) > MAX_ADDRESSES:
        raise ApiError(413, f"{len(addresses)} addresses; at most {MAX_ADDRESSES} per request")
    if not addresses:
        raise ApiError(422, "addresses is empty")
    parsed = [_address(text) for text in addresses]
    if None in parsed:
        bad = [
            f"[{i}] is not a string" if not isinstance(text, str) else f"[{i}] {text[:45]!r}"
            for i, (text, item) in enumerate(zip(addresses, parsed, strict=True))
            if item is None
        ]
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise ApiError(422, f"malformed IP addresses: {', '.join(bad[:5])}{more}")
    return [item for item in parsed if item is not None]


def lookup(store: AsnStore, parsed: list[tuple[int, int, str]]) -> dict[str, Any]:
    """One `{ip, prefix, asn}` per address (in order; nulls where no prefix covers it), and
    each origin AS's name, organisation and country once, under `asns` (the full record is
    `GET /api/v1/asn/{asn}`). IPv4 is matched in one vectorised pass."""
    prefix_ids = store.match_ids([family for family, _, _ in parsed], [value for _, value, _ in parsed])
    texts, origins = store.prefix_texts, store.prefix_origins
    results: list[dict[str, Any]] = []
    seen: set[int] = set()
    for (_, _, canonical), pid in zip(parsed, prefix_ids, strict=True):
        if pid < 0:
            results.append({"ip": canonical, "prefix": None, "asn": None})
            continue
        origin = origins[pid]
        seen.add(origin)
        results.append({"ip": canonical, "prefix": texts[pid], "asn": origin})
    asns = {str(asn): store.brief(asn) for asn in seen}
    found = sum(1 for pid in prefix_ids if pid >= 0)
    return {"count": len(results), "found": found, "results": results, "asns": asns, "dataset": store.dataset()}
