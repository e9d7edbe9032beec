"""Direct ingress (rayfleet.direct): the app on a SO_REUSEPORT port, limits, timeouts, TLS."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
import ssl
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from fastapi import FastAPI, Request, WebSocket

from rayfleet.autoscaling import direct_aware_policy
from rayfleet.direct import DirectServer, DirectSpec, attach
from rayfleet.launcher import free_port
from tests.polling import eventually
from tests.rayfleet.slow_client import trickle


def make_app(tag: str = "a") -> FastAPI:
    app = FastAPI()

    @app.get("/who")
    async def who(request: Request) -> dict:
        return {
            "tag": tag,
            "client": request.client.host if request.client else None,
            "root": request.scope["root_path"],
        }

    @app.post("/echo")
    async def echo(request: Request) -> dict:
        return {"size": len(await request.body())}

    @app.get("/slow")
    async def slow() -> dict:
        await asyncio.sleep(0.5)  # the behaviour: a handler that takes a while
        return {"ok": True}

    return app


@pytest.fixture
async def servers():
    started: list[DirectServer] = []
    yield started
    for server in started:
        await server.stop()


async def start(servers: list, app: FastAPI, spec: DirectSpec) -> DirectServer:
    server = DirectServer(app, spec)
    await server.start()
    servers.append(server)
    return server


async def raw(port: int, payload: bytes, wait: float = 3.0) -> bytes:
    """Send raw bytes, return everything the server answers before closing (or `wait` seconds)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(payload)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(-1), wait)
    except TimeoutError:
        return b"<still open>"
    finally:
        writer.close()


async def test_serves_the_app_with_the_client_address(servers):
    port = free_port()
    server = await start(servers, make_app(), DirectSpec(port=port))
    assert server.view() == {"enabled": True, "url": f"http://127.0.0.1:{port}", "state": "serving", "error": None}
    async with httpx.AsyncClient() as client:
        r = await client.get(f"http://127.0.0.1:{port}/who", headers={"X-Forwarded-For": "203.0.113.9"})
    assert r.json() == {"tag": "a", "client": "127.0.0.1", "root": ""}


async def test_replicas_share_the_port_and_the_kernel_spreads_connections(servers):
    port = free_port()
    await start(servers, make_app("a"), DirectSpec(port=port))
    await start(servers, make_app("b"), DirectSpec(port=port))
    seen = set()
    for _ in range(60):
        async with httpx.AsyncClient() as client:  # a new connection each time
            seen.add((await client.get(f"http://127.0.0.1:{port}/who")).json()["tag"])
        if seen == {"a", "b"}:
            break
    assert seen == {"a", "b"}


async def test_a_taken_port_is_reported_not_raised(servers):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        server = await start(servers, make_app(), DirectSpec(port=port))
        assert server.state == "failed"
        assert "cannot bind" in (server.view()["error"] or "")


async def test_oversized_headers_get_431(servers):
    port = free_port()
    await start(servers, make_app(), DirectSpec(port=port, max_header_bytes=4096))
    answer = await raw(port, b"GET /who HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 10000 + b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 431 ")
    answer = await raw(
        port, b"GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Ok: " + b"a" * 1000 + b"\r\n\r\n", wait=1.0
    )
    assert answer.startswith(b"HTTP/1.1 200 ")


async def test_headers_that_stop_half_way_get_408_and_the_socket_is_closed(servers):
    port = free_port()
    await start(servers, make_app(), DirectSpec(port=port, read_timeout=0.5))
    answer = await raw(port, b"GET /who HTTP/1.1\r\nHost: x\r\n")
    assert answer.startswith(b"HTTP/1.1 408 ")


async def test_a_body_shorter_than_announced_gets_408(servers):
    port = free_port()
    await start(servers, make_app(), DirectSpec(port=port, read_timeout=0.5))
    answer = await raw(port, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + b"x" * 11)
    assert answer.startswith(b"HTTP/1.1 408 ")
    answer = await raw(
        port, b"POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 11\r\n\r\n" + b"x" * 11, wait=1.0
    )
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b'{"size":11}')


TIGHT = {"idle_timeout": 0.4, "read_timeout": 0.6, "keep_alive": 0.4, "body_timeout": 0.6, "body_min_rate": 64.0}


