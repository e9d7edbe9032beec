"""Lists: envelopes with meta (and the deprecated top-level fields), validation, bulk operations and
imports in every supported format; URL imports are SSRF-safe."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from tests.deployments.webfilter.conftest import Receiver

pytestmark = pytest.mark.realserver


async def test_collections_carry_meta_and_the_deprecated_top_level_fields(wf):
    for value in ("one.test", "two.test", "three.test"):
        assert (await wf.api.post("/api/domain-whitelist", json={"domain": value})).status_code == 200
    r = await wf.api.get("/api/domain-whitelist", params={"limit": 2, "offset": 1})
    body = r.json()
    assert body["status"] == "success" and len(body["data"]) == 2
    assert body["meta"] == {"total": 3, "limit": 2, "offset": 1}
    assert (body["total"], body["limit"], body["offset"]) == (3, 2, 1)
    for item in (await wf.api.get("/api/domain-whitelist")).json()["data"]:
        assert (await wf.api.delete(f"/api/domain-whitelist/{item['id']}")).status_code == 200


@pytest.mark.parametrize(
    "path, body, status",
    [
        ("/api/ip-blacklist", {"ip": "999.1.1.1"}, 400),
        ("/api/ip-blacklist", {"ip": ""}, 422),
        ("/api/domain-blacklist", {"domain": "no_dots"}, 400),
        ("/api/domain-blacklist", {"domain": "xn--a.test"}, 400),
        ("/api/egress-allowlist", {"entry": "not a thing"}, 400),
        ("/api/ip-whitelist", {"ip": "1.2.3.4", "extra": 1}, 422),
    ],
)
async def test_bad_entries_get_a_clear_4xx_in_the_error_shape(wf, path, body, status):
    r = await wf.api.post(path, json=body)
    assert r.status_code == status
    assert r.json()["status"] == "error" and isinstance(r.json()["detail"], str)


async def test_duplicates_conflict_and_unknown_ids_are_404(wf):
    assert (await wf.api.post("/api/ip-whitelist", json={"ip": "192.0.2.1"})).status_code == 200
    dup = await wf.api.post("/api/ip-whitelist", json={"ip": "192.0.2.1"})
    assert dup.status_code == 409
    assert (await wf.api.delete("/api/ip-whitelist/999999")).status_code == 404
    assert (await wf.api.delete("/api/ip-whitelist/abc")).status_code == 422


async def test_idn_domains_are_stored_in_idna_form(wf):
    r = await wf.api.post("/api/domain-blacklist", json={"domain": "bücher.test"})
    assert r.status_code == 200 and r.json()["data"]["domain"] == "xn--bcher-kva.test"
    await wf.api.delete("/api/domain-blacklist/clear-all")


async def test_bulk_delete_and_clear_all(wf):
    ids = []
    for n in range(3):
        ids.append((await wf.api.post("/api/ip-blacklist", json={"ip": f"198.51.100.{n + 1}"})).json()["data"]["id"])
    r = await wf.api.post("/api/ip-blacklist/bulk-delete", json={"ids": ids[:2]})
    assert r.json()["data"]["deleted"] == 2
    assert (await wf.api.post("/api/ip-blacklist/bulk-delete", json={"ids": []})).status_code == 422
    assert (await wf.api.delete("/api/ip-blacklist/clear-all")).json()["data"]["deleted"] == 1
    assert (await wf.api.get("/api/ip-blacklist")).json()["meta"]["total"] == 0


HOSTS_FILE = """# header
127.0.0.1 localhost
127.0.0.1 localhost.localdomain
0.0.0.0 ads.example.com  # inline comment
0.0.0.0 tracker.example.net
"""
ADBLOCK = "! adblock list\n||doubleclick.example^\n||metrics.example.org^$third-party\n"
IPS = "# list\n8.8.8.0/24\n10.0.0.0/8\n192.168.1.1\n1.1.1.1 ; comment\n127.0.0.1\n9.9.9.9\n9.9.9.9\n"


async def test_inline_imports_understand_hosts_adblock_and_cidr_and_drop_bogons(wf):
    r = await wf.api.post("/api/domain-blacklist/import", json={"content": HOSTS_FILE})
    assert r.status_code == 200 and r.json()["data"]["added"] == 2
    r = await wf.api.post("/api/blacklists/import", json={"type": "domain", "content": ADBLOCK})
    assert r.json()["data"]["added"] == 2
    domains = {e["domain"] for e in (await wf.api.get("/api/domain-blacklist")).json()["data"]}
    assert domains == {"ads.example.com", "tracker.example.net", "doubleclick.example", "metrics.example.org"}
    r = await wf.api.post("/api/ip-blacklist/import", json={"content": IPS})
    data = r.json()["data"]
    assert data["added"] == 3 and data["bogon_skipped"] == 3
    ips = {e["ip"] for e in (await wf.api.get("/api/ip-blacklist")).json()["data"]}
    assert ips == {"8.8.8.0/24", "1.1.1.1", "9.9.9.9"}
    stats = (await wf.api.get("/api/logs/stats")).json()["data"]
    assert stats["last_import"]
    await wf.api.delete("/api/domain-blacklist/clear-all")
    await wf.api.delete("/api/ip-blacklist/clear-all")


async def test_import_needs_exactly_one_source(wf):
    assert (await wf.api.post("/api/ip-blacklist/import", json={})).status_code == 400
    both = await wf.api.post("/api/ip-blacklist/import", json={"url": "http://x.test/", "content": "1.1.1.1"})
    assert both.status_code == 400
    assert (await wf.api.post("/api/blacklists/import", json={"type": "url", "content": "x"})).status_code == 422


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:1/list.txt",
        "http://[::1]:1/x",
        "ftp://example.test/x",
        "http://10.1.2.3/x",
        "file:///etc/passwd",
    ],
)
async def test_url_imports_refuse_non_public_addresses_and_schemes(wf, url):
    r = await wf.api.post("/api/blacklists/import", json={"type": "ip", "url": url})
    assert r.status_code == 400 and r.json()["status"] == "error"


async def test_an_allowed_receiver_is_fetched_but_its_redirects_are_rechecked(wf):
    async def serve_list(request):
        return web.Response(text="||fetched.example^\n")

    async def redirect(request):
        raise web.HTTPFound(f"http://127.0.0.3:{port}/list")

    receiver = await Receiver([("GET", "/list", serve_list), ("GET", "/redirect", redirect)]).start()
    port = receiver.port
    context = wf.app.state.component
    context.public_check = lambda address: address == "127.0.0.1"
    try:
        r = await wf.api.post("/api/domain-blacklist/import", json={"url": f"http://127.0.0.1:{port}/list"})
        assert r.status_code == 200 and r.json()["data"]["added"] == 1
        r = await wf.api.post("/api/domain-blacklist/import", json={"url": f"http://127.0.0.1:{port}/redirect"})
        assert r.status_code == 400 and "non-public" in r.json()["detail"]
        context.config = context.config.model_copy(update={"import_max_bytes": 1024})
        big = await wf.api.post("/api/domain-blacklist/import", json={"content": "a.example\n" * 200})
        assert big.status_code == 413
    finally:
        context.public_check = None
        context.config = context.config.model_copy(update={"import_max_bytes": 20 * 1024 * 1024})
        await receiver.stop()
        await wf.api.delete("/api/domain-blacklist/clear-all")


async def test_geo_import_takes_the_country_prefixes_from_the_asn_api_over_http(wf):
    seen = {}

    async def prefixes(request):
        seen["key"] = request.headers.get("X-API-Key")
        cc = request.match_info["cc"]
        body = {"country": cc, "count": 3, "prefixes": ["8.8.4.0/24", "10.0.0.0/8", "2001:db8::/32"], "dataset": "t"}
        return web.json_response(body)

    receiver = await Receiver([("GET", "/asn/api/v1/country/{cc}/prefixes", prefixes)]).start()
    port = receiver.port
    context = wf.app.state.component
    original = context.config
    from pydantic import SecretStr

    context.config = original.model_copy(
        update={"asn_url": f"http://127.0.0.1:{port}/asn", "asn_api_key": SecretStr("k" * 40)}
    )
    try:
        r = await wf.api.post("/api/blacklists/import-geo", json={"countries": ["us"]})
        data = r.json()["data"]
        assert r.status_code == 200 and data["countries"] == {"US": 1} and data["bogon_skipped"] == 2
        assert seen["key"] == "k" * 40
        listed = (await wf.api.get("/api/ip-blacklist")).json()["data"]
        assert listed[0]["ip"] == "8.8.4.0/24" and listed[0]["description"] == "GeoIP: US"
        assert (await wf.api.post("/api/blacklists/import-geo", json={"countries": ["USA"]})).status_code == 400
        # non-ASCII letters are no ISO code: refused before the ASN API is asked (was a 502 from it)
        for codes in (["\u00ef\u00ba"], ["ÄÖ"], ["us", "ß1"]):
            bad = await wf.api.post("/api/blacklists/import-geo", json={"countries": codes})
            assert bad.status_code == 400 and bad.json()["status"] == "error", codes
        await receiver.stop()
        down = await wf.api.post("/api/blacklists/import-geo", json={"countries": ["FR"]})
        assert down.status_code == 502
    finally:
        context.config = original
        await wf.api.delete("/api/ip-blacklist/clear-all")


SQLITE_TOO_BIG = 2**63  # one past SQLite's INTEGER range


async def test_ids_and_offsets_beyond_sqlites_integer_range_are_422_not_500(wf):
    # found by the fuzz test: these reached SQLite and failed with OverflowError (500)
    for path in ("/api/ip-blacklist", "/api/domain-blacklist", "/api/egress-allowlist"):
        r = await wf.api.post(f"{path}/bulk-delete", json={"ids": [1, SQLITE_TOO_BIG]})
        assert r.status_code == 422 and r.json()["status"] == "error", path
        assert (await wf.api.delete(f"{path}/{SQLITE_TOO_BIG}")).status_code == 422
        assert (await wf.api.get(path, params={"offset": SQLITE_TOO_BIG})).status_code == 422
    r = await wf.api.get("/api/audit-log", params={"offset": SQLITE_TOO_BIG})
    assert r.status_code == 422 and r.json()["status"] == "error"
    assert (await wf.api.get("/api/audit-log", params={"offset": SQLITE_TOO_BIG - 1})).json()["data"] == []


async def test_the_openapi_documents_the_error_answers_in_the_error_shape(wf):
    # found by the fuzz test: 400/401/404/409/429 answers were undocumented, 422 documented with FastAPI's shape
    doc = (await wf.api.get("/openapi.json")).json()
    error = doc["components"]["schemas"]["ErrorBody"]
    assert set(error["required"]) == {"status", "detail"}
    add = doc["paths"]["/api/ip-blacklist"]["post"]["responses"]
    assert {"400", "401", "409", "422", "429", "500"} <= set(add)
    assert add["422"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}
    assert "404" in doc["paths"]["/api/ip-blacklist/{id}"]["delete"]["responses"]
    assert "502" in doc["paths"]["/api/blacklists/import-geo"]["post"]["responses"]
    assert "401" in doc["paths"]["/api/auth/login"]["post"]["responses"]
    assert "HTTPValidationError" not in doc["components"]["schemas"]


async def test_concurrent_list_edits_share_reconfigurations_and_all_take_effect(wf):
    applies = wf.app.state.component.applies
    before = applies.runs
    domains = [f"c{i}.concurrent.test" for i in range(6)]
    added = await asyncio.gather(*(wf.api.post("/api/domain-blacklist", json={"domain": d}) for d in domains))
    assert [r.status_code for r in added] == [200] * len(domains)
    assert 1 <= applies.runs - before < len(domains)  # callers that arrived during a run shared the next one
    for domain in domains:  # every caller's change is enforced when its call returns
        refused = await wf.fetch(wf.url(domain, "/concurrent"))
        assert refused.status_code == 403 and "domain_blacklist" in refused.text
    for r in added:
        assert (await wf.api.delete(f"/api/domain-blacklist/{r.json()['data']['id']}")).status_code == 200
