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
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

import httpx

from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

SEEN_IDS = 10_000
MAX_QUEUE = 10_000


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


@dataclass(eq=False)
class Delivery:
    endpoint: str
    event: dict[str, Any]
    attempts: int = 0
    due: float = 0.0


class WebhookQueue:
    """The actor."""

    def __init__(self, max_attempts: int = 8, base_delay: float = 0.5, max_delay: float = 60.0) -> None:
        self.max_attempts, self.base_delay, self.max_delay = max_attempts, base_delay, max_delay
        self._endpoints: dict[str, dict[str, Any]] = {}
        self._queue: deque[Delivery] = deque()
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._stats = {"queued": 0, "delivered": 0, "retried": 0, "dead": 0, "duplicates": 0}
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None

    def configure(self, endpoints: list[dict[str, Any]]) -> int:
        """``[{name, target, url_env, events}]``; returns how many endpoints have a URL."""
        self._endpoints = {}
        for ep in endpoints:
            url = os.environ.get(ep["url_env"], "").strip()
            if not url:
                log.warning("webhook endpoint has no URL", extra={"webhook": ep["name"], "url_env": ep["url_env"]})
                continue
            self._endpoints[ep["name"]] = {**ep, "url": url}
        return len(self._endpoints)

    def _fresh(self, event_id: str) -> bool:
        if event_id in self._seen:
            self._stats["duplicates"] += 1
            return False
        self._seen[event_id] = None
        while len(self._seen) > SEEN_IDS:
            self._seen.popitem(last=False)
        return True

    async def enqueue(self, events: list[dict[str, Any]]) -> int:
        """Queue ``events`` for every endpoint that wants them; returns the deliveries queued."""
        queued = 0
        for event in events:
            if not self._fresh(event["id"]):
                continue
            for name, ep in self._endpoints.items():
                if ep["events"] and event["type"] not in ep["events"]:
                    continue
                if len(self._queue) >= MAX_QUEUE:
                    self._stats["dead"] += 1
                    continue
                self._queue.append(Delivery(name, event))
                queued += 1
        self._stats["queued"] += queued
        if queued:
            self._ensure_running()
        return queued

    def status(self) -> dict[str, Any]:
        return {"endpoints": sorted(self._endpoints), "pending": len(self._queue), **self._stats}

    def _ensure_running(self) -> None:
        if self._wake is None:
            self._wake = asyncio.Event()
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._deliver_forever())

    async def _deliver_forever(self) -> None:
        assert self._wake is not None
        async with httpx.AsyncClient(timeout=5.0, trust_env=False, follow_redirects=False) as client:
            while True:
                now = time.monotonic()
                due = [d for d in self._queue if d.due <= now]
                for delivery in due:
                    await self._deliver(client, delivery)
                if not self._queue:
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                wait = max(0.01, min(d.due for d in self._queue) - time.monotonic())
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), wait)
                except TimeoutError:
                    pass

    async def _deliver(self, client: httpx.AsyncClient, delivery: Delivery) -> None:
        ep = self._endpoints.get(delivery.endpoint)
        if ep is None:
            self._queue.remove(delivery)
            self._stats["dead"] += 1
            return
        delivery.attempts += 1
        try:
            response = await client.post(
                ep["url"],
                json=formatted(ep["target"], delivery.event),
                headers={"X-Rayfleet-Event-Id": delivery.event["id"], "X-Rayfleet-Event": delivery.event["type"]},
            )
            ok = 200 <= response.status_code < 300
        except httpx.HTTPError:
            ok = False
        if ok:
            self._queue.remove(delivery)
            self._stats["delivered"] += 1
            return
        if delivery.attempts >= self.max_attempts:
            self._queue.remove(delivery)
            self._stats["dead"] += 1
            log.warning("webhook given up", extra={"webhook": delivery.endpoint, "event_id": delivery.event["id"]})
            return
        self._stats["retried"] += 1
        delivery.due = time.monotonic() + min(self.max_delay, self.base_delay * 2 ** (delivery.attempts - 1))
