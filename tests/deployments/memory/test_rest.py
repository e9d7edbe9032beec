"""The REST server: in-process (ASGI) for every route and error, and as a real `mem serve` process."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from deployments.memory.config import load_settings
from deployments.memory.rest import MAX_BODY_BYTES, create_app
from tests.deployments.memory.conftest import MEM, REPO

TOKEN = "t0k3n-for-tests"


@pytest.fixture
async def client(tmp_path) -> Iterator[httpx.AsyncClient]:
    settings = load_settings({"MEM_DB": str(tmp_path / "db" / "m.db")})
    app = create_app(settings, TOKEN, "9.9.9")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8080", headers={"X-MEM-Token": TOKEN}
    ) as c:
        yield c


async def test_health_is_open(client):
    r = await client.get("/health", headers={"X-MEM-Token": ""})
    assert r.status_code == 200 and r.json() == {"status": "ok", "version": "9.9.9"}


@pytest.mark.parametrize(
    "method,path",
    [
        ("GET", "/memories"),
        ("GET", "/memories/x"),
        ("POST", "/memories"),
        ("PUT", "/memories/x"),
        ("DELETE", "/memories/x"),
        ("GET", "/nope"),
    ],
)
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-MEM-Token": "wrong"},
        {"Authorization": "Bearer wrong"},
        {"Authorization": f"Basic {TOKEN}"},
        {"X-MEM-Token": TOKEN[:-1]},
    ],
)
async def test_token_required(client, method, path, headers):
    client.headers.pop("X-MEM-Token")
    r = await client.request(method, path, headers=headers, json={"key": "x", "value": "y"})
    assert r.status_code == 401
    assert r.json()["code"] == "unauthorized" and r.headers["content-type"] == "application/json"
    assert r.headers["www-authenticate"] == "Bearer"


def test_server_module_never_imports_ray():
    """`mem serve` starts fast: the platform's constant-time compare comes without Ray."""
    code = "import sys, deployments.memory.rest; sys.exit(1 if 'ray' in sys.modules else 0)"
    proc = subprocess.run([MEM[0], "-c", code], env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True)
    assert proc.returncode == 0, proc.stderr


async def test_bearer_token_works(client):
    client.headers.pop("X-MEM-Token")
    r = await client.get("/memories", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200


async def test_create_update_get_delete_with_slash_key(client):
    r = await client.post(
        "/memories",
        json={
            "key": "docs/python/asyncio",
            "value": "Use TaskGroup",
            "tags": ["python"],
            "origin": "https://docs.python.org",
        },
    )
    assert r.status_code == 201 and r.json()["created"] is True
    assert r.json()["memory"]["origin"] == "https://docs.python.org"
    r = await client.post(
        "/memories", json={"key": "docs/python/asyncio", "value": "Use asyncio.TaskGroup", "tags": "python,async"}
    )
    assert r.status_code == 200 and r.json()["created"] is False
    r = await client.get("/memories/docs/python/asyncio")
    assert r.status_code == 200 and r.json()["value"] == "Use asyncio.TaskGroup"
    assert r.json()["tags"] == ["python", "async"]
    r = await client.get("/memories/docs%2Fpython%2Fasyncio")
    assert r.status_code == 200
    r = await client.put("/memories/a/b", json={"value": "put value"})
    assert r.status_code == 201
    r = await client.put("/memories/a/b", json={"value": "put value 2"})
    assert r.status_code == 200
    r = await client.delete("/memories/docs/python/asyncio")
    assert r.status_code == 200 and r.json()["deleted"] is True
    r = await client.delete("/memories/docs/python/asyncio")
    assert r.status_code == 404 and r.json()["code"] == "not_found"


async def test_list_and_search_with_scope(client):
    await client.post("/memories", json={"key": "a", "value": "alpha deploy notes"})
    await client.post("/memories", json={"key": "b", "value": "beta deploy notes", "scope": "work"})
    r = await client.get("/memories")
    assert [m["key"] for m in r.json()["memories"]] == ["a"] and r.json()["scope"] == "user"
    r = await client.get("/memories", params={"scope": "*"})
    assert {m["key"] for m in r.json()["memories"]} == {"a", "b"}
    r = await client.get("/memories", headers={"X-MEM-Scope": "work"})
    assert [m["key"] for m in r.json()["memories"]] == ["b"]
    r = await client.get("/memories", params={"q": "deploy", "scope": "*", "limit": "1"})
    assert r.json()["mode"] == "text" and r.json()["count"] == 1 and r.json()["match"] == "all"
    r = await client.get("/memories", params={"q": "alpha notes header", "scope": "*"})
    assert r.json()["match"] == "any" and r.json()["results"][0]["key"] == "a"
    r = await client.get("/memories/b", params={"scope": "work"})
    assert r.status_code == 200
    await client.post("/memories", json={"key": "c", "value": "pinned later"})
    r = await client.get("/memories", params={"pinned": "true"})
    assert r.json()["memories"] == []


@pytest.mark.parametrize(
    "body,message",
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b"", "JSON object"),
        (json.dumps({"value": "v"}).encode(), "'key' is required"),
        (json.dumps({"key": "k"}).encode(), "'value' is required"),
        (json.dumps({"key": "k", "value": 5}).encode(), "value must be a string"),
        (json.dumps({"key": "", "value": "v"}).encode(), "key must not be empty"),
        (json.dumps({"key": "k", "value": "v", "tags": 5}).encode(), "tags"),
        (json.dumps({"key": "k", "value": "v", "scope": "*"}).encode(), "scope"),
    ],
)
async def test_bad_bodies_are_400(client, body, message):
    r = await client.post("/memories", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["code"] == "bad_request" and message in r.json()["error"]
    assert (await client.get("/memories")).json()["count"] == 0  # nothing half-written


async def test_other_errors_are_json(client):
    r = await client.get("/nope")
    assert r.status_code == 404 and r.json()["code"] == "not_found"
    r = await client.patch("/memories/x", json={})
    assert r.status_code == 405 and r.json()["code"] == "method_not_allowed"
    r = await client.get("/memories", params={"limit": "lots"})
    assert r.status_code == 400 and "limit" in r.json()["error"]
    r = await client.put("/memories/x", json={"key": "y", "value": "v"})
    assert r.status_code == 400
    big = b'{"key": "k", "value": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}'
    r = await client.post("/memories", content=big)
    assert r.status_code == 413 and r.json()["code"] == "payload_too_large"


async def test_cors_only_for_extension_origins(client):
    for origin in ("chrome-extension://abcdefghijklmnop", "moz-extension://1234-5678"):
        pre = await client.options(
            "/memories",
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-mem-token",
            },
        )
        assert pre.status_code == 204 and pre.headers["access-control-allow-origin"] == origin
        assert "X-MEM-Token" in pre.headers["access-control-allow-headers"] and pre.headers["vary"] == "Origin"
        r = await client.get("/memories", headers={"Origin": origin})
        assert r.headers["access-control-allow-origin"] == origin
    for origin in ("https://evil.example", "http://127.0.0.1:9999", "null", "chrome-extension:/x"):
        pre = await client.options("/memories", headers={"Origin": origin, "Access-Control-Request-Method": "GET"})
        assert pre.status_code == 403 and pre.json()["code"] == "forbidden"
        r = await client.get("/memories", headers={"Origin": origin})
        assert r.status_code == 200
        assert not any(h.lower().startswith("access-control-") for h in pre.headers)
        assert not any(h.lower().startswith("access-control-") for h in r.headers)


