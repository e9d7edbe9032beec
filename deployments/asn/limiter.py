"""Per-client-IP rate limiting for the ASN API: Redis Lua script or the shared actor.

Both stores implement the same exact sliding-window log (see actors/rate_limit.py)
and take the time from one clock (Redis `TIME`, or the actor's process), so
replicas on different nodes never disagree about the window.

When Redis is configured but unreachable, `on_store_error` decides:
  open    the request is served; headers show the full limit (nothing was counted)
  closed  the request gets 503 with `Retry-After`
After a failure Redis is not retried for `retry_interval` seconds, so an outage
costs one connection attempt per interval rather than one per request.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable
from typing import Any, Protocol, cast

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from actors.rate_limit import US, RateLimitWindow, WindowDecision
from rayfleet.logs import get_logger
from rayfleet.state import ActorHandle, call

log = get_logger("asn")

# KEYS[1] = log key; ARGV = limit, window in µs, unique member prefix, cost (hits to record).
# Sliding-window log on a sorted set scored by Redis' own clock (µs): drop expired
# entries, count, add `cost` entries if they all fit under the limit, and report when the
# window resets (a refused hit: when enough of the oldest entries leave for it to fit).
SLIDING_WINDOW_LUA = """
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[4] or '1')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count + cost <= limit then
  local i = 1
  while i <= cost do
    local args = {}
    local last = math.min(cost, i + 999)
    for j = i, last do
      args[#args + 1] = now
      args[#args + 1] = ARGV[3] .. ':' .. j
    end
    redis.call('ZADD', key, unpack(args))
    i = last + 1
  end
  count = count + cost
  allowed = 1
end
local reset = now + window
local index = 0
if allowed == 0 and cost > 1 then
  index = math.max(math.min(count, count + cost - limit), 1) - 1
end
local oldest = redis.call('ZRANGE', key, index, index, 'WITHSCORES')
if oldest[2] then
  reset = tonumber(oldest[2]) + window
end
if count > 0 then
  redis.call('PEXPIRE', key, math.ceil(window / 1000) + 1000)
end
return {allowed, count, string.format('%.0f', now), string.format('%.0f', reset)}
"""


class LimiterUnavailable(RuntimeError):
    """The shared store could not be reached and the policy is to fail closed."""


def open_decision(limit: int, window_us: int) -> WindowDecision:
    """What a failed-open request reports: nothing counted, a full window ahead."""
    now = time.time_ns() // 1000
    return WindowDecision(allowed=True, limit=limit, count=0, now_us=now, reset_us=now + window_us)


class Limiter(Protocol):
    limit: int
    window_us: int

    def open_decision(self) -> WindowDecision: ...

    async def hit(self, client: str, cost: int = 1) -> WindowDecision: ...

    async def ping(self) -> dict[str, Any]: ...

    async def close(self) -> None: ...


class RedisLimiter:
    """Redis sorted-set sliding window, evaluated atomically by one Lua script."""

    def __init__(
        self,
        url: str,
        limit: int,
        window_seconds: float,
        key_prefix: str = "rayfleet:asn:rl:",
        on_store_error: str = "open",
        retry_interval: float = 1.0,
        timeout: float = 1.0,
        max_connections: int = 64,
    ) -> None:
        self.limit = limit
        self.window_us = int(window_seconds * US)
        self.key_prefix = key_prefix
        self.on_store_error = on_store_error
        self.retry_interval = retry_interval
        # A bounded pool queues bursts on a few connections instead of opening hundreds,
        # which under load would turn into timeouts (and so into fail-open/closed decisions).
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=timeout,
            socket_connect_timeout=timeout,
            socket_timeout=timeout,
            health_check_interval=30,
        )
        self._pool = pool
        self._client = aioredis.Redis(connection_pool=pool)
        self._script = self._client.register_script(SLIDING_WINDOW_LUA)
        self._down_until = 0.0
        self.last_error: str | None = None

    async def hit(self, client: str, cost: int = 1) -> WindowDecision:
        """Record `cost` hits (a bulk request's items) if all fit; `cost` is 1 for a plain request."""
        if time.monotonic() < self._down_until:
            return self._unavailable()
        try:
            allowed, count, now, reset = await self._script(
                keys=[self.key_prefix + client], args=[self.limit, self.window_us, uuid.uuid4().hex, cost]
            )
        except (RedisError, OSError) as exc:
            self._down_until = time.monotonic() + self.retry_interval
            self.last_error = type(exc).__name__
            log.warning("rate-limit store unreachable", extra={"error": self.last_error, "policy": self.on_store_error})
            return self._unavailable()
        self.last_error = None
        return WindowDecision(
            allowed=bool(allowed), limit=self.limit, count=int(count), now_us=int(now), reset_us=int(reset)
        )

    def _unavailable(self) -> WindowDecision:
        if self.on_store_error == "closed":
            raise LimiterUnavailable("rate-limit store unreachable")
        return self.open_decision()

    def open_decision(self) -> WindowDecision:
        return open_decision(self.limit, self.window_us)

    async def ping(self) -> dict[str, Any]:
        """Health: a real PING, independent of the backoff used on the request path."""
        try:
            await cast(Awaitable[bool], self._client.ping())
        except (RedisError, OSError) as exc:
            return {"status": "down", "backend": "redis", "error": type(exc).__name__}
        return {"status": "up", "backend": "redis"}

    async def close(self) -> None:
        await self._client.aclose()
        await self._pool.disconnect()


class ActorLimiter:
    """The named `RateLimitWindow` actor (or its in-process stand-in outside Ray).

    Hits are coalesced: while one actor call is in flight, the hits that arrive
    queue up and travel together in the next `hit_many` call. The actor still
    decides them one by one, in arrival order, so limiting stays exact; a replica
    never has more than one call outstanding, so under load the actor handles
    a few large calls instead of one small call per request.
    """

    def __init__(
        self,
        handle: ActorHandle[RateLimitWindow],
        limit: int,
        window_seconds: float,
        key_prefix: str = "asn:",
        max_batch: int = 512,
    ) -> None:
        self.limit = limit
        self.window_seconds = window_seconds
        self.window_us = int(window_seconds * US)
        self.key_prefix = key_prefix
        self.max_batch = max_batch
        self._handle = handle
        self._pending: list[tuple[str, int, asyncio.Future[WindowDecision]]] = []
        self._flushing = False

    def open_decision(self) -> WindowDecision:
        return open_decision(self.limit, self.window_us)

    async def hit(self, client: str, cost: int = 1) -> WindowDecision:
        future: asyncio.Future[WindowDecision] = asyncio.get_running_loop().create_future()
        self._pending.append((self.key_prefix + client, cost, future))
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch :]
                try:
                    decisions = await call(
                        self._handle,
                        RateLimitWindow.hit_many,
                        [key for key, _, _ in batch],
                        self.limit,
                        self.window_seconds,
                        [cost for _, cost, _ in batch],
                    )
                except Exception as exc:  # each waiting request applies the store-error policy
                    for _, _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (_, _, future), decision in zip(batch, decisions, strict=False):
                    if not future.done():
                        future.set_result(decision)
        finally:
            self._flushing = False

    async def ping(self) -> dict[str, Any]:
        try:
            await call(self._handle, RateLimitWindow.size)
        except Exception as exc:  # any actor failure is "down" for health purposes
            return {"status": "down", "backend": "actor", "error": type(exc).__name__}
        return {"status": "up", "backend": "actor"}

    async def close(self) -> None:
        return None


__all__ = ["SLIDING_WINDOW_LUA", "ActorLimiter", "Limiter", "LimiterUnavailable", "RedisLimiter", "open_decision"]
