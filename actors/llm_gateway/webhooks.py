"""Webhook delivery (spec 001 §6): one named actor queues every event and delivers it.

Replicas push batches of events (``enqueue``); the actor fans each out to the configured
endpoints whose ``events`` filter takes it (an empty filter takes all), formats it for
the endpoint's ``target`` (``generic`` JSON, ``slack``, ``discord``, ``teams``) and POSTs
it with the header ``X-Rayfleet-Event-Id``. A delivery leaves the queue only on a 2xx
answer (at-least-once: a receiver may see an event twice and deduplicates by its id);
failures are retried with exponential backoff (``base_delay`` doubling, at most
``max_delay``) up to ``max_attempts``, then counted as dead. Events with an id already
seen (several replicas reporting the same breaker event) are queued once. Each
endpoint's URL is read from its ``url_env`` variable here, in the actor, so it never
travels as an argument or appears in a response.

Every delivery is signed: ``X-Rayfleet-Timestamp`` (Unix seconds of the attempt) and
``X-Rayfleet-Signature: v1=<hex HMAC-SHA256(secret, "<event id>.<timestamp>.<body>")>``
over the exact body bytes sent, with the secret in the endpoint's ``secret_env`` variable
(read here, like the URL). A receiver recomputes it, compares in constant time and
refuses old timestamps (replays). An endpoint whose secret is not set is not delivered to.

The queue is durable (``rayfleet.durable``, stream ``llm_gateway/webhooks``): the
endpoints and every queued delivery are recorded before ``enqueue`` returns, each failed
attempt and each removal (delivered or dead) is recorded too. A restarted actor replays
the record and delivers what was pending, in the order it was queued, with its attempt
count; its loop starts on the first call it gets (replicas' feeds call at least every
``WebhookFeed.tick`` seconds). Each target has its own worker: targets are delivered to
concurrently, each in queue order.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import httpx

from actors.llm_gateway.durable_store import record_store
from rayfleet.durable import DurableState, Op
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

SEEN_IDS = 10_000
MAX_QUEUE = 10_000
STREAM = "llm_gateway/webhooks"


def _summary(event: dict[str, Any]) -> str:
    data = ", ".join(f"{k}={v}" for k, v in sorted(event.get("data", {}).items()))
    return f"rayfleet LLM gateway: {event['type']}" + (f" ({data})" if data else "")


def formatted(target: str, event: dict[str, Any]) -> dict[str, Any]:
    """The JSON body ``target`` expects for ``event``."""
    text = _summary(event)
    if target == "slack":
        return {"text": text}
    if target == "discord":
        return {"content": text[:2000]}
    if target == "teams":
        return {
            "@type": "MessageCard",
            "@context": "https://schema.org/extensions",
            "summary": event["type"],
            "title": f"rayfleet LLM gateway: {event['type']}",
            "text": text,
        }
    return event


def signature(secret: str, event_id: str, timestamp: str, body: bytes) -> str:
    """``v1=`` and the hex HMAC-SHA256 of ``<event id>.<timestamp>.<body>`` under ``secret``."""
    signed = f"{event_id}.{timestamp}.".encode() + body
    return "v1=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


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
        state["pending"].pop(op["key"], None)
    else:
        raise ValueError(f"not a webhook queue operation: {kind!r}")


@dataclass(eq=False)
class Delivery:
    key: str
    endpoint: str
    event: dict[str, Any]
    attempts: int = 0
    due: float = 0.0


class WebhookQueue:
    """The actor. ``store`` is the gateway's storage spec (``durable_store.open_gateway_store``);
    ``None`` uses the platform's store (``rayfleet.durable.open_store``)."""

    def __init__(
        self,
        max_attempts: int = 8,
        base_delay: float = 0.5,
        max_delay: float = 60.0,
        store: dict[str, Any] | None = None,
        stream: str = STREAM,
    ) -> None:
        self.max_attempts, self.base_delay, self.max_delay = max_attempts, base_delay, max_delay
        self._store_spec, self._stream = store, stream
        self._durable: DurableState[dict[str, Any]] | None = None
        self._endpoints: dict[str, dict[str, Any]] = {}
        self._queue: dict[str, Delivery] = {}
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._stats = {"queued": 0, "delivered": 0, "retried": 0, "dead": 0, "duplicates": 0, "restored": 0}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._wakes: dict[str, asyncio.Event] = {}

    # -- the durable record --------------------------------------------------------
    def _record(self) -> DurableState[dict[str, Any]]:
        """The record, opened (and replayed) on first use; raises while the store is unavailable."""
        if self._durable is None:
            durable = DurableState(
                record_store(self._store_spec),
                self._stream,
                initial=_initial,
                apply=_apply,
                dump=dict,
                load=dict,
                snapshot_every=500,
            )
            self._durable = durable
            self._resolve(durable.state["endpoints"])
            for key, item in sorted(durable.state["pending"].items()):
                self._queue[key] = Delivery(key, item["endpoint"], item["event"], item["attempts"])
                self._mark_seen(item["event"]["id"])
            self._stats["restored"] = len(self._queue)
            if self._queue:
                log.info("webhook queue restored", extra={"pending": len(self._queue)})
        return self._durable

    def _resolve(self, endpoints: list[dict[str, Any]]) -> int:
        self._endpoints = {}
        for ep in endpoints:
            url = os.environ.get(ep["url_env"], "").strip()
            secret_env = ep.get("secret_env", "")
            secret = os.environ.get(secret_env, "").strip() if secret_env else ""
            if not url:
                log.warning("webhook endpoint has no URL", extra={"webhook": ep["name"], "url_env": ep["url_env"]})
                continue
            if not secret:
                log.warning(
                    "webhook endpoint has no signing secret: not delivered to",
                    extra={"webhook": ep["name"], "secret_env": secret_env},
                )
                continue
            self._endpoints[ep["name"]] = {**ep, "url": url, "secret": secret}
        return len(self._endpoints)

    # -- calls -----------------------------------------------------------------------
    def configure(self, endpoints: list[dict[str, Any]]) -> int:
        """``[{name, target, url_env, events}]``; returns how many endpoints have a URL."""
        record = self._record()
        wanted = [
            {"name": ep["name"], "target": ep["target"], "url_env": ep["url_env"], "events": ep["events"]}
            | {"secret_env": ep.get("secret_env", "")}
            for ep in endpoints
        ]
        if wanted != record.state["endpoints"]:
            record.record({"op": "endpoints", "endpoints": wanted})
        resolved = self._resolve(wanted)
        self._kick()
        return resolved

    def _mark_seen(self, event_id: str) -> None:
        self._seen[event_id] = None
        while len(self._seen) > SEEN_IDS:
            self._seen.popitem(last=False)

    async def enqueue(self, events: list[dict[str, Any]]) -> int:
        """Queue ``events`` for every endpoint that wants them; returns the deliveries queued, which
        are recorded durably when this returns. An empty batch only wakes the delivery loop."""
        record = self._record()
        deliveries: list[tuple[str, dict[str, Any]]] = []
        fresh: dict[str, None] = {}
        for event in events:
            if event["id"] in self._seen or event["id"] in fresh:
                self._stats["duplicates"] += 1
                continue
            fresh[event["id"]] = None
            for name, ep in self._endpoints.items():
                if ep["events"] and event["type"] not in ep["events"]:
                    continue
                if len(self._queue) + len(deliveries) >= MAX_QUEUE:
                    self._stats["dead"] += 1
                    continue
                deliveries.append((name, event))
        if deliveries:
            first = record.state["next"]
            record.record({"op": "queue", "deliveries": deliveries})
            for i, (name, event) in enumerate(deliveries):
                key = f"{first + i:012d}"
                self._queue[key] = Delivery(key, name, event)
            self._stats["queued"] += len(deliveries)
        for event_id in fresh:  # only once recorded: a batch refused by the store is sent again, not dropped
            self._mark_seen(event_id)
        self._kick()
        return len(deliveries)

    def status(self) -> dict[str, Any]:
        self._record()
        self._kick()
        return {"endpoints": sorted(self._endpoints), "pending": len(self._queue), **self._stats}

    # -- delivery --------------------------------------------------------------------
    def _kick(self) -> None:
        """Wake (or start) one worker per target with something queued."""
        for name in {d.endpoint for d in self._queue.values()}:
            self._wakes.setdefault(name, asyncio.Event()).set()
            worker = self._workers.get(name)
            if worker is None or worker.done():
                self._workers[name] = asyncio.get_running_loop().create_task(self._worker(name))

    async def _worker(self, name: str) -> None:
        """Delivers one target's queue in order; targets run concurrently, so one that hangs
        (until the 5 s client timeout) holds up only its own deliveries. Ends when its queue is empty."""
        wake = self._wakes[name]
        async with httpx.AsyncClient(timeout=5.0, trust_env=False, follow_redirects=False) as client:
            while True:
                now = time.monotonic()
                for delivery in [d for d in self._queue.values() if d.endpoint == name and d.due <= now]:
                    try:
                        await self._deliver(client, delivery)
                    except Exception as exc:  # the store refused a write: keep it queued, try again later
                        log.warning("webhook queue store failed", extra={"error": type(exc).__name__})
                        delivery.due = time.monotonic() + self.max_delay
                pending = [d.due for d in self._queue.values() if d.endpoint == name]
                if not pending:
                    return
                wake.clear()
                try:
                    await asyncio.wait_for(wake.wait(), max(0.01, min(pending) - time.monotonic()))
                except TimeoutError:
                    pass

    def _remove(self, delivery: Delivery, outcome: str) -> None:
        self._record().record({"op": "done", "key": delivery.key})
        self._queue.pop(delivery.key, None)
        self._stats[outcome] += 1

    async def _deliver(self, client: httpx.AsyncClient, delivery: Delivery) -> None:
        ep = self._endpoints.get(delivery.endpoint)
        if ep is None:
            self._remove(delivery, "dead")
            return
        delivery.attempts += 1
        event_id = delivery.event["id"]
        body = json.dumps(formatted(ep["target"], delivery.event), separators=(",", ":")).encode()
        timestamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "X-Rayfleet-Event-Id": event_id,
            "X-Rayfleet-Event": delivery.event["type"],
            "X-Rayfleet-Timestamp": timestamp,
            "X-Rayfleet-Signature": signature(ep["secret"], event_id, timestamp, body),
        }
        try:
            response = await client.post(ep["url"], content=body, headers=headers)
            ok = 200 <= response.status_code < 300
        except httpx.HTTPError:
            ok = False
        if ok:
            self._remove(delivery, "delivered")
            return
        if delivery.attempts >= self.max_attempts:
            self._remove(delivery, "dead")
            log.warning("webhook given up", extra={"webhook": delivery.endpoint, "event_id": delivery.event["id"]})
            return
        self._record().record({"op": "attempt", "key": delivery.key, "attempts": delivery.attempts})
        self._stats["retried"] += 1
        delivery.due = time.monotonic() + min(self.max_delay, self.base_delay * 2 ** (delivery.attempts - 1))
