"""/api/ws/logs: single-use token checked before the upgrade, live rows of real proxied traffic,
slow clients lose messages instead of stalling the others."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
import uvicorn
import websockets

from tests.conftest import free_port
from tests.polling import eventually

pytestmark = pytest.mark.realserver


@pytest.fixture(scope="module")
async def ws_base(wf):
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(wf.app, host="127.0.0.1", port=port, lifespan="off", log_level="error"))
    task = asyncio.create_task(server.serve())
    await eventually(lambda: server.started, timeout=4, what="uvicorn started")
    yield f"ws://127.0.0.1:{port}"
    server.should_exit = True
    await task


async def streaming(wf, clients: int) -> None:
    """The replica's poller has its starting point and `clients` connected clients."""
    fanout = wf.app.state.component.fanout
    await eventually(lambda: fanout.seq >= 0 and len(fanout.clients) >= clients, what="the stream's poller")


async def token(wf) -> str:
    return str((await wf.api.get("/api/ws-token")).json()["token"])


async def next_log(ws, url_part: str, timeout: float = 10.0) -> dict:
    async def find() -> dict:
        while True:
            message = json.loads(await ws.recv())
            if message["type"] == "log" and url_part in message["data"]["destination"]:
                return dict(message["data"])

    return await asyncio.wait_for(find(), timeout)


async def both(ws, first: str, second: str, timeout: float = 10.0) -> tuple[dict, dict]:
    """The rows whose destination contains `first` and `second`, in whichever order they arrive."""
    found: dict[str, dict] = {}

    async def find() -> None:
        while len(found) < 2:
            message = json.loads(await ws.recv())
            if message["type"] == "log":
                for part in (first, second):
                    if part in message["data"]["destination"]:
                        found[part] = dict(message["data"])

    await asyncio.wait_for(find(), timeout)
    return found[first], found[second]


async def test_a_bad_token_is_refused_before_the_upgrade(wf, ws_base):
    for bad in ("", "?token=deadbeef"):
        with pytest.raises(websockets.exceptions.InvalidStatus) as info:
            async with websockets.connect(f"{ws_base}/api/ws/logs{bad}"):
                pass
        assert info.value.response.status_code == 401


async def test_the_token_is_single_use(wf, ws_base):
    t = await token(wf)
    async with websockets.connect(f"{ws_base}/api/ws/logs?token={t}"):
        pass
    with pytest.raises(websockets.exceptions.InvalidStatus):
        async with websockets.connect(f"{ws_base}/api/ws/logs?token={t}"):
            pass


async def test_proxied_requests_arrive_on_the_stream_with_the_deciding_rule(wf, ws_base):
    await wf.api.post("/api/domain-blacklist", json={"domain": "tracker.test"})
    try:
        async with websockets.connect(f"{ws_base}/api/ws/logs?token={await token(wf)}") as ws:
            await streaming(wf, clients=1)
            await wf.fetch(wf.url("allowed.test", "/stream-ok"))
            await wf.fetch(wf.url("ads.tracker.test", "/stream-blocked"))
            ok = await next_log(ws, "/stream-ok")
            blocked = await next_log(ws, "/stream-blocked")
        assert ok["blocked"] is False and ok["status"] == 200 and ok["client_ip"] == "127.0.0.1"
        assert blocked["blocked"] is True and blocked["rule"] == "domain_blacklist" and blocked["status"] == 403
    finally:
        await wf.api.delete("/api/domain-blacklist/clear-all")


async def test_dns_queries_arrive_on_the_stream_as_dns_rows(wf, ws_base):
    await wf.api.post("/api/domain-blacklist", json={"domain": "stream-dns.test"})
    try:
        async with websockets.connect(f"{ws_base}/api/ws/logs?token={await token(wf)}") as ws:
            await streaming(wf, clients=1)
            assert await wf.resolve("ads.stream-dns.test") == ["0.0.0.0"]
            await wf.fetch(wf.url("allowed.test", "/stream-http"))
            dns, http = await both(ws, "ads.stream-dns.test", "/stream-http")
        assert dns["source"] == "dns" and dns["method"] == "DNS" and dns["qtype"] == "A"
        assert dns["outcome"] == "sinkholed" and dns["blocked"] is True and dns["answer"] == "0.0.0.0"
        assert (dns["rule"], dns["rule_source"]) == ("stream-dns.test", "domain-blacklist")
        assert dns["client_ip"] == "127.0.0.1" and dns["status"] is None
        assert http["source"] == "http" and http["status"] == 200
        await wf.api.put("/api/settings/gdpr_mode", json={"value": True})
        async with websockets.connect(f"{ws_base}/api/ws/logs?token={await token(wf)}") as ws:
            await streaming(wf, clients=1)
            assert await wf.resolve("masked.stream-dns.test") == ["0.0.0.0"]
            assert (await next_log(ws, "masked.stream-dns.test"))["client_ip"] == "127.0.0.0"
    finally:
        await wf.api.put("/api/settings/gdpr_mode", json={"value": False})
        await wf.api.delete("/api/domain-blacklist/clear-all")


async def test_a_slow_client_loses_messages_while_a_fast_one_gets_everything(wf, ws_base):
    fast = await websockets.connect(f"{ws_base}/api/ws/logs?token={await token(wf)}")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    sock.connect(("127.0.0.1", int(ws_base.rsplit(":", 1)[1])))
    sock.setblocking(False)
    slow = await websockets.connect(f"{ws_base}/api/ws/logs?token={await token(wf)}", sock=sock, max_queue=1)
    try:
        await streaming(wf, clients=2)
        store = wf.app.state.component.logs.instance
        from actors.webfilter.logparse import parse_line

        lines = [f"{1.7e9 + i:.3f} 127.0.0.5 GET 200 TCP_MISS 1 1 1 - http://burst.test/{i} -" for i in range(6000)]
        got = 0

        async def drain() -> None:
            nonlocal got
            while got < 6000:
                message = json.loads(await fast.recv())
                if message["type"] == "log" and "burst.test" in message["data"]["destination"]:
                    got += 1

        drainer = asyncio.create_task(drain())
        for start in range(0, 6000, 200):
            store.ingest([parse_line(line) for line in lines[start : start + 200]], publish=True)
            await asyncio.sleep(0.15)  # pacing: bursts the fast client can drain, that fill the slow one's buffers
        await asyncio.wait({drainer}, timeout=30)
        drainer.cancel()
        assert got == 6000, got
        assert slow.state.name == "OPEN"  # never read from, yet the stream did not wait for it
    finally:
        await fast.close()
        await slow.close()


async def test_a_full_client_queue_drops_and_then_says_how_many():
    from deployments.webfilter.routes.ws import _sender
    from deployments.webfilter.stream import QUEUE_SIZE, Client

    client = Client()
    for n in range(QUEUE_SIZE + 5):
        client.offer(json.dumps({"type": "log", "data": {"n": n}}))
    assert client.dropped == 5

    class Recorder:
        def __init__(self) -> None:
            self.sent: list[dict] = []

        async def send_text(self, text: str) -> None:
            self.sent.append(json.loads(text))

    recorder = Recorder()
    task = asyncio.create_task(_sender(recorder, client))
    await eventually(lambda: len(recorder.sent) > QUEUE_SIZE, timeout=1, what="the queue sent")
    task.cancel()
    assert recorder.sent[0] == {"type": "dropped", "count": 5}
    assert [m["data"]["n"] for m in recorder.sent[1:]] == list(range(QUEUE_SIZE))
