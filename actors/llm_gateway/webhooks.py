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

The queue is ``rayfleet.webhook_queue.DeliveryQueue`` (durable, stream ``llm_gateway/webhooks``):
the endpoints and every queued delivery are recorded before ``enqueue`` returns, each failed
attempt and each removal (delivered or dead) is recorded too. A restarted actor replays
the record and delivers what was pending, in the order it was queued, with its attempt
count; its loop starts on the first call it gets (replicas' feeds call at least every
``WebhookFeed.tick`` seconds). Each target has its own worker: targets are delivered to
concurrently, each in queue order.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from actors.llm_gateway.durable_store import record_store
from rayfleet import webhook_queue
from rayfleet.logs import get_logger
from rayfleet.webhook_queue import Delivery, DeliveryQueue, Outgoing

log = get_logger("llm_gateway")

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
    return "v1=" + webhook_queue.signature(secret, event_id, timestamp, body=body)


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
        self._endpoints: dict[str, dict[str, Any]] = {}
        self._resolved = False
        self._queue = DeliveryQueue(
            lambda: record_store(store),
            stream,
            self._outgoing,
            max_attempts=max_attempts,
            base_delay=base_delay,
            max_delay=max_delay,
            component="llm_gateway",
        )

    def _open(self) -> DeliveryQueue:
        """The queue, its record replayed and its endpoints resolved on first use."""
        if not self._resolved:
            self._resolve(self._queue.endpoints())
            self._resolved = True
        return self._queue

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
        queue = self._open()
        wanted = [
            {"name": ep["name"], "target": ep["target"], "url_env": ep["url_env"], "events": ep["events"]}
            | {"secret_env": ep.get("secret_env", "")}
            for ep in endpoints
        ]
        queue.set_endpoints(wanted)
        resolved = self._resolve(wanted)
        queue.kick()
        return resolved

    async def enqueue(self, events: list[dict[str, Any]]) -> int:
        """Queue ``events`` for every endpoint that wants them; returns the deliveries queued, which
        are recorded durably when this returns. An empty batch only wakes the delivery loop."""
        queue = self._open()
        deliveries: list[tuple[str, dict[str, Any]]] = []
        fresh: dict[str, None] = {}
        for event in events:
            if queue.seen(event["id"]) or event["id"] in fresh:
                queue.stats["duplicates"] += 1
                continue
            fresh[event["id"]] = None
            for name, ep in self._endpoints.items():
                if not ep["events"] or event["type"] in ep["events"]:
                    deliveries.append((name, event))
        queued = queue.add(deliveries)
        # only once recorded: a batch refused by the store is sent again, not dropped
        queue.mark_seen(list(fresh))
        return queued

    def status(self) -> dict[str, Any]:
        queue = self._open()
        queue.kick()
        return {"endpoints": sorted(self._endpoints), "pending": len(queue.queue), **queue.stats}

    def _outgoing(self, delivery: Delivery) -> Outgoing | None:
        ep = self._endpoints.get(delivery.endpoint)
        if ep is None:
            return None
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
        return Outgoing(ep["url"], body, headers)