async def test_internal_errors_are_json(tmp_path):
    settings = load_settings({"MEM_DB": str(tmp_path / "db" / "m.db")})
    app = create_app(settings, TOKEN)
    (tmp_path / "db").mkdir(exist_ok=True)
    (tmp_path / "db" / "m.db").write_bytes(b"corrupted" * 1000)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as c:
        r = await c.get("/memories", headers={"X-MEM-Token": TOKEN})
    assert r.status_code == 500 and r.headers["content-type"] == "application/json"
    assert r.json()["code"] == "storage_error"


# ----- a real `mem serve` process -------------------------------------------------------


class Served:
    def __init__(self, env: dict[str, str], *args: str, umask: int = 0o022) -> None:
        self.proc = subprocess.Popen(
            [*MEM, "serve", *args],
            env=env,
            cwd=str(REPO),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: os.umask(umask),
        )
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(self.proc.stderr.read())
        self.info = json.loads(line)
        self.url = self.info["url"]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


@pytest.fixture
def served(mem_env) -> Iterator[Served]:
    server = Served(mem_env, "0", umask=0)
    yield server
    server.stop()


def test_real_server_token_file_and_routes(served, mem_env):
    info = served.info
    assert info["url"].startswith("http://127.0.0.1:") and info["token_source"] == "generated"
    token_file = os.path.join(os.path.dirname(mem_env["MEM_DB"]), "serve-token")
    assert info["token_file"] == token_file
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600  # even with umask 0
    assert stat.S_IMODE(os.stat(os.path.dirname(token_file)).st_mode) == 0o700
    assert open(token_file).read().strip() == info["token"] and len(info["token"]) == 48
    with httpx.Client(base_url=served.url) as http:
        assert http.get("/health").json()["status"] == "ok"
        assert http.get("/memories").status_code == 401
        auth = {"Authorization": f"Bearer {info['token']}"}
        r = http.post("/memories", json={"key": "clip/1", "value": "clipped from a page"}, headers=auth)
        assert r.status_code == 201
        assert (
            http.get("/memories/clip/1", headers={"X-MEM-Token": info["token"]}).json()["value"]
            == "clipped from a page"
        )
        assert http.get("/memories/clip/1", headers={"Host": "evil.example"} | auth).status_code == 421
    served.stop()
    assert info["token"] not in served.proc.stderr.read()  # the token is shown once, on stdout only


def test_token_survives_restart_and_env_wins(mem_env):
    first = Served(mem_env, "0")
    first.stop()
    second = Served(mem_env, "0")
    second.stop()
    assert second.info["token"] == first.info["token"] and second.info["token_source"] == "file"
    env = dict(mem_env, MEM_SERVE_TOKEN="from-env-secret")
    third = Served(env, "0")
    try:
        assert third.info["token_source"] == "env" and "from-env-secret" not in json.dumps(third.info)
        with httpx.Client(base_url=third.url) as http:
            assert http.get("/memories", headers={"X-MEM-Token": "from-env-secret"}).status_code == 200
            assert http.get("/memories", headers={"X-MEM-Token": first.info["token"]}).status_code == 401
    finally:
        third.stop()


def test_port_in_use_is_an_error(served, mem_env):
    port = str(served.info["port"])
    proc = subprocess.run([*MEM, "serve", port], env=mem_env, cwd=str(REPO), capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in proc.stderr
