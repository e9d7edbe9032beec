"""A durable webhook delivery queue: what the LLM gateway and the mitigation fleet deliver through.

A delivery is ``(endpoint name, event)``; the event is any JSON object with an ``"id"``. The
owner says how an endpoint is called (``prepare(delivery)`` → ``Outgoing``: URL, body bytes,
headers, signature included) and the queue does the rest:

- every change is recorded with ``rayfleet.durable`` before it takes effect: a queued delivery
  before ``add`` returns, each failed attempt, each removal (delivered or dead). An owner whose
  process was killed replays the record and delivers what was pending, in the order it was
  queued, with its attempt count. A delivery leaves the queue only on a 2xx answer, so delivery
  is at-least-once: a receiver deduplicates by the event id the owner puts in a header;
- a failed attempt is retried after ``base_delay``, doubling up to ``max_delay``, until
  ``max_attempts`` attempts; then it is counted ``dead`` and dropped;
- each endpoint has its own worker, so one that hangs holds up only its own deliveries;
- ``seen``/``mark_seen`` remember the latest ``SEEN_IDS`` event ids, for owners whose events may
  arrive twice (several replicas reporting one event).

``signature(secret, *fields, body=)`` is the one HMAC-SHA256 both owners sign with:
the hex digest of ``"<field>.<field>.…<body>"``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from rayfleet.durable import DurableState, Op, RecordStore
from rayfleet.logs import get_logger

SEEN_IDS = 10_000
MAX_QUEUE = 10_000


def signature(secret: str, *fields: str, body: bytes) -> str:
    """The hex HMAC-SHA256 under ``secret`` of each field followed by ``.``, then the exact body."""
    signed = "".join(f"{field}." for field in fields).encode() + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


@dataclass(eq=False)
class Delivery:
    key: str
    endpoint: str
    event: dict[str, Any]
    attempts: int = 0
    due: float = 0.0


@dataclass(frozen=True)
class Outgoing:
    """One POST: where, the exact bytes, and the headers (the signature among them)."""

    url: str
    body: bytes
    headers: dict[str, str]


def _initial() -> dict[str, Any]:
    return {"endpoints": [], "pending": {}, "next": 0}


def _apply(state: dict[str, Any], op: Op) -> None:
    """One recorded change of the queue (replayed on restart, so deterministic)."""
    kind = op["op"]
    if kind == "endpoints":
        state["endpoints"] = op["endpoints"]
    elif kind == "queue":
        for endpoint, event in op["deliveries"]:
            key = f"{state['next']:012d}"  # keys sort in queue order, also after a snapshot
            state["next"] += 1
            state["pending"][key] = {"endpoint": endpoint, "event": event, "attempts": 0}
    elif kind == "attempt":
        if op["key"] in state["pending"]:
            state["pending"][op["key"]]["attempts"] = op["attempts"]
    elif kind == "done":
        for key in op["keys"] if "keys" in op else [op["key"]]:
            state["pending"].pop(key, None)
    else:
        raise ValueError(f"not a webhook queue operation: {kind!r}")


class DeliveryQueue:
    """The queue of one owner (an actor), on its own stream of ``store``.

    ``store`` is called when the record is first needed (inside the owner's process, so a DSN
    never travels as an argument); ``prepare`` returns None for an endpoint that is gone (the
    delivery is dead). ``stats``: queued, delivered, retried, dead, duplicates, restored."""

    def __init__(
        self,
        store: Callable[[], RecordStore],
        stream: str,
        prepare: Callable[[Delivery], Outgoing | None],
        *,
        max_attempts: int = 8,
        base_delay: float = 0.5,
        max_delay: float = 60.0,
        timeout: float = 5.0,
        max_queue: int = MAX_QUEUE,
        component: str = "rayfleet",
    ) -> None:
        self.max_attempts, self.base_delay, self.max_delay = max_attempts, base_delay, max_delay
        self.timeout, self.max_queue = timeout, max_queue
        self._store, self._stream, self._prepare = store, stream, prepare
        self._log = get_logger(component)
        self._durable: DurableState[dict[str, Any]] | None = None
        self.queue: dict[str, Delivery] = {}
        self._seen: OrderedDict[str, None] = OrderedDict()
        self.stats = {"queued": 0, "delivered": 0, "retried": 0, "dead": 0, "duplicates": 0, "restored": 0}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._wakes: dict[str, asyncio.Event] = {}

    # -- the durable record --------------------------------------------------------
    def record(self) -> DurableState[dict[str, Any]]:
        """The record, opened (and replayed) on first use; raises while the store is unavailable."""
        if self._durable is None:
            durable = DurableState(
                self._store(), self._stream, initial=_initial, apply=_apply, dump=dict, load=dict, snapshot_every=500
            )
            self._durable = durable
            for key, item in sorted(durable.state["pending"].items()):
                self.queue[key] = Delivery(key, item["endpoint"], item["event"], item["attempts"])
                self._mark_seen(item["event"]["id"])
            self.stats["restored"] = len(self.queue)
            if self.queue:
                self._log.info("webhook queue restored", extra={"pending": len(self.queue)})
        return self._durable

    def endpoints(self) -> list[dict[str, Any]]:
        return list(self.record().state["endpoints"])

    def set_endpoints(self, endpoints: list[dict[str, Any]]) -> None:
        """Record the owner's endpoint list (what a restarted owner resolves again), when it changed."""
        record = self.record()
        if endpoints != record.state["endpoints"]:
            record.record({"op": "endpoints", "endpoints": endpoints})

    def _mark_seen(self, event_id: str) -> None:
        self._seen[event_id] = None
        while len(self._seen) > SEEN_IDS:
            self._seen.popitem(last=False)

    def seen(self, event_id: str) -> bool:
        """Whether an event of this id was queued lately (or is pending from before a restart)."""
        return event_id in self._seen

    def mark_seen(self, event_ids: list[str]) -> None:
        """Remember these ids as queued (call it once ``add`` recorded them)."""
        for event_id in event_ids:
            self._mark_seen(event_id)

    # -- calls -----------------------------------------------------------------------
    def add(self, deliveries: list[tuple[str, dict[str, Any]]]) -> int:
        """Queue ``(endpoint, event)`` pairs, recorded durably when this returns (beyond ``max_queue``
        pending, a delivery is counted dead instead). Returns the deliveries queued."""
        record = self.record()
        room = max(0, self.max_queue - len(self.queue))
        kept = deliveries[:room]
        self.stats["dead"] += len(deliveries) - len(kept)
        if kept:
            first = record.state["next"]
            record.record({"op": "queue", "deliveries": kept})
            for i, (endpoint, event) in enumerate(kept):
                key = f"{first + i:012d}"
                self.queue[key] = Delivery(key, endpoint, event)
            self.stats["queued"] += len(kept)
        self.kick()
        return len(kept)

    def drop_all(self) -> None:
        """Forget every pending delivery (an owner removed on purpose)."""
        if self.queue:
            self.record().record({"op": "done", "keys": sorted(self.queue)})
            self.queue.clear()

    async def close(self) -> None:
        """Stop the workers; what is pending stays recorded for the next owner."""
        workers = list(self._workers.values())
        self._workers.clear()
        for worker in workers:
            worker.cancel()
        for worker in workers:
            with contextlib.suppress(asyncio.CancelledError):
                await worker

    # -- delivery --------------------------------------------------------------------
    def kick(self) -> None:
        """Wake (or start) one worker per endpoint with something queued."""
        for name in {d.endpoint for d in self.queue.values()}:
            self._wakes.setdefault(name, asyncio.Event()).set()
            worker = self._workers.get(name)
            if worker is None or worker.done():
                self._workers[name] = asyncio.get_running_loop().create_task(self._worker(name))

    async def _worker(self, name: str) -> None:
        """Delivers one endpoint's queue in order; ends when it is empty."""
        wake = self._wakes[name]
        async with httpx.AsyncClient(timeout=self.timeout, trust_env=False, follow_redirects=False) as client:
            while True:
                now = time.monotonic()
                for delivery in [d for d in self.queue.values() if d.endpoint == name and d.due <= now]:
                    try:
                        await self._deliver(client, delivery)
                    except Exception as exc:  # the store refused a write: keep it queued, try again later
                        self._log.warning("webhook queue store failed", extra={"error": type(exc).__name__})
                        delivery.due = time.monotonic() + self.max_delay
                pending = [d.due for d in self.queue.values() if d.endpoint == name]
                if not pending:
                    return
                wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), max(0.01, min(pending) - time.monotonic()))

    def _remove(self, delivery: Delivery, outcome: str) -> None:
        self.record().record({"op": "done", "key": delivery.key})
        self.queue.pop(delivery.key, None)
        self.stats[outcome] += 1

    async def _deliver(self, client: httpx.AsyncClient, delivery: Delivery) -> None:
        outgoing = self._prepare(delivery)
        if outgoing is None:
            self._remove(delivery, "dead")
            return
        delivery.attempts += 1
        try:
            response = await client.post(outgoing.url, content=outgoing.body, headers=outgoing.headers)
            ok = 200 <= response.status_code < 300
        except httpx.HTTPError:
            ok = False
        if ok:
            self._remove(delivery, "delivered")
            return
        if delivery.attempts >= self.max_attempts:
            self._remove(delivery, "dead")
            self._log.warning(
                "webhook given up", extra={"webhook": delivery.endpoint, "event_id": delivery.event["id"]}
            )
            return
        self.record().record({"op": "attempt", "key": delivery.key, "attempts": delivery.attempts})
        self.stats["retried"] += 1
        delivery.due = time.monotonic() + min(self.max_delay, self.base_delay * 2 ** (delivery.attempts - 1))
