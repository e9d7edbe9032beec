"""Tier 3: the ignore-file generator deployed by `rayfleet up`, through Serve at /ignore."""

from __future__ import annotations

import csv
import hashlib

import httpx
import pytest

from tests.conftest import DATA
from tests.e2e.conftest import needs_app

PREFIX = "/ignore"


@pytest.fixture
def ig(cluster, http: httpx.Client) -> httpx.Client:
    needs_app(cluster, "ignore_gen")
    return http


def _routes() -> list[tuple[str, str]]:
    with open(DATA / "routes.tsv", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh, delimiter="\t") if r and not r[0].startswith("#")]
    return [(m, p) for c, m, p in rows[1:] if c == "ignore_gen"]


def test_every_route_is_served(ig: httpx.Client) -> None:
    routes = _routes()
    assert len(routes) == 4
    for method, path in routes:
        body = None
        if method == "POST":
            body = {"features": ["go"], **({"existing": ""} if path == "/diff_against" else {})}
        r = ig.request(method, PREFIX + path, json=body)
        assert r.status_code not in (404, 405), (method, path)
        assert r.status_code == 200, (method, path, r.text)


def test_generate_etag_and_304(ig: httpx.Client) -> None:
    tree = ["Cargo.toml", "src\\main.rs", "./.github/workflows/ci.yml"]
    r = ig.post(PREFIX + "/generate", json={"tree": tree})
    assert r.status_code == 200
    body = r.json()
    assert body["output_hash"] == "sha256:" + hashlib.sha256(body["content"].encode()).hexdigest()
    assert r.headers["etag"] == f'"{body["output_hash"]}"'
    assert r.headers["x-core-version"] == body["core_version"]
    assert r.headers["x-rules-version"] == body["rules_table_version"]
    assert "target/" in body["content"] and ".env" in body["content"]
    again = ig.post(PREFIX + "/generate", json={"tree": list(reversed(tree))})
    assert again.json()["content"] == body["content"]
    for header in (r.headers["etag"], "W/" + r.headers["etag"], '"other", ' + r.headers["etag"], "*"):
        cond = ig.post(PREFIX + "/generate", json={"tree": tree}, headers={"If-None-Match": header})
        assert cond.status_code == 304 and cond.content == b""


def test_errors_through_serve(ig: httpx.Client) -> None:
    cases = [
        ({}, 400),
        ({"features": ["cobol"]}, 404),
        ({"features": ["Bad Name"]}, 422),
        ({"features": ["go"], "extras": ["a\nb"]}, 422),
    ]
    for body, status in cases:
        r = ig.post(PREFIX + "/generate", json=body)
        assert r.status_code == status, body
        assert isinstance(r.json()["detail"], str)


def test_version_features_and_diff(ig: httpx.Client) -> None:
    version = ig.get(PREFIX + "/version").json()
    assert version["rules_table_version"].startswith("sha256:")
    names = {f["name"] for f in ig.get(PREFIX + "/features").json()["features"]}
    assert {"python", "node", "rust", "unity", "secrets"} <= names
    diff = ig.post(PREFIX + "/diff_against", json={"features": ["rust"], "existing": "target/\nmine.txt\n"}).json()
    assert diff["removed"] == ["mine.txt"] and "target/" not in diff["added"]
    assert ig.get(PREFIX + "/docs").status_code == 200
