"""Response cache (SQLite and real Redis), the daily budget and spend records (SQLite, real Postgres)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import uuid

from tests.deployments.llm_gateway.conftest import ADMIN_KEY, INFER_KEY, base_config, chat, flush
from tests.polling import eventually


def one(up1, model="m", **ep):
    return {"a": {"base_url": up1.base_url, "models": [model], **ep}}


async def _cache_roundtrip(gw, up1):
    async with gw.client() as c:
        first = await c.post("/v1/chat/completions", json=chat("m", temperature=0))
        assert first.headers["x-cache"] == "MISS"
        await flush(gw)
        hit = await c.post("/v1/chat/completions", json=chat("m", temperature=0))
        assert hit.headers["x-cache"] == "HIT" and hit.json()["choices"] == first.json()["choices"]
        streamed = await c.post("/v1/chat/completions", json=chat("m", temperature=0, stream=True))
        assert streamed.headers["x-cache"] == "HIT"
        text = "".join(
            json.loads(e[6:])["choices"][0]["delta"].get("content") or ""
            for e in streamed.text.split("\n\n")
            if e.startswith("data: {")
        )
        assert text == first.json()["choices"][0]["message"]["content"]
        for variant in (
            dict(temperature=0, presence_penalty=0.5),
            dict(temperature=0, max_tokens=3),
            dict(temperature=0, seed=1),
            dict(temperature=0, stop=["x"]),
            dict(temperature=0, top_p=0.5),
            dict(temperature=0, tools=[{"type": "function", "function": {"name": "f"}}]),
            dict(temperature=0, response_format={"type": "json_object"}),
            dict(n=1),
        ):
            assert (await c.post("/v1/chat/completions", json=chat("m", **variant))).headers["x-cache"] == "MISS"
        bypass = await c.post(
            "/v1/chat/completions", json=chat("m", temperature=0), headers={"Cache-Control": "no-cache"}
        )
        assert bypass.headers["x-cache"] == "BYPASS"
    async with gw.client(key="sk-test-second-0123456789") as other:
        r = await other.post("/v1/chat/completions", json=chat("m", temperature=0))
        assert r.headers["x-cache"] == "MISS"  # another tenant never sees this tenant's entries
    assert len(up1.requests()) == 11


async def test_only_deterministic_requests_are_cached_unless_the_client_opts_in(serve, up1, tmp_path, auth_env):
    """Sampled requests (temperature > 0, n > 1) would replay one draw for an hour: "regenerate" must
    reach the model. ``X-LLM-Cache: allow`` opts one request in; a fresh gateway stores its first answer."""
    gw = await serve(base_config(tmp_path, one(up1), caching={"enabled": True}))
    async with gw.client() as c:
        for sampled in (dict(temperature=0.7), dict(n=2), dict(temperature=0, n=3)):
            for _ in range(2):
                r = await c.post("/v1/chat/completions", json=chat("m", **sampled))
                assert r.status_code == 200 and r.headers["x-cache"] == "SKIP", (sampled, r.text)
            await flush(gw)
        sent = len(up1.requests())
        assert sent == 6  # every sampled request went upstream
        opt_in = {"X-LLM-Cache": "allow"}
        first = await c.post("/v1/chat/completions", json=chat("m", temperature=0.9), headers=opt_in)
        await flush(gw)
        again = await c.post("/v1/chat/completions", json=chat("m", temperature=0.9), headers=opt_in)
        assert (first.headers["x-cache"], again.headers["x-cache"]) == ("MISS", "HIT")
        assert again.json()["choices"] == first.json()["choices"]
        plain = await c.post("/v1/chat/completions", json=chat("m", content="fresh start"))
        await flush(gw)
        assert plain.headers["x-cache"] == "MISS"  # temperature absent and n 1: deterministic by default
        assert (await c.post("/v1/chat/completions", json=chat("m", content="fresh start"))).headers["x-cache"] == "HIT"
    assert len(up1.requests()) == sent + 2


async def test_sqlite_cache(serve, up1, tmp_path, auth_env):
    gw = await serve(base_config(tmp_path, one(up1), caching={"enabled": True}))
    await _cache_roundtrip(gw, up1)
    rows = sqlite3.connect(tmp_path / "cache.db").execute("SELECT COUNT(*) FROM response_cache").fetchone()[0]
    assert rows >= 1


async def test_redis_cache(serve, up1, tmp_path, auth_env, redis_url):
    import redis.asyncio as aioredis

    r = aioredis.from_url(redis_url)
    for key in await r.keys("llmgw:cache:*"):
        await r.delete(key)
    gw = await serve(base_config(tmp_path, one(up1), caching={"enabled": True, "redis_url": redis_url, "ttl": 60}))
    await _cache_roundtrip(gw, up1)
    keys = await r.keys("llmgw:cache:*")
    assert keys and 0 < await r.ttl(keys[0]) <= 60
    await r.aclose()


async def test_redis_down_serves_without_cache(serve, up1, tmp_path, auth_env):
    from tests.conftest import free_port

    cfg = base_config(
        tmp_path,
        one(up1),
        caching={
            "enabled": True,
            "redis_url": f"redis://127.0.0.1:{free_port()}/0",
            "redis_connect_timeout": 0.2,
            "redis_socket_timeout": 0.2,
        },
    )
    gw = await serve(cfg)
    async with gw.client() as c:
        assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 200


async def test_errors_and_cut_streams_are_not_cached(serve, up1, tmp_path, auth_env):
    gw = await serve(
        base_config(tmp_path, one(up1), caching={"enabled": True}, rotation={"failover": {"max_retries": 0}})
    )
    up1.faults({"status": 400, "times": 1}, {"cut_after": 3, "times": 1, "path": "/v1/chat/completions"})
    async with gw.client() as c:
        assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 400
        await flush(gw)
        assert (await c.post("/v1/chat/completions", json=chat("m", stream=True))).headers["x-cache"] == "MISS"
        await flush(gw)
        r = await c.post("/v1/chat/completions", json=chat("m"))
        assert r.status_code == 200 and r.headers["x-cache"] == "MISS"


async def test_cache_ttl_eviction(tmp_path):
    from deployments.llm_gateway.cache import SQLiteCache

    cache = SQLiteCache(tmp_path / "c.db", ttl=0, max_entries=10)
    await cache.put("k", "m", {"x": 1})
    await cache.flush()
    assert await cache.get("k") is None
    assert await cache.evict() == 1
    await cache.close()


async def test_budget_402_and_charges_priced_model(serve, up1, tmp_path, auth_env):
    cfg = base_config(
        tmp_path,
        one(up1, "gpt-4o"),
        budget={"daily_limit": 0.001, "soft_limit": 0.0005},
        pricing={"gpt-4o": {"input": 10.0, "output": 100.0}},
    )
    gw = await serve(cfg)
    async with gw.client() as c:
        codes = [
            (await c.post("/v1/chat/completions", json=chat("gpt-4o", max_tokens=2))).status_code for _ in range(6)
        ]
        await flush(gw)
        text = (await c.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})).text
    # each request reserves (3 prompt x $10 + 2 x $100) / 1M = $0.00023: four fit in $0.001
    assert codes == [200, 200, 200, 200, 402, 402]
    assert 'llm_proxy_cost_total{endpoint="a",model="gpt-4o"}' in text
    assert 'llm_proxy_token_usage_total{endpoint="a",role="completion"} 8.0' in text
    spent = gw.gateway.handles.budget.instance.state()["spent"]
    assert abs(spent - 4 * 0.00023) < 1e-9
    assert f"llm_proxy_budget_consumed_usd {spent}" in text


async def test_budget_never_overspent_under_concurrency_across_replicas(serve, up1, tmp_path, auth_env):
    cfg = base_config(
        tmp_path, one(up1, "gpt-4o"), budget={"daily_limit": 0.01}, pricing={"gpt-4o": {"input": 10.0, "output": 100.0}}
    )
    replicas = [await serve(cfg) for _ in range(3)]
    clients = [r.client() for r in replicas]
    try:
        results = await asyncio.gather(
            *(clients[i % 3].post("/v1/chat/completions", json=chat("gpt-4o", max_tokens=2)) for i in range(90))
        )
    finally:
        for cl in clients:
            await cl.aclose()
    for r in replicas:
        await flush(r)
    ok = sum(1 for r in results if r.status_code == 200)
    assert {r.status_code for r in results} == {200, 402}
    spent = replicas[0].gateway.handles.budget.instance.state()["spent"]
    assert ok * 0.00023 <= 0.01 + 1e-12 and spent <= 0.01 + 1e-12
    assert ok >= 30  # leases left idle in one replica must not starve the others for long


async def test_budget_falls_back_to_local_model(serve, up1, up2, tmp_path, auth_env):
    cfg = base_config(
        tmp_path,
        {
            "paid": {"base_url": up1.base_url, "models": ["gpt-4o"]},
            "ollama": {"provider": "ollama", "base_url": up2.base_url, "models": ["llama3"]},
        },
        budget={"daily_limit": 0.0003},
        pricing={"gpt-4o": {"input": 10.0, "output": 100.0}},
        server={"local_model": {"enabled": True, "fallback_threshold": 0.0}},
    )
    gw = await serve(cfg)
    async with gw.client() as c:
        first = await c.post("/v1/chat/completions", json=chat("gpt-4o", max_tokens=2))
        second = await c.post("/v1/chat/completions", json=chat("gpt-4o", max_tokens=2))
    assert first.status_code == 200 and "x-rayfleet-budget-fallback" not in first.headers
    assert second.status_code == 200 and second.headers["x-llm-endpoint"] == "ollama"
    assert "local-model" in second.headers["x-rayfleet-budget-fallback"]
    assert up2.requests()[-1]["body"]["model"] == "llama3"


async def spent_after_settling(gw) -> float:
    """Today's spend once the replica has settled it with the ledger (a stream settles after it ends)."""

    async def spent() -> float:
        await flush(gw)
        return float(gw.gateway.handles.budget.instance.state()["spent"])

    return await eventually(spent, timeout=5, interval=0.1, what="today's spend settled with the ledger")


