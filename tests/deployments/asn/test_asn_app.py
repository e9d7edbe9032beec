"""Tier 1: the ASGI app in-process on the tiny dataset, rate limits through the actor stand-in."""

from __future__ import annotations

import asyncio
import csv
import logging
import re
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from deployments.asn import schemas
from deployments.asn.app import create_app
from deployments.asn.config import AsnConfig
from deployments.asn.state import AsnState, build_limiter, start_dataset
from rayfleet.config import ConfigError
from rayfleet.logs import JsonFormatter
from tests.conftest import DATA
from tests.deployments.asn.conftest import API_KEY, client_for, tiny_config
from tests.rayfleet import servestack

KEY = {"X-API-Key": API_KEY}
REQUEST_ID = re.compile(r"^\d{10}-[0-9a-f]{8}$")


def asn_routes() -> list[str]:
    with open(DATA / "routes.tsv", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh, delimiter="\t") if r and not r[0].startswith("#")]
    return [path for component, method, path in rows if component == "asn" and method == "GET"]


def concrete(path: str) -> str:
    return path.replace("{asn}", "AS15169")


@pytest.fixture
def make_app(tmp_path: Path, tiny_pkg: Path):
    apps = []

    def build(**rate):
        app = create_app(tiny_config(tmp_path, tiny_pkg, **rate))
        assert app.state.component.dataset.wait(30) and app.state.component.dataset.ready, (
            app.state.component.dataset.error
        )
        apps.append(app)
        return app

    return build


@pytest.fixture
def app(make_app):
    return make_app()


class Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.setFormatter(JsonFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def asn_log():
    handler = Captured()
    logger = logging.getLogger("rayfleet.asn")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


# --- start-up -----------------------------------------------------------------------------


@pytest.mark.parametrize("key", [None, "", "x" * 31])
def test_refuses_to_start_without_a_usable_key(tmp_path, tiny_pkg, key):
    config = tiny_config(tmp_path, tiny_pkg).model_copy(update={"api_key": SecretStr(key) if key is not None else None})
    with pytest.raises(ConfigError, match="API_SECRET_KEY"):
        create_app(config)


def test_starts_with_a_32_character_key(tmp_path, tiny_pkg):
    config = tiny_config(tmp_path, tiny_pkg).model_copy(update={"api_key": SecretStr("k" * 32)})
    assert create_app(config).title == "ASN lookup API"


# --- public routes and docs ---------------------------------------------------------------


def test_routes_tsv_lists_the_public_split():
    assert asn_routes() == ["/api/", "/api/health", "/api/docs", "/api/redoc", "/api/openapi.json", "/api/v1/asn/{asn}"]


@pytest.mark.parametrize("path", asn_routes())
async def test_every_spec_route_is_served(app, path):
    async with client_for(app) as client:
        response = await client.get(concrete(path), headers=KEY)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("path", [p for p in asn_routes() if not p.startswith("/api/v1/")])
async def test_public_routes_need_no_key(app, path):
    async with client_for(app) as client:
        response = await client.get(path)
    assert response.status_code == 200


async def test_docs_load_the_specification_from_below_the_root_path(app):
    async with client_for(app, root_path="/asn") as client:
        for page in ("/asn/api/docs", "/asn/api/redoc"):
            html = (await client.get(page)).text
            referenced = re.findall(r"""["'](/[^"']*openapi\.json)["']""", html)
            assert referenced == ["/asn/api/openapi.json"], page
        spec = (await client.get("/asn/api/openapi.json")).json()
        root = (await client.get("/asn/api/")).json()
    assert spec["servers"] == [{"url": "/asn"}]
    assert set(spec["paths"]) >= {"/api/v1/asn/{asn}", "/api/v1/ip/{address}", "/api/v1/search", "/api/health"}
    assert spec["components"]["securitySchemes"]["APIKeyHeader"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "the master key (API_SECRET_KEY)",
    }
    assert root["docs"] == "/asn/api/docs" and root["openapi"] == "/asn/api/openapi.json"


# --- authentication -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-API-Key": ""},
        {"X-API-Key": "wrong"},
        {"X-API-Key": API_KEY + "x"},
        {"X-API-Key": API_KEY[:-1]},
        {"x-api-key": API_KEY.upper()},
    ],
)
@pytest.mark.parametrize("path", ["/api/v1/asn/15169", "/api/v1/ip/8.8.8.8", "/api/v1/search?q=google"])
async def test_protected_routes_reject_missing_or_wrong_keys(app, asn_log, headers, path):
    async with client_for(app, ip="198.51.100.23") as client:
        response = await client.get(path, headers={**headers, "X-Request-ID": "client-chosen", "X-Trace-ID": "t"})
    assert response.status_code == 403
    body = response.json()
    assert set(body) == {"error", "code", "request_id"} and body["code"] == "HTTP_403"
    assert REQUEST_ID.match(body["request_id"]), body["request_id"]
    assert response.headers["x-request-id"] == body["request_id"]
    failures = [r for r in asn_log.records if r.getMessage() == "authentication failed"]
    assert failures and failures[-1].client_ip == "198.51.100.23"
    for record in asn_log.records:
        formatted = asn_log.format(record)
        assert API_KEY not in formatted and API_KEY.upper() not in formatted


