"""Tier 1: `POST /api/v1/ip/bulk` on the tiny dataset, with the actor stand-in as the limiter.

Each address costs one rate-limit hit, all or none, so batching never stretches a
client's limit; malformed and oversized bodies are refused in the error shape.
"""

from __future__ import annotations

import json

import pytest

from deployments.asn import bulk, schemas
from tests.deployments.asn.conftest import API_KEY, client_for
from tests.deployments.asn.test_asn_app import make_app  # noqa: F401  (fixture)

KEY = {"X-API-Key": API_KEY}


@pytest.fixture
def app(make_app):  # noqa: F811
    return make_app(limit=10_000)


async def test_each_address_is_answered_in_order_like_the_single_lookup(app):
    addresses = ["8.8.8.8", "9.9.9.9", "2001:4860:4860::8888", "::ffff:1.1.1.1", "8.8.4.4", "10.1.2.3"]
    async with client_for(app) as client:
        response = await client.post("/api/v1/ip/bulk", json={"addresses": addresses}, headers=KEY)
        singles = [await client.get(f"/api/v1/ip/{a}", headers=KEY) for a in addresses]
    assert response.status_code == 200, response.text
    body = schemas.BulkResult.model_validate(response.json())
    assert (body.count, body.found) == (6, 5)
    assert [r.ip for r in body.results] == [
        "8.8.8.8",
        "9.9.9.9",
        "2001:4860:4860::8888",
        "1.1.1.1",
        "8.8.4.4",
        "10.1.2.3",
    ]
    for item, single in zip(body.results, singles, strict=True):
        if single.status_code == 404:
            assert item.prefix is None and item.asn is None
        else:
            assert (item.prefix, item.asn) == (single.json()["prefix"], single.json()["asn"])
    assert sorted(body.asns) == ["13335", "15169", "64999"]
    assert body.asns["15169"].name == "GOOGLE" and body.asns["15169"].country == "US"
    assert body.asns["64999"].name is None  # announces prefixes, has no name in the list
    assert body.dataset.date == "2020-01-02" and body.dataset.age_days is not None and body.dataset.age_days > 0


async def test_every_address_counts_against_the_limit(make_app):  # noqa: F811
    app = make_app(limit=10)
    async with client_for(app, ip="192.0.2.70") as client:
        four = await client.post("/api/v1/ip/bulk", json={"addresses": ["8.8.8.8"] * 4}, headers=KEY)
        seven = await client.post("/api/v1/ip/bulk", json={"addresses": ["8.8.8.8"] * 7}, headers=KEY)
        single = await client.get("/api/v1/ip/8.8.8.8", headers=KEY)
        five = await client.post("/api/v1/ip/bulk", json={"addresses": ["1.1.1.1"] * 5}, headers=KEY)
        after = await client.get("/api/v1/ip/8.8.8.8", headers=KEY)
    assert four.status_code == 200 and four.headers["x-ratelimit-remaining"] == "6"
    assert seven.status_code == 429 and seven.json()["code"] == "RATE_LIMITED"
    assert 55 <= int(seven.headers["retry-after"]) <= 60
    assert single.status_code == 200 and single.headers["x-ratelimit-remaining"] == "5"  # the 7 were not counted
    assert five.status_code == 200 and five.headers["x-ratelimit-remaining"] == "0"
    assert after.status_code == 429


async def test_a_batch_larger_than_the_whole_limit_is_413_not_a_retry_loop(make_app):  # noqa: F811
    app = make_app(limit=5)
    async with client_for(app, ip="192.0.2.71") as client:
        big = await client.post("/api/v1/ip/bulk", json={"addresses": ["8.8.8.8"] * 6}, headers=KEY)
        then = await client.get("/api/v1/ip/8.8.8.8", headers=KEY)
    assert big.status_code == 413 and big.json()["code"] == "HTTP_413" and "smaller batches" in big.json()["error"]
    assert then.status_code == 200 and then.headers["x-ratelimit-remaining"] == "4"


async def test_more_than_ten_thousand_addresses_is_413(app):
    async with client_for(app) as client:
        response = await client.post(
            "/api/v1/ip/bulk", json={"addresses": ["8.8.8.8"] * (bulk.MAX_ADDRESSES + 1)}, headers=KEY
        )
    assert response.status_code == 413
    assert response.json()["code"] == "HTTP_413" and "10000" in response.json()["error"]
    assert response.json()["request_id"] == response.headers["x-request-id"]


async def test_a_body_over_one_mebibyte_is_413_and_costs_one_hit(make_app):  # noqa: F811
    app = make_app(limit=10)
    raw = json.dumps({"addresses": ["8.8.8.8"] * 100, "pad": "x" * bulk.MAX_BODY_BYTES}).encode()
    async with client_for(app, ip="192.0.2.72") as client:
        response = await client.post(
            "/api/v1/ip/bulk", content=raw, headers={**KEY, "content-type": "application/json"}
        )
    assert response.status_code == 413 and response.json()["code"] == "HTTP_413"
    assert response.headers["x-ratelimit-remaining"] == "9"


@pytest.mark.parametrize(
    "raw, fragment",
    [
        (b"not json", "not JSON"),
        (b'["8.8.8.8"]', "expected a JSON object"),
        (b'{"addresses": "8.8.8.8"}', "expected a JSON object"),
        (b'{"addresses": []}', "empty"),
        (b'{"addresses": ["8.8.8.8"], "extra": 1}', "unknown fields"),
        (b'{"addresses": ["8.8.8.8", 7]}', "[1] is not a string"),
        (b'{"addresses": ["8.8.8.8", "999.1.1.1", "fe80::1%eth0"]}', "[1] '999.1.1.1', [2] 'fe80::1%eth0'"),
        (b'{"addresses": ["8.8.8.8", "1.2.3.4\\u0000"]}', "[1] '1.2.3.4\\x00'"),  # inet_pton: ValueError, not OSError
    ],
)
async def test_malformed_bodies_are_422_in_the_error_shape(app, raw, fragment):
    async with client_for(app) as client:
        response = await client.post(
            "/api/v1/ip/bulk", content=raw, headers={**KEY, "content-type": "application/json"}
        )
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "HTTP_422" and fragment in body["error"]


async def test_bulk_needs_the_key_and_still_counts_each_address(make_app):  # noqa: F811
    app = make_app(limit=10)
    async with client_for(app, ip="192.0.2.73") as client:
        denied = await client.post("/api/v1/ip/bulk", json={"addresses": ["8.8.8.8"] * 3})
    assert denied.status_code == 403 and denied.headers["x-ratelimit-remaining"] == "7"


async def test_health_and_every_answer_carry_the_dataset_date(app):
    async with client_for(app) as client:
        health = (await client.get("/api/health")).json()
        info = (await client.get("/api/")).json()
        asn = (await client.get("/api/v1/asn/15169", headers=KEY)).json()
        search = (await client.get("/api/v1/search", params={"q": "google"}, headers=KEY)).json()
    assert health["dataset_date"] == "2020-01-02" and health["dataset_age_days"] >= 2000
    for body in (info, asn, search):
        assert body["dataset"]["date"] == "2020-01-02"
        assert body["dataset"]["age_days"] == health["dataset_age_days"]