async def test_streamed_usage_charged_even_when_client_disconnects(serve, up1, tmp_path, auth_env):
    cfg = base_config(tmp_path, one(up1, "gpt-4o"), pricing={"gpt-4o": {"input": 10.0, "output": 100.0}})
    gw = await serve(cfg)
    up1.faults({"chunk_delay_ms": 100, "times": 1})
    async with gw.client() as c:
        async with c.stream("POST", "/v1/chat/completions", json=chat("gpt-4o", stream=True)) as r:
            async for _ in r.aiter_bytes():
                break  # hang up after the first bytes
    assert await spent_after_settling(gw) > 0
    rows = (
        sqlite3.connect(tmp_path / "gateway.db")
        .execute("SELECT stream, prompt_tokens, completion_tokens, cost_usd FROM llm_requests")
        .fetchall()
    )
    assert rows and rows[0][0] == 1 and rows[0][1] > 0 and rows[0][3] > 0


async def test_stream_settled_when_the_client_leaves_before_the_first_chunk(serve, up1, tmp_path, auth_env):
    """The connection breaks while the 200 is being sent, before any chunk: Starlette then never
    starts the body, and the request must still be charged and recorded (reservation settled)."""
    cfg = base_config(tmp_path, one(up1, "gpt-4o"), pricing={"gpt-4o": {"input": 10.0, "output": 100.0}})
    gw = await serve(cfg)
    body = json.dumps(chat("gpt-4o", stream=True)).encode()
    headers = [
        (b"host", b"gateway.test"),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"authorization", f"Bearer {INFER_KEY}".encode()),
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/chat/completions",
        "raw_path": b"/v1/chat/completions",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 80),
    }
    incoming = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[int] = []

    async def receive() -> dict:
        if incoming:
            return incoming.pop(0)
        await asyncio.sleep(3600)  # a client that never says more: the send below breaks first
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            sent.append(message["status"])
            if message["status"] == 200:
                raise OSError("connection reset by peer")

    with contextlib.suppress(Exception):
        await gw.app(scope, receive, send)
    assert sent[0] == 200
    assert await spent_after_settling(gw) > 0
    rows = sqlite3.connect(tmp_path / "gateway.db").execute("SELECT stream, prompt_tokens FROM llm_requests").fetchall()
    assert rows and rows[0][0] == 1 and rows[0][1] > 0