async def test_key_header_name_is_case_insensitive(app):
    async with client_for(app) as client:
        assert (await client.get("/api/v1/asn/15169", headers={"x-api-key": API_KEY})).status_code == 200


# --- lookups ------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["15169", "AS15169", "as15169", "0.15169"])
async def test_asn_lookup_forms(app, form):
    async with client_for(app) as client:
        response = await client.get(f"/api/v1/asn/{form}", headers=KEY)
    assert response.status_code == 200
    body = schemas.AsnRecord.model_validate(response.json())
    assert (body.asn, body.name, body.organisation, body.country) == (15169, "GOOGLE", "Google Inc.", "US")
    assert body.prefixes.v4 == ["8.8.0.0/16", "8.8.4.0/24", "8.8.8.0/24"]
    assert body.prefixes.v6 == ["2001:4860::/32", "2001:4860:4860::/48"]
    assert body.prefix_counts.model_dump() == {"v4": 3, "v6": 2}
    assert body.num_ips == 65536 and body.addresses.v6 == 2**96
    assert body.dataset.date == "2020-01-02" and body.dataset.live is False
    assert "2020-01-02" in body.dataset.notice


@pytest.mark.parametrize("form", ["-1", "99999999999", "abc", "0", "AS", "4294967296", "1.2.3"])
async def test_malformed_asn_is_400(app, form):
    async with client_for(app) as client:
        response = await client.get(f"/api/v1/asn/{form}", headers=KEY)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "HTTP_400" and REQUEST_ID.match(body["request_id"]) and body["error"]


async def test_unknown_asn_is_404_in_the_error_shape(app):
    async with client_for(app) as client:
        response = await client.get("/api/v1/asn/AS4242", headers=KEY)
    assert response.status_code == 404
    assert response.json()["code"] == "HTTP_404" and "AS4242" in response.json()["error"]


