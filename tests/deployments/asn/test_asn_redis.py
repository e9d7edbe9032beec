"""Tier 2: the Redis Lua limiter against the real Redis server on loopback."""

from __future__ import annotations

import asyncio
import socket
import threading
import uuid

import pytest
import redis.asyncio as aioredis

from deployments.asn.app import create_app
from deployments.asn.limiter import LimiterUnavailable, RedisLimiter
from tests.conftest import free_port
from tests.deployments.asn.conftest import API_KEY, client_for, tiny_config
from tests.polling import eventually

pytestmark = pytest.mark.realserver


@pytest.fixture
async def prefix(redis_url):
    value = f"test:asn:rl:{uuid.uuid4().hex[:8]}:"
    yield value
    client = aioredis.Redis.from_url(redis_url)
    keys = [k async for k in client.scan_iter(match=value + "*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()


async def test_exact_under_concurrency_from_two_replicas(redis_url, prefix):
    # a generous timeout: this test is about exactness, and a loaded machine must not turn it into fail-open
    replicas = [RedisLimiter(redis_url, 100, 60, key_prefix=prefix, timeout=15.0) for _ in range(2)]
    try:
        decisions = await asyncio.gather(*(replicas[i % 2].hit("203.0.113.1") for i in range(260)))
    finally:
        for r in replicas:
            await r.close()
    allowed = [d for d in decisions if d.allowed]
    assert len(allowed) == 100
    assert sorted(d.count for d in allowed) == list(range(1, 101))
    denied = [d for d in decisions if not d.allowed]
    assert all(d.remaining == 0 and 1 <= d.retry_after <= 60 for d in denied)
    client = aioredis.Redis.from_url(redis_url)
    assert await client.zcard(prefix + "203.0.113.1") == 100
    ttl = await client.pttl(prefix + "203.0.113.1")
    await client.aclose()
    assert 0 < ttl <= 61_000


async def _redis_us(redis_url: str, at_least: int) -> bool:
    """True once Redis' own clock (what the limiter reads) has reached ``at_least`` µs."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        seconds, micros = await client.time()
    finally:
        await client.aclose()
    return seconds * 1_000_000 + micros >= at_least


async def test_reset_and_retry_after_come_from_the_oldest_entry(redis_url, prefix):
    limiter = RedisLimiter(redis_url, 2, 30, key_prefix=prefix)
    try:
        first = await limiter.hit("ip")
        await eventually(lambda: _redis_us(redis_url, first.now_us + 1_100_000), what="Redis' clock 1.1 s later")
        second = await limiter.hit("ip")
        denied = await limiter.hit("ip")
    finally:
        await limiter.close()
    assert first.allowed and second.allowed and not denied.allowed
    # reset = oldest (first) + window, from Redis' clock: not refreshed by later hits
    assert first.reset_us == second.reset_us == denied.reset_us == first.now_us + 30_000_000
    assert denied.retry_after == -(-(denied.reset_us - denied.now_us) // 1_000_000)
    assert denied.retry_after <= 29


async def test_window_slides(redis_url, prefix):
    limiter = RedisLimiter(redis_url, 1, 0.5, key_prefix=prefix)
    try:
        assert (await limiter.hit("ip")).allowed
        assert not (await limiter.hit("ip")).allowed

        async def allowed() -> bool:  # a refused hit is not recorded: polling does not hold the window
            return (await limiter.hit("ip")).allowed

        await eventually(allowed, timeout=5, what="the window slid past the first hit")
    finally:
        await limiter.close()


def unreachable_url() -> str:
    return f"redis://127.0.0.1:{free_port()}/0"


async def test_redis_down_fails_open_by_default():
    limiter = RedisLimiter(unreachable_url(), 5, 60, on_store_error="open")
    try:
        decisions = [await limiter.hit("ip") for _ in range(8)]
        health = await limiter.ping()
    finally:
        await limiter.close()
    assert all(d.allowed and d.remaining == 5 for d in decisions)
    assert limiter.last_error is not None
    assert health["status"] == "down" and health["backend"] == "redis"


class RefusingStore:
    """A TCP port that accepts each connection and closes it at once, counting them: a Redis that is
    down in the way a client notices at once."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.listener.getsockname()[1]}/0"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # closed by the test
                return
            self.accepted += 1
            conn.close()


async def test_redis_down_fails_closed_when_configured():
    store = RefusingStore()
    limiter = RedisLimiter(store.url, 5, 60, on_store_error="closed", retry_interval=3600)
    try:
        with pytest.raises(LimiterUnavailable):
            await limiter.hit("ip")
        tried = store.accepted
        assert tried >= 1
        for _ in range(3):  # within the retry interval: refused without a new connection attempt
            with pytest.raises(LimiterUnavailable):
                await limiter.hit("ip")
        assert store.accepted == tried
    finally:
        await limiter.close()
        store.listener.close()


async def test_apps_sharing_redis_limit_together(tmp_path, tiny_pkg, redis_url, prefix):
    apps = [
        create_app(tiny_config(tmp_path, tiny_pkg, limit=3, redis_url=redis_url, key_prefix=prefix)) for _ in range(2)
    ]
    for app in apps:
        assert app.state.component.dataset.wait(30)
    async with client_for(apps[0], ip="192.0.2.90") as a, client_for(apps[1], ip="192.0.2.90") as b:
        responses = [
            await (a if i % 2 else b).get("/api/v1/asn/15169", headers={"X-API-Key": API_KEY}) for i in range(5)
        ]
        health = await a.get("/api/health")
    for app in apps:
        await app.state.component.limiter.close()
    assert [r.status_code for r in responses] == [200, 200, 200, 429, 429]
    assert [r.headers["x-ratelimit-remaining"] for r in responses] == ["2", "1", "0", "0", "0"]
    assert int(responses[3].headers["retry-after"]) in range(55, 61)
    assert responses[3].json()["code"] == "RATE_LIMITED"
    assert health.status_code == 429  # the health check counts too


@pytest.mark.parametrize("policy, lookup_status", [("open", 200), ("closed", 503)])
async def test_app_with_redis_down(tmp_path, tiny_pkg, policy, lookup_status):
    app = create_app(tiny_config(tmp_path, tiny_pkg, redis_url=unreachable_url(), on_store_error=policy))
    assert app.state.component.dataset.wait(30)
    async with client_for(app) as client:
        lookup = await client.get("/api/v1/asn/15169", headers={"X-API-Key": API_KEY})
        health = await client.get("/api/health")
    await app.state.component.limiter.close()
    assert lookup.status_code == lookup_status
    if policy == "closed":
        assert lookup.json()["code"] == "HTTP_503" and int(lookup.headers["retry-after"]) >= 1
        assert health.status_code == 503 and health.json()["dependencies"]["redis"]["status"] == "down"
    else:
        assert lookup.headers["x-ratelimit-limit"] == "100" and lookup.headers["x-ratelimit-remaining"] == "100"
        body = health.json()
        assert health.status_code == 503 and body["status"] == "degraded"
        assert body["dependencies"]["redis"]["status"] == "down"
        assert body["dependencies"]["dataset"]["status"] == "up"


async def test_health_with_redis_up(tmp_path, tiny_pkg, redis_url, prefix):
    app = create_app(tiny_config(tmp_path, tiny_pkg, redis_url=redis_url, key_prefix=prefix))
    assert app.state.component.dataset.wait(30)
    async with client_for(app) as client:
        health = await client.get("/api/health")
    await app.state.component.limiter.close()
    assert health.status_code == 200
    assert health.json()["dependencies"]["redis"] == {"status": "up", "backend": "redis"}


async def test_a_weighted_hit_is_all_or_none_in_redis(redis_url, prefix):
    """A bulk request's addresses go into the window as that many entries, or none at all."""
    limiter = RedisLimiter(redis_url, 10, 60, key_prefix=prefix, timeout=15.0)
    try:
        first = await limiter.hit("203.0.113.2", 4)
        second = await limiter.hit("203.0.113.2", 5)
        refused = await limiter.hit("203.0.113.2", 3)
        last = await limiter.hit("203.0.113.2")
        big = await limiter.hit("203.0.113.3", 2500)  # more members than one ZADD chunk
    finally:
        await limiter.close()
    assert (first.allowed, first.count, second.allowed, second.count) == (True, 4, True, 9)
    assert (refused.allowed, refused.count) == (False, 9)
    # 3 fit once 2 entries leave: the first batch's, at first.now_us + window
    assert refused.reset_us == first.now_us + 60_000_000
    assert (last.allowed, last.count, last.remaining) == (True, 10, 0)
    assert not big.allowed and big.count == 0
    client = aioredis.Redis.from_url(redis_url)
    assert await client.zcard(prefix + "203.0.113.2") == 10
    await client.aclose()
    wide = RedisLimiter(redis_url, 5000, 60, key_prefix=prefix, timeout=15.0)
    try:
        many = await wide.hit("203.0.113.4", 2500)
    finally:
        await wide.close()
    client = aioredis.Redis.from_url(redis_url)
    assert many.allowed and await client.zcard(prefix + "203.0.113.4") == 2500
    await client.aclose()
