"""Country codes for geo_block and their prefixes from the ASN API (a local stand-in on loopback)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from actors.mitigation.geo import GeoError, fetch_prefixes, normalise_countries
from tests.conftest import free_port


def test_country_codes_are_upper_cased_sorted_and_deduplicated():
    assert normalise_countries([" us", "DE", "us"]) == ["DE", "US"]
    with pytest.raises(GeoError) as caught:
        normalise_countries(["USA"])
    assert caught.value.status == 422


@pytest.fixture
async def asn() -> AsyncIterator[tuple[str, list[str]]]:
    keys: list[str] = []

    async def prefixes(request: web.Request) -> web.Response:
        keys.append(request.headers.get("X-API-Key", ""))
        cc = request.match_info["cc"]
        if cc == "ZZ":
            return web.json_response({"detail": "unknown"}, status=404)
        if cc == "XX":
            return web.json_response({"detail": "down"}, status=500)
        return web.json_response({"country": cc, "prefixes": ["8.8.8.1/24", "2001:db8::/32"]})

    app = web.Application()
    app.router.add_get("/asn/api/v1/country/{cc}/prefixes", prefixes)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}/asn/", keys
    finally:
        await runner.cleanup()


async def test_prefixes_are_fetched_per_country_with_the_key_and_normalised(asn):
    url, keys = asn
    got = await fetch_prefixes(url, "k" * 40, ["US", "ZZ"])
    assert got == {"US": ["8.8.8.0/24", "2001:db8::/32"], "ZZ": []}  # host bits dropped; unknown: none
    assert keys == ["k" * 40, "k" * 40]


async def test_an_asn_api_failure_or_absence_is_a_503(asn):
    url, _ = asn
    with pytest.raises(GeoError, match="answered 500 for country XX") as caught:
        await fetch_prefixes(url, "k", ["XX"])
    assert caught.value.status == 503
    with pytest.raises(GeoError, match="unreachable"):
        await fetch_prefixes(f"http://127.0.0.1:{free_port()}", "k", ["US"], timeout=2)
    # no ASN API configured is the operator's setting, not an outage: a conflict, never a 5xx
    with pytest.raises(GeoError, match="needs the ASN API") as caught:
        await fetch_prefixes("", "k", ["US"])
    assert caught.value.status == 409