async def test_a_connection_that_sends_nothing_is_closed_after_idle_timeout(servers):
    port = free_port()
    await start(servers, make_app(), DirectSpec(port=port, **TIGHT))
    assert await raw(port, b"") == b""  # closed by the server, without an answer


async def test_bare_line_breaks_do_not_keep_an_idle_connection_open(servers):
    port = free_port()
    await start(servers, make_app(), DirectSpec(port=port, **TIGHT))
    answer, closed = await trickle(port, b"", b"\r\n", every=0.1)
    assert closed and answer == b""


async def test_headers_trickled_a_line_at_a_time_get_408_at_read_timeout(servers):
    port = free_port()
    await start(servers, make_app(), DirectSpec(port=port, **TIGHT))
    answer, closed = await trickle(port, b"GET /who HTTP/1.1\r\nHost: x\r\n", b"X-Slow: 1\r\n", every=0.1)
    assert closed and answer.startswith(b"HTTP/1.1 408 ")


@pytest.mark.parametrize(
    ("framing", "piece"),
    [(b"Content-Length: 100000", b"x"), (b"Transfer-Encoding: chunked", b"1\r\nx\r\n")],
    ids=["content-length", "chunked"],
)
async def test_a_body_trickled_below_the_minimum_rate_gets_408(servers, framing, piece):
    port = free_port()
    await start(servers, make_app(), DirectSpec(port=port, **TIGHT))
    head = b"POST /echo HTTP/1.1\r\nHost: x\r\n" + framing + b"\r\n\r\n"
    # a piece every 0.1 s never stalls for read_timeout, but is far below body_min_rate
    answer, closed = await trickle(port, head, piece, every=0.1)
    assert closed and answer.startswith(b"HTTP/1.1 408 ")


async def test_a_body_sent_faster_than_the_minimum_rate_may_take_longer_than_body_timeout(servers):
    port = free_port()
    # 4 KiB at 2 KiB/s takes ~2 s: over body_timeout (0.6 s), but each byte buys 1/64 s
    await start(servers, make_app(), DirectSpec(port=port, **TIGHT))
    head = b"POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 4096\r\n\r\n"
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head)
    for _ in range(16):
        writer.write(b"x" * 256)
        await writer.drain()
        await asyncio.sleep(0.125)  # the behaviour: a client sending 2 KiB/s
    answer = await asyncio.wait_for(reader.read(-1), 5)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b'{"size":4096}')


async def test_an_idle_keep_alive_connection_is_closed_even_if_it_sends_line_breaks(servers):
    port = free_port()
    await start(servers, make_app(), DirectSpec(port=port, **TIGHT))
    answer, closed = await trickle(port, b"GET /who HTTP/1.1\r\nHost: x\r\n\r\n", b"\r\n", every=0.1)
    assert closed and answer.startswith(b"HTTP/1.1 200 ") and answer.count(b"HTTP/1.1") == 1


async def test_a_body_the_app_is_slow_to_read_is_not_the_clients_fault(servers):
    app = make_app()

    @app.post("/later")
    async def later(request: Request) -> dict:
        await asyncio.sleep(1.5)  # the behaviour: an app that reads its body late
        return {"size": len(await request.body())}

    port = free_port()
    await start(servers, app, DirectSpec(port=port, **TIGHT))
    size = 4 * 1024 * 1024  # past uvicorn's high-water mark: it stops reading until the app does
    head = b"POST /later HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % size
    answer = await raw(port, head + b"x" * size, wait=10.0)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b'{"size":%d}' % size)


async def test_a_slow_handler_is_not_a_read_timeout(servers):
    port = free_port()
    await start(servers, make_app(), DirectSpec(port=port, read_timeout=0.2))
    async with httpx.AsyncClient() as client:
        assert (await client.get(f"http://127.0.0.1:{port}/slow")).json() == {"ok": True}


