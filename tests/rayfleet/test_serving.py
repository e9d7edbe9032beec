"""Tier 1: one X-Request-ID per answer, on a replica (the direct port) and behind Serve's proxy."""

from __future__ import annotations

import httpx
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


def test_serve_yaml_installs_the_proxy_callback(monkeypatch: pytest.MonkeyPatch) -> None:
    from rayfleet.http import BodyPaceMiddleware
    from rayfleet.serving import PROXY_BODY_SETTINGS

    config = deploy.read_serve_config(ROOT / "serve.yaml")
    env = config["controller_options"]["runtime_env"]["env_vars"]
    assert env["RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH"] == PROXY_CALLBACK
    for name, value in env.items():
        monkeypatch.setenv(name, value)  # what the proxy's process gets
    module, name = PROXY_CALLBACK.split(":")
    middlewares = getattr(__import__(module, fromlist=[name]), name)()
    assert [m.cls for m in middlewares] == [BodyPaceMiddleware, FirstRequestIdMiddleware]
    assert middlewares[0].kwargs == {key: float(env[var]) for key, var in PROXY_BODY_SETTINGS.items()}


# --- the platform body cap (rayfleet.errors.install_body_cap, installed by rayfleet.serving.build_app)

CAP = 1024 * 1024


def shaped_app(consumed: list[int]) -> FastAPI:
    """A component with its own error shape ({"error": {"status", "message", "request_id"}})
    whose upload route records how many body bytes it was handed."""
    from fastapi.responses import JSONResponse

    from rayfleet.errors import install_error_handlers

    app = FastAPI()
    install_error_handlers(
        app,
        lambda request, status, message, headers: JSONResponse(
            {"error": {"status": status, "message": message, "request_id": request_id(request)}}, status, headers
        ),
        component="test",
    )

    @app.post("/upload")
    async def upload(request: Request) -> dict[str, int]:
        async for chunk in request.stream():
            consumed.append(len(chunk))
        return {"size": sum(consumed)}

    return app


@pytest.fixture
async def capped():
    """The app as every replica builds it (rayfleet.serving.build_app), on a real listener."""
    from rayfleet.direct import DirectServer, DirectSpec
    from rayfleet.launcher import free_port
    from rayfleet.serving import build_app

    consumed: list[int] = []
    server = DirectServer(build_app(lambda: shaped_app(consumed), None, CAP)(), DirectSpec(port=free_port()))
    await server.start()
    yield server, consumed
    await server.stop()


async def send_chunked(url: str, total: int, chunk: int = 65536) -> tuple[bytes, int]:
    """POST `total` bytes chunked over a raw socket, reading the answer as it comes; stops when the
    server closes. Returns (answer, bytes of body the client got to send)."""
    import asyncio

    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    received = bytearray()

    async def read() -> None:
        try:
            while data := await reader.read(65536):
                received.extend(data)
        except ConnectionError:
            pass

    answer = asyncio.ensure_future(read())
    writer.write(b"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    sent = 0
    frame = b"%x\r\n" % chunk + b"x" * chunk + b"\r\n"
    try:
        while sent < total and not answer.done():
            writer.write(frame)
            drained = asyncio.ensure_future(writer.drain())
            await asyncio.wait([drained, answer], return_when=asyncio.FIRST_COMPLETED)
            if not drained.done():
                drained.cancel()
                break
            if drained.exception() is not None:
                break
            sent += chunk
        await asyncio.wait_for(answer, 10)
    finally:
        writer.close()
    return bytes(received), sent


async def test_a_chunked_body_over_the_cap_is_refused_413_in_the_components_shape_without_being_read_whole(capped):
    import json

    server, consumed = capped
    total = 20 * 1024 * 1024
    answer, sent = await send_chunked(server.url, total)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 ")
    assert b"connection: close" in head.lower()
    error = json.loads(body)["error"]
    assert error["status"] == 413 and str(CAP) in error["message"]
    assert error["request_id"] and f"x-request-id: {error['request_id']}".encode() in head.lower()
    # the app never held more than the cap, and the server stopped reading long before 20 MB
    assert sum(consumed) <= CAP
    assert sent < total // 2


async def test_a_declared_length_over_the_cap_is_refused_before_reading(capped):
    import asyncio
    import json

    server, consumed = capped
    host, port = server.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\nxxxx" % (20 * 1024 * 1024))
    answer = await asyncio.wait_for(reader.read(-1), 10)  # answered and closed with 4 bytes of 20 MB sent
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 ") and json.loads(body)["error"]["status"] == 413
    assert consumed == []


async def test_a_body_under_the_cap_passes_whatever_the_framing(capped):
    server, consumed = capped

    async def chunks():
        for _ in range(8):
            yield b"x" * 65536

    async with httpx.AsyncClient() as http:
        declared = await http.post(server.url + "/upload", content=b"x" * CAP)
        consumed.clear()
        streamed = await http.post(server.url + "/upload", content=chunks())
    assert declared.json() == {"size": CAP}
    assert streamed.json() == {"size": 8 * 65536}


def test_serve_yaml_body_caps_are_numbers() -> None:
    from rayfleet.serving import DEFAULT_MAX_BODY_BYTES

    config = deploy.read_serve_config(ROOT / "serve.yaml")
    caps = {
        a["name"]: int(a.get("args", {}).get("max_body_bytes", DEFAULT_MAX_BODY_BYTES)) for a in config["applications"]
    }
    assert all(cap > 0 for cap in caps.values())
    # webfilter imports lists of up to import_max_bytes (20 MiB) in a JSON body
    assert caps["webfilter"] > 20 * 1024 * 1024
    # lxc's own api.max_body_bytes may go up to its bound: the platform cap must not undercut it
    from deployments.lxc.config import ApiConfig

    bound = next(m.le for m in ApiConfig.model_fields["max_body_bytes"].metadata if hasattr(m, "le"))
    assert caps["lxc"] >= bound
