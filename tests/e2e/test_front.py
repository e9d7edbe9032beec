"""Tier 3: `rayfleet up` puts HAProxy on the public Serve port (rayfleet.front); silent and slow
clients are closed there, while Serve's own proxy, on its loopback port, holds them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import httpx
import pytest

from rayfleet.launcher import Launched, launch
from tests.conftest import ROOT
from tests.rayfleet.slow_client import trickle

QUICK_FRONT = "request_timeout: 1\nkeep_alive: 1\nclient_timeout: 2\nserver_timeout: 20\n"
# Serve's proxy: a body gap over 2 s, or behind 2 s + 1 s per 64 KiB, is a 408
QUICK_PACE = {
    "RAYFLEET_PROXY_READ_TIMEOUT": "2",
    "RAYFLEET_PROXY_BODY_TIMEOUT": "2",
    "RAYFLEET_PROXY_BODY_MIN_RATE": "65536",
}


@pytest.fixture(scope="module")
def fronted(tmp_path_factory) -> Launched:
    import yaml

    state_dir = tmp_path_factory.mktemp("rayfleet-front")
    front = state_dir / "front.yaml"
    front.write_text(QUICK_FRONT)
    serve = yaml.safe_load((ROOT / "serve.yaml").read_text())
    serve["controller_options"]["runtime_env"]["env_vars"].update(QUICK_PACE)
    (state_dir / "serve.yaml").write_text(yaml.safe_dump(serve))
    launched = launch(
        state_dir,
        ["ignore_gen"],
        config=str(state_dir / "serve.yaml"),
        env={"RAYFLEET_FRONT_CONFIG": str(front)},
        cwd=ROOT,
        timeout=300,
    )
    yield launched
    launched.stop()


def ports(launched: Launched) -> tuple[int, int]:
    """(the public port: HAProxy, Serve's own port behind it)."""
    state = json.loads((launched.state_dir / "rayfleet.json").read_text())
    return int(launched.base_url.rsplit(":", 1)[1]), int(state["front_status"]["serve_port"])


def test_requests_go_through_the_front_and_status_shows_it_supervised(fronted: Launched) -> None:
    public, serve = ports(fronted)
    assert httpx.get(f"http://127.0.0.1:{public}/ignore/healthz").status_code == 200
    status = subprocess.run(
        [sys.executable, "-m", "rayfleet.cli", "status", "--json"],
        env={**os.environ, "RAYFLEET_STATE_DIR": str(fronted.state_dir)},
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    front = json.loads(status.stdout)["front"]
    assert front["serve_port"] == serve and [c["state"] for c in front["children"]] == ["running"]


async def test_a_silent_connection_is_closed_by_the_front_and_held_by_serves_proxy(fronted: Launched) -> None:
    public, serve = ports(fronted)
    held = asyncio.ensure_future(trickle(serve, b"", b"", 0.2, give_up=4.0))
    _, closed = await trickle(public, b"", b"", 0.2, give_up=4.0)
    _, serve_closed = await held
    assert closed and not serve_closed


async def test_trickled_headers_and_a_trickled_body_get_408_on_the_public_port(fronted: Launched) -> None:
    public, _ = ports(fronted)
    headers, closed = await trickle(public, b"GET /ignore/healthz HTTP/1.1\r\nHost: x\r\n", b"X-A: 1\r\n", 0.2)
    assert closed and headers.startswith(b"HTTP/1.1 408")
    head = b"POST /ignore/generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n"
    body, closed = await trickle(public, head, b" ", 0.2)
    assert closed and body.startswith(b"HTTP/1.1 408")


async def test_a_chunked_body_over_the_cap_is_refused_413_through_the_front(fronted: Launched) -> None:
    """2.5 MiB chunked, over ignore_gen's 2 MiB max_body_bytes (serve.yaml). The refusal may come, and
    the connection close, while the body is still being sent: the client stops writing then and reads
    what was answered (an HTTP client that only reads after sending everything sees a reset)."""
    public, _ = ports(fronted)
    reader, writer = await asyncio.open_connection("127.0.0.1", public)
    writer.write(b"POST /ignore/generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
    writer.write(b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    try:
        for _ in range(40):
            writer.write(b"10000\r\n" + b" " * 65536 + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
    except ConnectionError:
        pass  # refused before the end of the body
    answer = await asyncio.wait_for(reader.read(4096), timeout=30)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


async def test_a_body_trickled_past_the_fronts_buffer_gets_408_from_serves_proxy(fronted: Launched) -> None:
    public, _ = ports(fronted)
    head = b"POST /ignore/generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    head += b"Content-Length: 1000000\r\n\r\n" + b" " * 32_000  # past HAProxy's 16 KiB buffer, then 5 B/s
    answer, closed = await trickle(public, head, b" ", 0.2, give_up=15.0)
    assert closed and answer.startswith(b"HTTP/1.1 408")
