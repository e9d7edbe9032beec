"""Exact-match response cache: SQLite file by default, Redis when ``caching.redis_url`` is set.

The key covers the caller's tenant, the request kind, the resolved model and every
generation parameter of the body (everything except ``model``, ``stream`` and
``stream_options``, which do not change the answer). Values are whole non-streaming
responses; a streamed answer is stored after reassembly and replayed as SSE.
Reads are direct (an indexed SQLite lookup or one Redis GET); writes are batched off
the request path. A stored answer is visible to this replica at once, before its
client has the last byte (``put`` fills a bounded in-memory map that ``get`` reads
first), and to the other replicas once the batch is written (every 0.2 s).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from rayfleet.logs import get_logger
from rayfleet.sqlite import connect
from rayfleet.tasks import Wake

log = get_logger("llm_gateway")
V = TypeVar("V")
_EXCLUDED = frozenset({"model", "stream", "stream_options"})
OPT_IN_HEADER = "x-llm-cache"  # "allow": cache this request even though it samples


def deterministic(kind: str, body: dict[str, Any]) -> bool:
    """Whether the same body asks for the same answer: embeddings always; a generation when its
    ``temperature`` is 0 or absent and it asks for one choice (``n`` 1 or absent). Anything else
    samples, and a stored answer would replay one draw to every "regenerate"."""
    if kind == "embeddings":
        return True
    temperature, n = body.get("temperature"), body.get("n")
    return temperature in (None, 0) and n in (None, 1) and not isinstance(temperature, bool)


def cache_key(tenant: str, kind: str, model: str, body: dict[str, Any]) -> str:
    params = {k: v for k, v in body.items() if k not in _EXCLUDED}
    blob = json.dumps([tenant, kind, model, params], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class ExpiringMap(Generic[V]):
    """A bounded map whose entries expire ``ttl`` seconds after they were put; the least recently
    used entry goes first when it is full (the cache's recent answers, the negative cache)."""

    def __init__(self, ttl: float, size: int = 10_000, clock: Callable[[], float] = time.time) -> None:
        self.ttl = ttl
        self.size = size
        self._clock = clock
        self._items: OrderedDict[str, tuple[float, V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def trim(self) -> None:
        while len(self._items) > max(0, self.size):
            self._items.popitem(last=False)

    def put(self, key: str, value: V) -> None:
        self._items[key] = (self._clock() + self.ttl, value)
        self._items.move_to_end(key)
        self.trim()

    def get(self, key: str) -> V | None:
        item = self._items.get(key)
        if item is None:
            return None
        if item[0] <= self._clock():
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return item[1]


class SQLiteCache:
    def __init__(self, path: Path, ttl: int, max_entries: int) -> None:
        self.path = path
        self.ttl = ttl
        self.max_entries = max_entries
        self.recent: ExpiringMap[dict[str, Any]] = ExpiringMap(ttl)
        self._db = connect(path, autocommit=True, row_factory=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS response_cache (cache_key TEXT PRIMARY KEY, response TEXT NOT NULL,"
            " model TEXT, created_at REAL NOT NULL, expires_at REAL NOT NULL)"
        )
        self._db.execute("CREATE INDEX IF NOT EXISTS response_cache_expiry ON response_cache(expires_at)")
        self._pending: list[tuple[str, str, str, float, float]] = []
        self.wake = Wake()  # set by ``put``: the batched writes wait for ``flush``
        self._lock = asyncio.Lock()

    async def get(self, key: str) -> dict[str, Any] | None:
        hit = self.recent.get(key)
        if hit is not None:
            return hit
        row = self._db.execute(
            "SELECT response FROM response_cache WHERE cache_key=? AND expires_at>?", (key, time.time())
        ).fetchone()
        return json.loads(row[0]) if row else None

    async def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        now = time.time()
        self.recent.put(key, response)
        self._pending.append((key, json.dumps(response), model, now, now + self.ttl))
        self.wake.set()

    def _write(self, rows: list[tuple[str, str, str, float, float]]) -> None:
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO response_cache VALUES (?,?,?,?,?)", rows)

    async def flush(self) -> None:
        rows, self._pending = self._pending, []
        if rows:
            async with self._lock:
                await asyncio.to_thread(self._write, rows)

    def _evict(self) -> int:
        with self._db:
            removed = self._db.execute("DELETE FROM response_cache WHERE expires_at<=?", (time.time(),)).rowcount
            count = self._db.execute("SELECT COUNT(*) FROM response_cache").fetchone()[0]
            if count > self.max_entries:
                removed += self._db.execute(
                    "DELETE FROM response_cache WHERE cache_key IN (SELECT cache_key FROM response_cache"
                    " ORDER BY created_at LIMIT ?)",
                    (count - self.max_entries,),
                ).rowcount
        return removed

    async def evict(self) -> int:
        async with self._lock:
            return await asyncio.to_thread(self._evict)

    async def close(self) -> None:
        await self.flush()
        self._db.close()


class RedisCache:
    PREFIX = "llmgw:cache:"

    def __init__(self, url: str, ttl: int, socket_timeout: float, connect_timeout: float) -> None:
        import redis.asyncio as aioredis

        self.ttl = ttl
        self.recent: ExpiringMap[dict[str, Any]] = ExpiringMap(ttl)
        self._client = aioredis.from_url(url, socket_timeout=socket_timeout, socket_connect_timeout=connect_timeout)
        self._pending: list[tuple[str, str]] = []
        self.wake = Wake()  # set by ``put``: the batched writes wait for ``flush``
        self._warned = False

    def _down(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            log.warning("redis cache unavailable; serving without cache", extra={"error": type(exc).__name__})

    async def get(self, key: str) -> dict[str, Any] | None:
        hit = self.recent.get(key)
        if hit is not None:
            return hit
        try:
            raw = await self._client.get(self.PREFIX + key)
        except Exception as exc:
            self._down(exc)
            return None
        self._warned = False
        return json.loads(raw) if raw else None

    async def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        self.recent.put(key, response)
        self._pending.append((key, json.dumps(response)))
        self.wake.set()

    async def flush(self) -> None:
        rows, self._pending = self._pending, []
        if not rows:
            return
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for key, value in rows:
                    pipe.set(self.PREFIX + key, value, ex=self.ttl)
                await pipe.execute()
        except Exception as exc:
            self._down(exc)

    async def evict(self) -> int:
        return 0  # Redis expires entries itself (EX = ttl)

    async def close(self) -> None:
        await self.flush()
        await self._client.aclose()


def replay_chunks(kind: str, response: dict[str, Any], include_usage: bool, piece: int = 16) -> list[bytes]:
    """SSE events that stream a stored response: role, content pieces, finish, usage, [DONE]."""
    cid, model, created = response.get("id", ""), response.get("model", ""), response.get("created", 0)
    obj = "text_completion" if kind == "completions" else "chat.completion.chunk"
    out: list[bytes] = []

    def emit(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> None:
        payload: dict[str, Any] = {"id": cid, "object": obj, "created": created, "model": model, "choices": choices}
        if usage is not None:
            payload["usage"] = usage
        out.append(b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n")

    for choice in response.get("choices") or []:
        idx = choice.get("index", 0)
        if kind == "completions":
            text = choice.get("text") or ""
            for i in range(0, len(text), piece):
                emit([{"index": idx, "text": text[i : i + piece], "finish_reason": None}])
            emit([{"index": idx, "text": "", "finish_reason": choice.get("finish_reason")}])
            continue
        message = choice.get("message") or {}
        emit([{"index": idx, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        text = message.get("content") or ""
        for i in range(0, len(text), piece):
            emit([{"index": idx, "delta": {"content": text[i : i + piece]}, "finish_reason": None}])
        for n, call in enumerate(message.get("tool_calls") or []):
            emit([{"index": idx, "delta": {"tool_calls": [{"index": n, **call}]}, "finish_reason": None}])
        emit([{"index": idx, "delta": {}, "finish_reason": choice.get("finish_reason")}])
    if include_usage and response.get("usage"):
        emit([], response["usage"])
    out.append(b"data: [DONE]\n\n")
    return out
