"""The HTTP surface in-process: every route, header, status and error of spec §B/§7."""

from __future__ import annotations

import csv
import hashlib

import httpx
import pytest

from deployments.ignore_gen.app import create_app
from deployments.ignore_gen.config import IgnoreGenConfig, Limits, load
from tests.conftest import DATA, ROOT
from tests.rayfleet import servestack

TREE = ["pyproject.toml", "src/pkg/__init__.py", "web/package.json"]


def client_for(config: IgnoreGenConfig | None = None, **kw) -> httpx.AsyncClient:
    app = create_app(config or load(ROOT / "config" / "ignore_gen.yaml"))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app, **kw), base_url="http://test")


@pytest.fixture
async def client():
    async with client_for() as c:
        yield c


def spec_routes() -> list[tuple[str, str]]:
    with open(DATA / "routes.tsv") as handle:
        rows = [r for r in csv.reader(handle, delimiter="\t") if r and not r[0].startswith("#")]
    return [(m, p) for c, m, p in rows if c == "ignore_gen"]


async def test_every_spec_route_is_served(client: httpx.AsyncClient) -> None:
    routes = spec_routes()
    assert len(routes) == 4
    for method, path in routes:
        body = {"features": ["python"]} if method == "POST" else None
        if path == "/diff_against":
            body["existing"] = ""
        r = await client.request(method, path, json=body)
        assert r.status_code == 200, (method, path, r.text)


async def test_generate_fields_and_headers(client: httpx.AsyncClient) -> None:
    r = await client.post("/generate", json={"tree": TREE})
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert set(body) >= {"content", "output_hash", "rules_table_version", "core_version", "rules"}
    assert body["output_hash"] == "sha256:" + hashlib.sha256(body["content"].encode()).hexdigest()
    assert r.headers["etag"] == f'"{body["output_hash"]}"'
    assert r.headers["x-core-version"] == body["core_version"]
    assert r.headers["x-rules-version"] == body["rules_table_version"]
    assert body["rules_table_version"].startswith("sha256:") and len(body["rules_table_version"]) == 19
    for rule in body["rules"]:
        assert set(rule) == {"pattern", "source", "feature"}
        assert rule["source"] in ("template", "mined", "user_extra")
    assert {f["name"] for f in body["features"]} == {"common", "node", "python", "secrets"}
    v = (await client.get("/version")).json()
    assert v["core_version"] == body["core_version"] and v["rules_table_version"] == body["rules_table_version"]


async def test_same_inputs_same_bytes_whatever_the_order(client: httpx.AsyncClient) -> None:
    a = await client.post("/generate", json={"tree": TREE, "extras": ["b", "a"]})
    b = await client.post("/generate", json={"tree": list(reversed(TREE)), "extras": ["a", "b"]})
    assert a.json()["content"].encode() == b.json()["content"].encode()
    assert a.headers["etag"] == b.headers["etag"]


@pytest.mark.parametrize("form", ["{tag}", "W/{tag}", '"sha256:0000", {tag}', 'W/"x",W/{tag}', "*"])
async def test_if_none_match_forms_give_304(client: httpx.AsyncClient, form: str) -> None:
    first = await client.post("/generate", json={"tree": TREE})
    tag = first.headers["etag"]
    r = await client.post("/generate", json={"tree": TREE}, headers={"If-None-Match": form.format(tag=tag)})
    assert r.status_code == 304
    assert r.content == b""
    assert r.headers["etag"] == tag
    assert r.headers["x-core-version"] and r.headers["x-rules-version"]


async def test_if_none_match_mismatch_or_changed_input_gives_200(client: httpx.AsyncClient) -> None:
    tag = (await client.post("/generate", json={"tree": TREE})).headers["etag"]
    r = await client.post("/generate", json={"tree": [*TREE, "go.mod"]}, headers={"If-None-Match": tag})
    assert r.status_code == 200 and r.headers["etag"] != tag
    r = await client.post("/generate", json={"tree": TREE}, headers={"If-None-Match": '"sha256:nope"'})
    assert r.status_code == 200


async def test_400_when_tree_and_features_missing(client: httpx.AsyncClient) -> None:
    for path, body in (
        ("/generate", {}),
        ("/generate", {"include_comments": False}),
        ("/diff_against", {"existing": "x\n"}),
        ("/generate", {"tree": None, "features": None}),
    ):
        r = await client.post(path, json=body)
        assert r.status_code == 400
        assert isinstance(r.json()["detail"], str) and "tree" in r.json()["detail"]


async def test_404_unknown_feature(client: httpx.AsyncClient) -> None:
    for path, extra in (("/generate", {}), ("/diff_against", {"existing": ""})):
        r = await client.post(path, json={"features": ["python", "cobol"], **extra})
        assert r.status_code == 404
        assert r.json() == {"detail": "unknown feature(s) with no template: cobol; GET /features lists the known ones"}


@pytest.mark.parametrize(
    "body",
    [
        {"features": ["Python"]},
        {"features": ["py thon"]},
        {"features": ["../etc"]},
        {"features": [""]},
        {"features": ["x" * 65]},
        {"features": "python"},
        {"tree": "a.py"},
        {"tree": [1, 2]},
        {"features": ["python"], "extras": ["a\nb"]},
        {"features": ["python"], "extras": ["a\r"]},
        {"features": ["python"], "extras": [""]},
        {"features": ["python"], "extras": [" padded"]},
        {"features": ["python"], "extras": ["# comment"]},
        {"features": ["python"], "include_comments": "maybe"},
        {"features": ["python"], "unknown_field": 1},
    ],
)
async def test_422_validation_detail_is_a_string(client: httpx.AsyncClient, body: dict) -> None:
    r = await client.post("/generate", json=body)
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert isinstance(detail, str) and detail.startswith("body")


