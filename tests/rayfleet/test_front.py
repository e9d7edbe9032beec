"""The front (rayfleet.front): a real HAProxy in front of uvicorn running the app inside the
middleware Serve's proxy runs (Ray's stack and rayfleet.serving.proxy_middlewares, whose
BodyPaceMiddleware bounds a body's pace): silent and slow clients are closed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request

from rayfleet.front import HAPROXY, Front, FrontSpec, render
from rayfleet.launcher import free_port
from tests.conftest import ROOT, in_ci
from tests.polling import eventually, eventually_sync
from tests.rayfleet.slow_client import trickle

QUICK = FrontSpec(request_timeout=0.5, keep_alive=0.5, client_timeout=0.8, server_timeout=2.0)


def backend_app() -> FastAPI:
    app = FastAPI()

    @app.get("/who")
    async def who(request: Request) -> dict:
        return {
            "client": request.client.host if request.client else None,
            "xff": request.headers.getlist("x-forwarded-for"),
        }

    @app.post("/echo")
    async def echo(request: Request) -> dict:
        return {"size": len(await request.body())}

    return app


PACE = {
    "RAYFLEET_PROXY_READ_TIMEOUT": "0.6",
    "RAYFLEET_PROXY_BODY_TIMEOUT": "0.6",
    "RAYFLEET_PROXY_BODY_MIN_RATE": "65536",
}


@contextlib.contextmanager
def plain_uvicorn() -> Iterator[int]:
    """uvicorn as Serve's proxy runs it (default protocol, keep-alive its only knob), with the
    proxy's middleware stack around the app (PACE must be in the environment)."""
    from tests.rayfleet.servestack import through_proxy

    port = free_port()
    app = through_proxy(backend_app())
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    eventually_sync(lambda: server.started, what="uvicorn started")
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def front(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Front, int]]:
    for name, value in PACE.items():
        monkeypatch.setenv(name, value)
    if not Path(HAPROXY).exists():
        message = "haproxy not installed; run scripts/system-deps.sh"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    with plain_uvicorn() as backend:
        f = Front(QUICK, ("127.0.0.1", free_port()), backend, tmp_path)
        f.start()
        try:
            yield f, backend
        finally:
            f.stop()


async def test_requests_pass_and_the_backend_sees_the_client_not_its_forged_header(front):
    f, _ = front
    async with httpx.AsyncClient() as client:
        r = await client.get(f"http://127.0.0.1:{f.bind[1]}/who", headers={"X-Forwarded-For": "203.0.113.7"})
        posted = await client.post(f"http://127.0.0.1:{f.bind[1]}/echo", content=b"x" * 100_000)
    assert r.status_code == 200 and r.json()["xff"] == ["127.0.0.1"]
    assert posted.json() == {"size": 100_000}


async def test_a_silent_connection_is_held_by_uvicorn_and_closed_by_the_front(front):
    f, backend = front
    # both opened together: the front has closed its one while plain uvicorn still holds the other
    direct, closed_direct = asyncio.ensure_future(trickle(backend, b"", b"", 0.1, 3.0)), None
    _, closed = await trickle(f.bind[1], b"", b"", 0.1, 3.0)
    _, closed_direct = await direct
    assert closed and not closed_direct


async def test_headers_trickled_a_line_at_a_time_get_408(front):
    f, _ = front
    answer, closed = await trickle(f.bind[1], b"GET /who HTTP/1.1\r\nHost: x\r\n", b"X-A: 1\r\n", 0.1, 5.0)
    assert closed and answer.startswith(b"HTTP/1.1 408")


async def test_a_trickled_body_never_reaches_the_app_and_gets_408(front):
    f, _ = front
    head = b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n"
    answer, closed = await trickle(f.bind[1], head, b"x", 0.1, 5.0)
    assert closed and answer.startswith(b"HTTP/1.1 408")


async def test_a_body_that_stops_after_its_first_buffer_gets_408_from_the_proxy(front):
    f, _ = front
    head = b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n"
    answer, closed = await trickle(f.bind[1], head + b"x" * 200_000, b"", 0.1, 6.0)
    assert closed and answer.startswith(b"HTTP/1.1 408") and b"arrived too slowly" in answer


async def test_a_body_sent_fast_past_the_first_buffer_then_trickled_gets_408_from_the_proxy(front):
    f, _ = front
    head = b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n"
    # HAProxy forwards it once its buffer is full; then at 10 B/s the body falls behind 64 KiB/s
    answer, closed = await trickle(f.bind[1], head + b"x" * 32_000, b"x", 0.1, 15.0)
    assert closed and answer.startswith(b"HTTP/1.1 408") and b"arrived too slowly" in answer  # the proxy's


