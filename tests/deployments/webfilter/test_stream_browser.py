"""/api/ws/logs in a real browser: Debian's headless Chromium, on a page served by the web filter itself
(same origin), fetches a stream token with the admin's credentials, opens the WebSocket and receives the
documented message for real traffic through Squid; a used, a missing and a bad token are refused."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn

from tests.conftest import free_port, in_ci
from tests.deployments.webfilter.conftest import ADMIN_PASSWORD
from tests.polling import eventually

pytestmark = pytest.mark.realserver

CHROMIUM = "/usr/bin/chromium"
ARGS = [  # as tests/deployments/lxc/test_lxc_ui.py
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# the message fields README.md documents for {"type": "log", "data": {...}}
DOCUMENTED = {  # an HTTP row of the stream (README: WebSocket)
    "source",
    "timestamp",
    "unix_timestamp",
    "client_ip",
    "method",
    "destination",
    "host",
    "status",
    "squid_status",
    "bytes",
    "elapsed_ms",
    "blocked",
    "rule",
}

# GET /api/ws-token from the page, with the admin's HTTP Basic credentials
FETCH_TOKEN = """async (basic) => {
  const r = await fetch("/api/ws-token", {headers: {Authorization: "Basic " + basic}});
  return {status: r.status, body: await r.json()};
}"""

# open the stream; resolves once it is open, or when the browser gives up on it (refused handshake)
OPEN = """(query) => new Promise((resolve) => {
  const ws = new WebSocket(`ws://${location.host}/api/ws/logs${query}`);
  const seen = {opened: false, errored: false, closed: null, messages: []};
  window.__streams = window.__streams || [];
  window.__streams.push({ws, seen});
  ws.onmessage = (e) => seen.messages.push(JSON.parse(e.data));
  ws.onerror = () => { seen.errored = true; };
  ws.onopen = () => { seen.opened = true; resolve({...seen, index: window.__streams.length - 1}); };
  ws.onclose = (e) => {
    seen.closed = e.code;
    resolve({...seen, messages: seen.messages.length, index: window.__streams.length - 1});
  };
})"""

LOGGED = """([index, part]) => window.__streams[index].seen.messages.find(
  (m) => m.type === "log" && m.data.destination.includes(part)) || null"""


def require_chromium() -> None:
    if not os.path.exists(CHROMIUM):
        message = f"{CHROMIUM} missing (scripts/system-deps.sh installs the chromium package)"
        pytest.fail(message) if in_ci() else pytest.skip(message)


@pytest.fixture(scope="module")
async def http_base(wf) -> AsyncIterator[str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(wf.app, host="127.0.0.1", port=port, lifespan="off", log_level="error"))
    task = asyncio.create_task(server.serve())
    await eventually(lambda: server.started, timeout=4, what="uvicorn started")
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await task


async def test_the_stream_in_chromium(wf, http_base):
    require_chromium()
    from playwright.async_api import async_playwright

    basic = base64.b64encode(f"admin:{ADMIN_PASSWORD}".encode()).decode()
    await wf.api.post("/api/domain-blacklist", json={"domain": "tracker.test"})
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            try:
                page = await browser.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                handshake: list[str] = []
                page.on("websocket", lambda ws: ws.on("socketerror", lambda error: handshake.append(error)))
                await page.goto(http_base + "/health")

                denied = await page.evaluate(FETCH_TOKEN, base64.b64encode(b"admin:wrong-Password-1!").decode())
                assert denied["status"] == 401
                got = await page.evaluate(FETCH_TOKEN, basic)
                assert got["status"] == 200 and got["body"]["expires_in"] == 120
                token = got["body"]["token"]
                assert len(token) == 64 and int(token, 16) >= 0

                stream = await page.evaluate(OPEN, f"?token={token}")
                assert stream["opened"] is True and stream["closed"] is None
                index = stream["index"]
                fanout = wf.app.state.component.fanout  # the replica's poller has its starting point
                await eventually(lambda: fanout.seq >= 0 and fanout.clients, what="the stream's poller")
                before = time.time()
                ok_url = wf.url("allowed.test", "/browser-ok?q=1")
                blocked_url = wf.url("ads.tracker.test", "/browser-blocked")
                assert (await wf.fetch(ok_url)).status_code == 200
                assert (await wf.fetch(blocked_url)).status_code == 403
                ok: dict[str, Any] = await (
                    await page.wait_for_function(LOGGED, arg=[index, "/browser-ok"], timeout=10_000)
                ).json_value()
                blocked: dict[str, Any] = await (
                    await page.wait_for_function(LOGGED, arg=[index, "/browser-blocked"], timeout=10_000)
                ).json_value()

                for message in (ok, blocked):
                    assert set(message) == {"type", "data"} and message["type"] == "log"
                    assert set(message["data"]) == DOCUMENTED, set(message["data"]) ^ DOCUMENTED
                ok, blocked = ok["data"], blocked["data"]
                assert ok["destination"] == ok_url and ok["host"] == "allowed.test"
                assert ok["method"] == "GET" and ok["client_ip"] == "127.0.0.1" and ok["source"] == "http"
                assert ok["status"] == 200 and ok["blocked"] is False and ok["squid_status"] != "TCP_DENIED"
                assert ok["bytes"] > 0 and ok["elapsed_ms"] >= 0
                assert before - 5 <= ok["unix_timestamp"] <= time.time() + 5
                stamp = dt.datetime.strptime(ok["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)
                assert abs(stamp.timestamp() - ok["unix_timestamp"]) < 0.002  # the same instant, in UTC
                assert ok["rule"] is None  # no rule decided it
                assert blocked["destination"] == blocked_url and blocked["host"] == "ads.tracker.test"
                assert blocked["status"] == 403 and blocked["blocked"] is True
                assert blocked["rule"] == "domain_blacklist" and blocked["squid_status"] == "TCP_DENIED"

                # the same token again, no token, a bad token: the handshake is refused, nothing arrives
                for query in (f"?token={token}", "", "?token=deadbeef", "?token=" + "0" * 64):
                    refused = await page.evaluate(OPEN, query)
                    assert refused["opened"] is False and refused["errored"] is True, (query, refused)
                    assert refused["closed"] == 1006 and refused["messages"] == 0, (query, refused)
                # Chromium words an HTTP 401 answer to the handshake this way
                assert len(handshake) == 4 and all("HTTP Authentication failed" in h for h in handshake), handshake

                # the first stream is still open and still live
                assert await page.evaluate("(i) => window.__streams[i].ws.readyState", index) == 1
                assert errors == []
            finally:
                await browser.close()
    finally:
        await wf.api.delete("/api/domain-blacklist/clear-all")