def _cert(tmp_path: Path) -> tuple[str, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(cert_path), str(key_path)


async def test_tls_with_the_minimum_version_honoured(servers, tmp_path):
    cert, key = _cert(tmp_path)
    port = free_port()
    server = await start(servers, make_app(), DirectSpec(port=port, tls_cert=cert, tls_key=key, tls_min_version="1.3"))
    assert server.url == f"https://127.0.0.1:{port}"
    ok = ssl.create_default_context(cafile=cert)
    async with httpx.AsyncClient(verify=ok) as client:
        r = await client.get(server.url + "/who")
        assert r.json()["tag"] == "a"
    old = ssl.create_default_context(cafile=cert)
    old.maximum_version = ssl.TLSVersion.TLSv1_2
    async with httpx.AsyncClient(verify=old) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(server.url + "/who")
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.HTTPError):
            await client.get(f"http://127.0.0.1:{port}/who")


async def wait_for_count(server: DirectServer, expected: int) -> None:
    await eventually(lambda: server.ongoing == expected, what=f"{expected} requests counted as ongoing")


async def test_direct_load_counts_requests_received_and_not_yet_answered(servers):
    """What Serve's autoscaler sees: a request counts from its first byte to the end of its answer,
    also while it waits in the connection (a handler that never awaits would otherwise hide it)."""
    port = free_port()
    server = await start(servers, make_app(), DirectSpec(port=port))
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /who HTTP/1.1\r\nHost: x\r\n")  # headers not finished
    await writer.drain()
    await wait_for_count(server, 1)
    writer.write(b"\r\n")
    await reader.readuntil(b"}")
    await wait_for_count(server, 0)
    # two pipelined requests: both count until both are answered
    writer.write(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /who HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    await wait_for_count(server, 2)
    await reader.readuntil(b'"tag"')
    await reader.readuntil(b"}")
    await wait_for_count(server, 0)
    # a client that goes away mid-request is no longer load
    writer.write(b"GET /who HTTP/1.1\r\n")
    await writer.drain()
    await wait_for_count(server, 1)
    writer.close()
    await wait_for_count(server, 0)


async def test_a_websocket_upgrade_is_not_left_counted_as_pending(servers):
    import websockets

    app = make_app()

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await socket.accept()
        await socket.send_text("hi")
        await socket.receive_text()

    port = free_port()
    server = await start(servers, app, DirectSpec(port=port))
    async with websockets.connect(f"ws://127.0.0.1:{port}/ws") as client:
        assert await client.recv() == "hi"
        await wait_for_count(server, 0)
        await client.send("bye")


def test_spec_from_serve_yaml_args():
    assert DirectSpec.from_args(None) is None
    spec = DirectSpec.from_args({"port": 9001, "host": "node", "tls": {"cert_file": "c", "key_file": "k"}})
    assert spec == DirectSpec(port=9001, host="node", tls_cert="c", tls_key="k")
    with pytest.raises(ValueError):
        DirectSpec(port=9001, tls_min_version="1.0")
    with pytest.raises(ValueError):
        DirectSpec(port=9001, tls_cert="c")
    limits = {"idle_timeout": 12, "body_timeout": 20, "body_min_rate": 512}
    assert DirectSpec.from_args({"port": 9001, **limits}) == DirectSpec(port=9001, **limits)
    with pytest.raises(ValueError):
        DirectSpec(port=9001, idle_timeout=0)


async def test_the_listener_lives_in_the_app_lifespan_and_counts_direct_load():
    app = make_app()
    port = free_port()
    server = attach(app, DirectSpec(port=port))
    async with app.router.lifespan_context(app):
        assert server.state == "serving"
        async with httpx.AsyncClient() as client:
            calls = [client.get(f"http://127.0.0.1:{port}/slow") for _ in range(5)]
            gathered = asyncio.gather(*calls)
            await wait_for_count(server, 5)  # all five in /slow's half second
            await gathered
        assert server.ongoing == 0
    assert server.state == "stopped"
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/who")


def test_the_autoscaling_policy_adds_the_direct_load():
    config = SimpleNamespace(get_target_ongoing_requests=lambda: 10)
    ctx = SimpleNamespace(
        current_num_replicas=2,
        target_num_replicas=2,
        total_num_requests=4.0,
        aggregated_metrics={"direct_ongoing": {"r1": 30.0, "r2": 26.0}},
        config=config,
    )
    desired, _ = direct_aware_policy(ctx)
    assert desired == pytest.approx(6.0)
    ctx.aggregated_metrics = {}
    assert direct_aware_policy(ctx)[0] == pytest.approx(0.4)
