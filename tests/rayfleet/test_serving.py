"""Tier 1: one X-Request-ID per answer, on a replica (the direct port) and behind Serve's proxy."""

from __future__ import annotations

import pytest
from fastapi import FastAPI, Request

from rayfleet import deploy
from rayfleet.http import FirstRequestIdMiddleware, RequestIdMiddleware, request_id
from rayfleet.serving import PROXY_CALLBACK, with_request_ids
from tests.conftest import ROOT
from tests.rayfleet.servestack import client, direct, request_ids, through_proxy


def echo_app(own: bool) -> FastAPI:
    app = FastAPI()

    @app.get("/")
    async def echo(request: Request) -> dict[str, str]:
        return {"id": request_id(request)}

    if own:
        app.add_middleware(RequestIdMiddleware, generator=lambda: "own-1", trust_incoming=False)
    return app


def test_an_app_gets_one_request_id_middleware() -> None:
    def count(app: FastAPI) -> int:
        return sum(m.cls is RequestIdMiddleware for m in app.user_middleware)

    assert count(with_request_ids(echo_app(own=False))) == 1
    assert count(with_request_ids(echo_app(own=True))) == 1
    assert count(with_request_ids(with_request_ids(echo_app(own=False)))) == 1


@pytest.mark.parametrize("own", [True, False])
async def test_serves_proxy_alone_adds_a_second_header(own: bool) -> None:
    """What the proxy callback is for: Serve's proxy appends its id to the app's."""
    async with client(through_proxy(echo_app(own), callback=False)) as c:
        assert len(request_ids(await c.get("/"))) == 2


@pytest.mark.parametrize("stack", [direct, through_proxy])
async def test_one_header_carrying_the_apps_own_id(stack) -> None:
    async with client(stack(echo_app(own=True))) as c:
        r = await c.get("/", headers={"X-Request-ID": "client-chosen"})
    assert request_ids(r) == ["own-1"] == [r.json()["id"]]


@pytest.mark.parametrize("stack", [direct, through_proxy])
async def test_one_header_with_the_default_middleware(stack) -> None:
    async with client(stack(echo_app(own=False))) as c:
        r = await c.get("/")
        kept = await c.get("/", headers={"X-Request-ID": "abc-123"})
    assert request_ids(r) == [r.json()["id"]]
    assert request_ids(kept) == ["abc-123"] == [kept.json()["id"]]


async def test_first_request_id_keeps_the_first_and_other_headers() -> None:
    async def app(scope, receive, send):
        headers = [(b"x-request-id", b"a"), (b"etag", b'"t"'), (b"X-Request-ID", b"b"), (b"x-request-id", b"c")]
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    async with client(FirstRequestIdMiddleware(app)) as c:
        r = await c.get("/")
    assert request_ids(r) == ["a"] and r.headers["etag"] == '"t"'


def test_serve_yaml_installs_the_proxy_callback() -> None:
    config = deploy.read_serve_config(ROOT / "serve.yaml")
    env = config["controller_options"]["runtime_env"]["env_vars"]
    assert env["RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH"] == PROXY_CALLBACK
    module, name = PROXY_CALLBACK.split(":")
    middlewares = getattr(__import__(module, fromlist=[name]), name)()
    assert [m.cls for m in middlewares] == [FirstRequestIdMiddleware]
