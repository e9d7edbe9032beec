"""The direct listener: the gateway app served by ``GatewayListener`` on its own port.

The actor class is instantiated directly in the test's event loop (no Ray); its
``start``/``ready``/``stop`` are the methods the Serve replicas call through the actor
handle. Shared state goes through the same in-process stand-ins the replicas use.
"""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import openai
import pytest

from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.listener import GatewayListener, ListenerWatch
from tests.conftest import free_port
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, INFER_KEY, base_config, chat


def _config(tmp_path, up1, port: int, **overrides) -> dict:
    cfg = base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["gpt-4o-mini"]}}, **overrides)
    cfg["server"] = {"host": "127.0.0.1", "port": port, "listener": {"enabled": True}}
    return GatewayConfig.model_validate(cfg).model_dump(mode="json")


@pytest.fixture
async def listeners():
    started: list[GatewayListener] = []
    yield started
    for listener in started:
        await listener.stop()


async def test_listener_serves_the_app_with_auth_and_streaming(listeners, up1, tmp_path, auth_env):
    port = free_port()
    listener = GatewayListener(_config(tmp_path, up1, port))
    listeners.append(listener)
    status = await listener.ready()
    assert status == {"enabled": True, "url": f"http://127.0.0.1:{port}", "state": "serving", "error": None}
    assert (await listener.ready())["state"] == "serving"  # idempotent

    async with httpx.AsyncClient(base_url=status["url"], timeout=30, trust_env=False) as c:
        assert (await c.post("/v1/chat/completions", json=chat())).status_code == 401
        wrong = await c.post("/v1/chat/completions", json=chat(), headers={"Authorization": f"Bearer {ADMIN_KEY}"})
        assert wrong.status_code == 403 and wrong.json()["error"]["code"]
        r = await c.post("/v1/chat/completions", json=chat(), headers={"x-api-key": INFER_KEY})
        assert r.status_code == 200, r.text
        assert r.json()["choices"][0]["message"]["content"].startswith("[up1]")
        assert r.headers["x-llm-endpoint"] == "a" and "x-rayfleet-overhead-ms" in r.headers
        async with c.stream(
            "POST", "/v1/chat/completions", json=chat(stream=True), headers={"Authorization": f"Bearer {INFER_KEY}"}
        ) as s:
            assert s.status_code == 200
            assert s.headers["content-type"].startswith("text/event-stream")
            events = [line[6:] async for line in s.aiter_lines() if line.startswith("data: ")]
        assert events[-1] == "[DONE]"
        text = "".join(json.loads(e)["choices"][0]["delta"].get("content") or "" for e in events[:-1])
        assert text.startswith("[up1]Hello")
        health = (await c.get("/health")).json()
        assert health["listener"] == status
        assert (await c.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})).status_code == 200

    client = openai.AsyncOpenAI(
        base_url=status["url"] + "/v1", api_key=INFER_KEY, max_retries=0, http_client=httpx.AsyncClient(trust_env=False)
    )
    out = await client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert out.choices[0].message.content.startswith("[up1]")
    await client.close()

    stopped = await listener.stop()
    assert stopped["state"] == "stopped"
    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient(trust_env=False) as c:
            await c.get(status["url"] + "/health")


async def test_port_taken_reports_failure_and_retries(listeners, up1, tmp_path, auth_env, monkeypatch):
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    port = blocker.getsockname()[1]
    listener = GatewayListener(_config(tmp_path, up1, port))
    listeners.append(listener)
    try:
        status = await listener.ready()
        assert status["state"] == "failed"
        assert f"127.0.0.1:{port}" in status["error"] and "in use" in status["error"].lower()
    finally:
        blocker.close()
    assert (await listener.ready())["state"] == "failed"  # a new bind waits for the retry interval
    monkeypatch.setattr("deployments.llm_gateway.listener.RETRY_BIND_AFTER", 0.0)
    status = await listener.ready()
    assert status["state"] == "serving"
    async with httpx.AsyncClient(trust_env=False) as c:
        assert (await c.get(status["url"] + "/health")).json()["listener"]["state"] == "serving"


async def test_listener_shares_state_with_a_replica_app(listeners, serve, up1, tmp_path, auth_env):
    """Budget and client rate limits are the same actors for the listener and a replica."""
    port = free_port()
    cfg = _config(tmp_path, up1, port, rate_limiting={"requests_per_minute": 4})
    listener = GatewayListener(cfg)
    listeners.append(listener)
    url = (await listener.ready())["url"]
    replica = await serve(cfg)
    async with httpx.AsyncClient(timeout=30, trust_env=False, headers={"Authorization": f"Bearer {INFER_KEY}"}) as c:
        statuses = []
        for base in (url, replica.url, url, replica.url, url, replica.url):
            statuses.append((await c.post(base + "/v1/chat/completions", json=chat())).status_code)
    assert statuses.count(200) == 4 and statuses.count(429) == 2, statuses


async def test_replica_health_shows_the_watched_listener(serve, up1, tmp_path, auth_env):
    port = free_port()
    cfg = GatewayConfig.model_validate(_config(tmp_path, up1, port))
    watch = ListenerWatch(cfg, replicas=2, interval=0.05)
    replica = await serve(cfg.model_dump(mode="json"))
    assert (await _health(replica.url))["listener"] == {"enabled": False}
    from deployments.llm_gateway.app import create_app

    app = create_app(cfg, listener=watch)
    async with app.router.lifespan_context(app):
        for _ in range(200):
            if watch.view()["state"] == "serving":
                break
            await asyncio.sleep(0.05)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://t") as c:
            seen = (await c.get("/health")).json()["listener"]
        assert seen == {"enabled": True, "url": f"http://127.0.0.1:{port}", "state": "serving", "error": None}
        assert (await _health(seen["url"]))["listener"]["state"] == "serving"
        await watch.handle().stop.remote()


async def _health(url: str) -> dict:
    async with httpx.AsyncClient(trust_env=False) as c:
        return (await c.get(url + "/health")).json()