async def test_records_in_sqlite_with_ttft(serve, up1, tmp_path, auth_env):
    gw = await serve(base_config(tmp_path, one(up1)))
    async with gw.client() as c:
        await c.post("/v1/chat/completions", json=chat("m"))
        await c.post("/v1/chat/completions", json=chat("m", stream=True))

        async def recorded() -> bool:  # the stream's record is written once the stream has settled
            await flush(gw)
            db = sqlite3.connect(tmp_path / "gateway.db")
            try:
                return db.execute("SELECT COUNT(*) FROM llm_requests").fetchone()[0] == 2
            finally:
                db.close()

        await eventually(recorded, what="both requests recorded")
        timeline = await c.get("/api/v1/metrics/ring-timeline", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
        latency = (await c.get("/api/v1/metrics/latency", headers={"Authorization": f"Bearer {ADMIN_KEY}"})).json()
    rows = (
        sqlite3.connect(tmp_path / "gateway.db")
        .execute("SELECT route, status, stream, ttft_ms FROM llm_requests ORDER BY ts")
        .fetchall()
    )
    assert [(r[0], r[1], r[2]) for r in rows] == [("/v1/chat/completions", 200, 0), ("/v1/chat/completions", 200, 1)]
    assert rows[1][3] is not None and rows[1][3] > 0
    traces = timeline.json()["traces"]
    assert set(traces[0]["rings"]) == {"INGRESS", "PRE_FLIGHT", "ROUTING", "POST_FLIGHT", "BACKGROUND"}
    assert latency["rings"]["ROUTING"]["count"] == 2 and latency["ttft"]["samples"] == 1
    assert latency["plugins"]["router"]["invocations"] == 2


async def test_records_in_postgres(serve, up1, tmp_path, auth_env, postgres_dsn, monkeypatch):
    import psycopg

    monkeypatch.setenv("GW_TEST_DSN", postgres_dsn)
    gw = await serve(
        base_config(tmp_path, one(up1), server={"storage": {"type": "postgres", "dsn_env": "GW_TEST_DSN"}})
    )
    rid = uuid.uuid4().hex
    async with gw.client() as c:
        assert (await c.post("/v1/chat/completions", json=chat("m"), headers={"X-Request-ID": rid})).status_code == 200
    await flush(gw)
    with psycopg.connect(postgres_dsn) as conn:
        row = conn.execute("SELECT status, endpoint FROM llm_requests WHERE request_id=%s", (rid,)).fetchone()
    assert row == (200, "a")


async def test_serves_while_postgres_is_down(serve, up1, tmp_path, auth_env, monkeypatch):
    from tests.conftest import free_port

    monkeypatch.setenv("GW_DEAD_DSN", f"postgresql://postgres@127.0.0.1:{free_port()}/test")
    gw = await serve(
        base_config(tmp_path, one(up1), server={"storage": {"type": "postgres", "dsn_env": "GW_DEAD_DSN"}})
    )
    async with gw.client() as c:
        for _ in range(3):
            assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 200
        await flush(gw)
        health = (await c.get("/health")).json()
    assert health["records_store"] == "unavailable" and len(gw.gateway.stores.records.queue) == 3
