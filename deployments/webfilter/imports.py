"""Imports into the blacklists: inline content or an SSRF-safe URL; geo ranges from the ASN API."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from actors.webfilter.entries import parse_list
from actors.webfilter.fetch import FetchError, fetch_text, is_public
from deployments.webfilter.errors import ApiError
from deployments.webfilter.state import WebfilterState
from deployments.webfilter.store import LISTS, utc_now


async def import_list(
    context: WebfilterState, kind: str, url: str | None, content: str | None, description: str
) -> dict[str, Any]:
    """Parse and add a list of `kind` ('ip' | 'domain'); returns the counts and the proxy sync result."""
    if bool(url) == bool(content):
        raise ApiError(400, "give exactly one of url or content")
    text = content or ""
    if url:
        try:
            text = await fetch_text(url, context.config.import_max_bytes, context.public_check or is_public)
        except FetchError as exc:
            raise ApiError(exc.status, exc.detail) from None
    elif len(text.encode()) > context.config.import_max_bytes:
        raise ApiError(413, f"import list larger than {context.config.import_max_bytes} bytes")
    parsed = await asyncio.to_thread(parse_list, text, kind)
    spec = LISTS["ip-blacklist" if kind == "ip" else "domain-blacklist"]
    added = await context.db(context.store.add_many, spec, parsed.entries, description or "import")
    excepted = await context.db(context.store.add_many, LISTS["domain-whitelist"], parsed.exceptions, "import @@")
    await context.db(context.store.set_meta, "last_import", utc_now())
    sync = await context.sync_proxy()
    return {
        "added": added,
        "whitelist_added": excepted,
        "skipped": len(parsed.entries) - added + len(parsed.exceptions) - excepted + parsed.duplicates,
        "invalid": parsed.invalid,
        "bogon_skipped": parsed.bogon_skipped,
        "accepted_lines": len(parsed.entries) + len(parsed.exceptions),
        "skipped_lines": dict(sorted(parsed.reasons.items())),
        "proxy": sync,
    }


async def country_prefixes(context: WebfilterState, country: str) -> list[str]:
    """`GET {asn_url}/api/v1/country/{cc}/prefixes` with the ASN API key, over HTTP."""
    key = context.config.asn_api_key
    headers = {"X-API-Key": key.get_secret_value()} if key else {}
    url = f"{context.config.asn_url.rstrip('/')}/api/v1/country/{country}/prefixes"
    async with httpx.AsyncClient(timeout=30, trust_env=False) as client:
        try:
            response = await client.get(url, headers=headers)
        except httpx.HTTPError as exc:
            raise ApiError(502, f"ASN API unreachable: {type(exc).__name__}") from None
    if response.status_code != 200:
        raise ApiError(502, f"ASN API answered {response.status_code} for {country}")
    body: dict[str, Any] = response.json()
    return [str(p) for p in body.get("prefixes", [])]