async def test_etag_revalidation(app):
    async with client_for(app) as client:
        first = await client.get("/api/v1/asn/13335", headers=KEY)
        again = await client.get("/api/v1/asn/13335", headers={**KEY, "If-None-Match": first.headers["etag"]})
        other = await client.get("/api/v1/asn/15169", headers={**KEY, "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    async with client_for(app) as client:
        for header in ("W/" + first.headers["etag"], '"other", ' + first.headers["etag"], "*"):
            cond = await client.get("/api/v1/asn/13335", headers={**KEY, "If-None-Match": header})
            assert cond.status_code == 304
    assert other.status_code == 200 and other.headers["etag"] != first.headers["etag"]
    assert "x-ratelimit-remaining" in again.headers


@pytest.mark.parametrize(
    "header, status",
    [
        ('"old, *, tag"', 200),  # one entity tag with commas inside its quotes, not a `*`
        ('"a,b", {etag}', 304),  # a quoted comma does not hide the next tag
        ("W/{etag}", 304),  # weak comparison ignores W/
        ('"a,b", W/{etag}', 304),
        ("*", 304),
        ('W/"other"', 200),
    ],
)
async def test_if_none_match_is_parsed_as_entity_tags(app, header, status):
    async with client_for(app) as client:
        etag = (await client.get("/api/v1/asn/13335", headers=KEY)).headers["etag"]
        cond = await client.get("/api/v1/asn/13335", headers={**KEY, "If-None-Match": header.format(etag=etag)})
    assert cond.status_code == status


@pytest.mark.parametrize(
    "address, prefix, asn",
    [
        ("8.8.8.8", "8.8.8.0/24", 15169),
        ("8.8.1.1", "8.8.0.0/16", 15169),
        ("8.100.0.1", "8.0.0.0/9", 3333),
        ("::ffff:1.1.1.1", "1.1.1.0/24", 13335),
        ("2001:4860:4860::8888", "2001:4860:4860::/48", 15169),
        ("2606:4700:0:0:0:0:0:1111", "2606:4700::/32", 13335),
        ("10.1.2.3", "10.1.0.0/16", 64999),
    ],
)
async def test_ip_lookup(app, address, prefix, asn):
    async with client_for(app) as client:
        response = await client.get(f"/api/v1/ip/{address}", headers=KEY)
    assert response.status_code == 200, response.text
    body = schemas.IpRecord.model_validate(response.json())
    assert (body.prefix, body.asn) == (prefix, asn)


async def test_ip_lookup_errors(app):
    async with client_for(app) as client:
        missing = await client.get("/api/v1/ip/9.9.9.9", headers=KEY)
        malformed = await client.get("/api/v1/ip/999.1.1.1", headers=KEY)
    assert missing.status_code == 404 and missing.json()["code"] == "HTTP_404"
    assert malformed.status_code == 400 and malformed.json()["code"] == "HTTP_400"


async def test_search(app):
    async with client_for(app) as client:
        found = await client.get("/api/v1/search", params={"q": "Google", "country": "us"}, headers=KEY)
        none = await client.get("/api/v1/search", params={"q": "google", "country": "de"}, headers=KEY)
        short = await client.get("/api/v1/search", params={"q": "g"}, headers=KEY)
        bad_country = await client.get("/api/v1/search", params={"q": "google", "country": "USA"}, headers=KEY)
        too_many = await client.get("/api/v1/search", params={"q": "google", "limit": 1000}, headers=KEY)
    body = schemas.SearchResult.model_validate(found.json())
    assert [r.asn for r in body.results] == [15169] and body.country == "US"
    assert none.json()["count"] == 0
    for response in (short, bad_country, too_many):
        assert response.status_code == 422
        assert response.json()["code"] == "HTTP_422" and response.json()["details"]


async def test_unknown_route_and_method_use_the_error_shape(app):
    async with client_for(app) as client:
        missing = await client.get("/api/v2/nothing")
        wrong_method = await client.post("/api/v1/asn/15169", headers=KEY)
    assert missing.status_code == 404 and missing.json()["code"] == "HTTP_404"
    assert wrong_method.status_code == 405 and wrong_method.json()["code"] == "HTTP_405"


async def test_unexpected_error_is_500_in_the_error_shape(app, monkeypatch, asn_log):
    def boom(asn):
        raise RuntimeError("database exploded")

    monkeypatch.setattr(app.state.component.dataset.store, "get_asn", boom)
    async with client_for(app) as client:
        response = await client.get("/api/v1/asn/15169", headers=KEY)
    assert response.status_code == 500
    assert response.json()["code"] == "INTERNAL_ERROR" and "exploded" not in response.text
    assert response.headers["x-ratelimit-limit"] == "100"


# --- health -------------------------------------------------------------------------------


async def test_health_reports_each_dependency(app):
    async with client_for(app) as client:
        response = await client.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "healthy"
    assert body["dependencies"]["dataset"]["rows"]["asn"] == 7
    assert body["dependencies"]["dataset"]["rows"]["prefix"] == 13
    assert body["dependencies"]["rate_limit_actor"] == {"status": "up", "backend": "actor"}


async def test_health_is_503_when_the_dataset_is_missing(tmp_path):
    config = AsnConfig(
        data_dir=tmp_path / "d", pkg_dir=tmp_path / "empty", fetch_on_start=False, api_key=SecretStr(API_KEY)
    )
    app = create_app(config)
    assert app.state.component.dataset.wait(30)
    async with client_for(app) as client:
        health = await client.get("/api/health")
        lookup = await client.get("/api/v1/asn/15169", headers=KEY)
    assert health.status_code == 503
    dataset = health.json()["dependencies"]["dataset"]
    assert dataset["status"] == "down" and "asnames.json" in dataset["error"]
    assert health.json()["dependencies"]["rate_limit_actor"]["status"] == "up"  # checked independently
    assert lookup.status_code == 503 and lookup.json()["code"] == "HTTP_503"


# --- rate limiting (actor stand-in) -------------------------------------------------------


async def test_every_request_counts_and_the_limit_is_exact(make_app):
    app = make_app(limit=5)
    paths = ["/api/health", "/api/v1/asn/15169", "/api/docs", "/api/v1/asn/abc", "/api/nothing"]
    async with client_for(app, ip="192.0.2.50") as client:
        responses = [await client.get(p) for p in paths]  # no key: 403s count too
        started = time.time()
        limited = await client.get("/api/v1/asn/15169", headers=KEY)
        spoofed = await client.get("/api/", headers={"X-Forwarded-For": "192.0.2.99"})
    assert [r.status_code for r in responses] == [200, 403, 200, 403, 404]
    assert [int(r.headers["x-ratelimit-remaining"]) for r in responses] == [4, 3, 2, 1, 0]
    assert all(r.headers["x-ratelimit-limit"] == "5" for r in responses)
    assert all("retry-after" not in r.headers for r in responses)
    assert limited.status_code == 429
    body = limited.json()
    assert body["code"] == "RATE_LIMITED" and REQUEST_ID.match(body["request_id"])
    reset = int(limited.headers["x-ratelimit-reset"])
    retry_after = int(limited.headers["retry-after"])
    assert limited.headers["x-ratelimit-remaining"] == "0"
    assert 55 <= retry_after <= 60  # the oldest hit was moments ago; a 60 s window
    assert abs(reset - (started + retry_after)) <= 2
    assert spoofed.status_code == 429  # the socket peer decides, not a client-written header


async def test_x_forwarded_for_cannot_choose_the_client(make_app):
    app = make_app(limit=2)
    async with client_for(app, ip="192.0.2.60") as client:
        codes = [
            (
                await client.get("/api/", headers={"X-Forwarded-For": f"10.0.0.{i}", "X-Real-IP": f"10.1.0.{i}"})
            ).status_code
            for i in range(4)
        ]
    assert codes == [200, 200, 429, 429]


async def test_clients_are_limited_separately(make_app):
    app = make_app(limit=1)
    async with client_for(app, ip="192.0.2.70") as first, client_for(app, ip="192.0.2.71") as second:
        assert (await first.get("/api/")).status_code == 200
        assert (await first.get("/api/")).status_code == 429
        assert (await second.get("/api/")).status_code == 200


async def test_trusted_proxy_forwards_the_client_address(tmp_path, tiny_pkg):
    config = tiny_config(tmp_path, tiny_pkg, limit=1).model_copy(update={"trusted_proxies": ["10.9.0.0/16"]})
    app = create_app(config)
    assert app.state.component.dataset.wait(30)
    async with client_for(app, ip="10.9.0.5") as proxy:
        a = await proxy.get("/api/", headers={"X-Forwarded-For": "spoofed, 198.51.100.1"})
        b = await proxy.get("/api/", headers={"X-Forwarded-For": "198.51.100.2"})
        a_again = await proxy.get("/api/", headers={"X-Forwarded-For": "198.51.100.1"})
    assert (a.status_code, b.status_code, a_again.status_code) == (200, 200, 429)


async def test_two_replicas_share_one_window(make_app):
    """Two app instances (two replicas) in one process share the named actor stand-in."""
    first, second = make_app(limit=4), make_app(limit=4)
    async with client_for(first, ip="192.0.2.80") as a, client_for(second, ip="192.0.2.80") as b:
        codes = [(await (a if i % 2 else b).get("/api/")).status_code for i in range(6)]
    assert codes == [200, 200, 200, 200, 429, 429]


async def _fail(*args):
    raise RuntimeError("actor unavailable")


class _FailingMethod:
    def remote(self, *args):
        return asyncio.ensure_future(_fail())


class DeadActor:
    """A rate-limit handle whose every call fails, like an actor whose node is gone."""

    hit_many = _FailingMethod()
    size = _FailingMethod()


@pytest.mark.parametrize("policy, status", [("open", 200), ("closed", 503)])
async def test_actor_store_failure_follows_the_policy(tmp_path, tiny_pkg, policy, status):
    config = tiny_config(tmp_path, tiny_pkg, on_store_error=policy)
    app = create_app(config, AsnState(config, start_dataset(config), build_limiter(config, DeadActor())))
    assert app.state.component.dataset.wait(30)
    async with client_for(app) as client:
        lookup = await client.get("/api/v1/asn/15169", headers=KEY)
        health = await client.get("/api/health")
    assert lookup.status_code == status
    assert health.status_code == 503
    assert health.json()["dependencies"]["rate_limit_actor"]["status"] == "down"
    if policy == "open":
        assert lookup.headers["x-ratelimit-remaining"] == "100"
    else:
        assert lookup.json()["code"] == "HTTP_503" and lookup.headers["retry-after"] == "1"


async def test_country_prefixes_lists_what_ases_of_that_country_announce(app):
    async with client_for(app) as client:
        us = await client.get("/api/v1/country/us/prefixes", headers=KEY)
        us4 = await client.get("/api/v1/country/US/prefixes", params={"family": 4}, headers=KEY)
        nl6 = await client.get("/api/v1/country/NL/prefixes", params={"family": 6}, headers=KEY)
        none = await client.get("/api/v1/country/FR/prefixes", headers=KEY)
        bad = await client.get("/api/v1/country/USA/prefixes", headers=KEY)
        bad_family = await client.get("/api/v1/country/US/prefixes", params={"family": 5}, headers=KEY)
        unauthenticated = await client.get("/api/v1/country/US/prefixes")
    body = schemas.CountryPrefixes.model_validate(us.json())
    assert body.country == "US" and body.family is None
    assert body.prefixes == [
        "1.0.0.0/24",
        "1.1.1.0/24",
        "8.8.0.0/16",
        "8.8.4.0/24",
        "8.8.8.0/24",
        "2001:4860::/32",
        "2001:4860:4860::/48",
        "2606:4700::/32",
    ]
    assert body.count == len(body.prefixes)
    assert us4.json()["prefixes"] == body.prefixes[:5]
    assert nl6.json()["prefixes"] == ["2001:67c:2e8::/48"]
    assert none.json() == {**none.json(), "count": 0, "prefixes": []}
    assert bad.status_code == 422 and bad_family.status_code == 400
    assert unauthenticated.status_code == 403


@pytest.mark.parametrize("stack", [servestack.direct, servestack.through_proxy])
async def test_one_request_id_header_on_both_paths(app, stack):
    """Serve's proxy adds an id of its own: the app's `<unix seconds>-<8 hex>` is the one kept."""
    async with servestack.client(stack(app)) as client:
        refused = await client.get("/api/v1/asn/15169", headers={"X-Request-ID": "client-chosen"})
        found = await client.get("/api/v1/asn/15169", headers=KEY)
    assert refused.status_code == 403 and found.status_code == 200
    assert servestack.request_ids(refused) == [refused.json()["request_id"]]
    (rid,) = servestack.request_ids(found)
    assert REQUEST_ID.match(rid)