async def test_the_proxy_middleware_alone_bounds_a_trickled_body_and_passes_a_steady_one(front):
    _, backend = front
    head = b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    answer, closed = await trickle(backend, head, b"1\r\nx\r\n", 0.1)
    # uvicorn closes without lingering: the client's next byte can draw a reset that wipes the
    # 408 out of its socket before it is read (through the front, HAProxy delivers it whole)
    assert closed
    assert answer == b"" or (answer.startswith(b"HTTP/1.1 408") and b"connection: close" in answer.lower())

    async def steady():
        for _ in range(8):
            yield b"x" * 8192
            await asyncio.sleep(0.1)  # the behaviour: 80 KB/s, above the 64 KiB/s minimum

    async with httpx.AsyncClient() as client:
        r = await client.post(f"http://127.0.0.1:{backend}/echo", content=steady())
    assert r.json() == {"size": 8 * 8192}


async def answered_connection(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A keep-alive connection answered once (so HAProxy has surely accepted and counted it);
    tried again when refused because the supervisor's probe held a share at that moment."""
    for _ in range(10):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(b"GET /who HTTP/1.1\r\nHost: x\r\n\r\n")
            if (await reader.readuntil(b"}")).startswith(b"HTTP/1.1 200"):
                return reader, writer
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        writer.close()
    raise AssertionError("no connection was answered")


async def test_one_address_cannot_hold_more_than_its_share_of_connections(front, tmp_path):
    _, backend = front
    # its own front, whose request timeout outlasts the test: the held connections stay open
    f = Front(
        FrontSpec(request_timeout=30, max_connections_per_client=3), ("127.0.0.1", free_port()), backend, tmp_path
    )
    f.start()
    try:
        held = [await answered_connection(f.bind[1]) for _ in range(3)]
        try:
            answer, closed = await trickle(f.bind[1], b"GET /who HTTP/1.1\r\nHost: x\r\n\r\n", b"", 0.05, 3.0)
        except ConnectionError:  # reset as it connects
            answer, closed = b"", True
        assert closed and answer == b""  # refused at accept, no answer
        for _, writer in held:
            writer.close()
        async with httpx.AsyncClient() as client:  # the held ones gone, the address is served again
            await eventually(lambda: client.get(f"http://127.0.0.1:{f.bind[1]}/who"), timeout=5, what="served again")
    finally:
        f.stop()


async def test_haproxy_is_restarted_when_it_dies(front):
    f, _ = front
    pid = f.statuses()[0]["pid"]
    assert pid
    os.kill(pid, signal.SIGKILL)
    status = await eventually(
        lambda: next((s for s in f.statuses() if s["restarts"] == 1 and s["state"] == "running"), None),
        timeout=15,
        what="the front restarted",
    )
    assert status["pid"] != pid
    async with httpx.AsyncClient() as client:
        assert (await client.get(f"http://127.0.0.1:{f.bind[1]}/who")).status_code == 200


def test_config_front_yaml_is_valid_and_checked_by_haproxy(tmp_path):
    spec = FrontSpec.load(ROOT / "config/front.yaml")
    assert spec.request_timeout <= 30 and spec.keep_alive <= 30
    cfg = tmp_path / "h.cfg"
    cfg.write_text(render(spec, ("127.0.0.1", 8000), 8001))
    assert "timeout http-request 15000ms" in cfg.read_text() or spec.request_timeout != 15
    with pytest.raises(ValueError, match="unknown"):
        bad = tmp_path / "bad.yaml"
        bad.write_text("request_timout: 3\n")
        FrontSpec.load(bad)


def test_haproxy_does_not_outlive_a_killed_owner(front, tmp_path):
    import subprocess
    import sys

    _, backend = front
    script = (
        "import sys, time; from pathlib import Path; from rayfleet.front import Front, FrontSpec; "
        "from rayfleet.launcher import free_port; "
        f"f = Front(FrontSpec(), ('127.0.0.1', free_port()), {backend}, Path({str(tmp_path)!r})); f.start(); "
        "print(f.statuses()[0]['pid'], flush=True); time.sleep(60)"
    )
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        pid = int(owner.stdout.readline())
        os.kill(pid, 0)  # HAProxy runs
    finally:
        owner.kill()  # SIGKILL: no cleanup of its own
        owner.wait()

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z"

    eventually_sync(gone, timeout=10, what="haproxy ended with its owner")