async def test_422_for_malformed_json_and_diff_without_existing(client: httpx.AsyncClient) -> None:
    r = await client.post("/generate", content=b'{"tree": [', headers={"content-type": "application/json"})
    assert r.status_code == 422 and isinstance(r.json()["detail"], str)
    r = await client.post("/diff_against", json={"features": ["python"]})
    assert r.status_code == 422 and "existing" in r.json()["detail"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/generate", '{"tree": ["tests/\\ud800/node_modules/m.js", "package.json"]}'),
        ("/generate", '{"features": ["python"], "extras": ["x\\udcff"]}'),
        ("/diff_against", '{"features": ["python"], "existing": "a\\ud800"}'),
    ],
)
async def test_a_lone_surrogate_is_422_not_500(client: httpx.AsyncClient, path: str, body: str) -> None:
    """JSON may escape a lone surrogate (`\\ud800`), which no UTF-8 file can hold: a kept
    negation or an extra carrying one made the output's hash fail (500)."""
    r = await client.post(path, content=body.encode(), headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert "surrogate" in r.json()["detail"]


async def test_422_messages_are_readable(client: httpx.AsyncClient) -> None:
    r = await client.post("/generate", json={"features": ["python"], "extras": ["a\nb"]})
    assert r.json()["detail"] == "body.extras[0]: an extra pattern must be a single line"
    r = await client.post("/generate", json={"features": ["Py"]})
    assert "'Py' is not a feature name" in r.json()["detail"]


async def test_500_is_logged_and_shaped(monkeypatch) -> None:
    from deployments.ignore_gen.engine import Engine

    def boom(*_a, **_k):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Engine, "generate", boom)
    async with client_for(raise_app_exceptions=False) as c:
        r = await c.post("/generate", json={"features": ["python"]})
    assert r.status_code == 500
    assert isinstance(r.json()["detail"], str) and "disk on fire" not in r.json()["detail"]


async def test_limits_from_config_apply() -> None:
    config = IgnoreGenConfig(
        limits=Limits(
            max_tree_paths=3,
            max_extras=1,
            max_pattern_length=5,
            max_existing_bytes=10,
            max_features=2,
            max_path_length=20,
        )
    )
    async with client_for(config) as c:
        cases = [
            ({"tree": ["a", "b", "c", "d"]}, 413),
            ({"tree": ["x" * 21]}, 413),
            ({"features": ["go", "rust", "python"]}, 413),
            ({"features": ["go"], "extras": ["a", "b"]}, 413),
            ({"features": ["go"], "extras": ["abcdef"]}, 422),
        ]
        for body, status in cases:
            r = await c.post("/generate", json=body)
            assert r.status_code == status, body
            assert isinstance(r.json()["detail"], str)
        r = await c.post("/diff_against", json={"features": ["go"], "existing": "x" * 11})
        assert r.status_code == 413
        assert (await c.post("/generate", json={"tree": ["go.mod"]})).status_code == 200


async def test_diff_against(client: httpx.AsyncClient) -> None:
    gen = (await client.post("/generate", json={"features": ["go"], "extras": ["tmp/"]})).json()
    existing = gen["content"] + "my-local-file\n"
    r = await client.post("/diff_against", json={"features": ["go"], "extras": ["tmp/"], "existing": existing})
    assert r.json() == {"added": [], "removed": ["my-local-file"], "covered": []}
    r = await client.post("/diff_against", json={"features": ["go"], "existing": "*.test\n# note\n\nold/\n"})
    body = r.json()
    assert body["removed"] == ["old/"]
    assert "*.test" not in body["added"] and ".env" in body["added"]
    assert body["added"] == sorted(body["added"])


async def test_healthz_features_and_openapi(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    features = (await client.get("/features")).json()["features"]
    names = [f["name"] for f in features]
    assert names == sorted(names) and len(names) >= 30
    assert {f["name"] for f in features if f["always"]} == {"common", "secrets"}
    doc = (await client.get("/openapi.json")).json()
    description = doc["info"]["description"]
    assert "`added` = generated − existing" in description and "`removed` = existing − generated" in description
    assert {"/healthz", "/version", "/generate", "/diff_against"} <= set(doc["paths"])


async def test_unknown_route_and_method_have_string_detail(client: httpx.AsyncClient) -> None:
    r = await client.get("/nope")
    assert r.status_code == 404 and r.json() == {"detail": "Not Found"}
    r = await client.get("/generate")
    assert r.status_code == 405 and isinstance(r.json()["detail"], str)


async def test_metrics_count_requests(client: httpx.AsyncClient) -> None:
    await client.post("/generate", json={})
    await client.get("/healthz")
    text = (await client.get("/metrics")).text
    assert 'ignore_gen_requests_total{method="POST",route="/generate",status="400"}' in text
    assert 'route="/healthz",status="200"' in text


@pytest.mark.parametrize("stack", [servestack.direct, servestack.through_proxy])
async def test_one_request_id_header_on_both_paths(stack) -> None:
    app = create_app(load(ROOT / "config" / "ignore_gen.yaml"))
    async with servestack.client(stack(app)) as c:
        answers = [await c.post("/generate", json={"tree": TREE}), await c.post("/generate", json={})]
    assert [len(servestack.request_ids(r)) for r in answers] == [1, 1]
