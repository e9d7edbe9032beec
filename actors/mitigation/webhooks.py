"""Webhook delivery: the spec's payload, signed, POSTed to every endpoint through a durable queue.

Payload: {event, timestamp, node_id, data: {attack_type, source_ip, packets_per_second, action, ...}}.
Every POST carries:
  X-Event-Id     the event's id (the same on every attempt: a receiver deduplicates by it)
  X-Event        the event name
  X-Timestamp    Unix seconds of this attempt
  X-Signature    ``sha256=`` and the hex HMAC-SHA256 of ``<X-Timestamp>.<body>`` (the exact bytes
                 sent) under the secret in ``$MITIGATION_WEBHOOK_SECRET``, read here, in the actor.
A receiver recomputes it, compares in constant time and refuses old timestamps. Without the
secret nothing is sent (the deliveries are counted dead and logged).

Deliveries go through ``rayfleet.webhook_queue.DeliveryQueue`` on the owner's durable store
(stream ``<owner prefix>/webhooks``): queued before ``send`` returns, retried on a connection
error or a non-2xx answer after ``retry_delay_seconds``, then twice that, and so on, up to
``max_retries`` retries; a restarted owner delivers what was pending. At-least-once: an event
whose 2xx answer was lost with the actor is sent again, with the same ``X-Event-Id``.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from actors.mitigation.settings import WebhookSettings
from rayfleet.durable import RecordStore
from rayfleet.logs import get_logger
from rayfleet.webhook_queue import Delivery, DeliveryQueue, Outgoing, signature

log = get_logger("mitigation")
MAX_PENDING = 1000
SECRET_ENV = "MITIGATION_WEBHOOK_SECRET"


def event_payload(event: str, node_id: str, data: dict[str, Any]) -> dict[str, Any]:
    body = {"attack_type": None, "source_ip": None, "packets_per_second": 0, "action": None, **data}
    return {
        "event": event,
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "node_id": node_id,
        "data": body,
    }


def signed_headers(secret: str, event_id: str, event: str, body: bytes, now: float | None = None) -> dict[str, str]:
    timestamp = str(int(time.time() if now is None else now))
    return {
        "Content-Type": "application/json",
        "X-Event-Id": event_id,
        "X-Event": event,
        "X-Timestamp": timestamp,
        "X-Signature": "sha256=" + signature(secret, timestamp, body=body),
    }


class WebhookSender:
    """The webhooks of one owner (a node or the fleet): every wanted event to every endpoint."""

    def __init__(self, settings: WebhookSettings, store: Callable[[], RecordStore], stream: str) -> None:
        self.settings = settings
        self.queue = DeliveryQueue(
            store,
            stream,
            self._outgoing,
            max_attempts=settings.max_retries + 1,
            base_delay=settings.retry_delay_seconds,
            max_delay=max(settings.retry_delay_seconds, 1.0) * 2**settings.max_retries,
            timeout=settings.timeout_seconds,
            max_queue=MAX_PENDING,
            component="mitigation",
        )

    @property
    def delivered(self) -> int:
        return self.queue.stats["delivered"]

    @property
    def failed(self) -> int:
        return self.queue.stats["dead"]

    def wants(self, event: str) -> bool:
        return self.settings.enabled and bool(self.settings.endpoints) and event in self.settings.events

    def start(self) -> None:
        """Replay the queue and deliver what an earlier instance left pending."""
        if self.settings.enabled:
            self.queue.record()
            self.queue.kick()

    def send(self, payload: dict[str, Any]) -> None:
        """Queue one event for every endpoint (recorded when this returns; delivered in the background)."""
        if not self.wants(payload["event"]):
            return
        event = {"id": f"evt_{uuid.uuid4().hex}", "payload": payload}
        self.queue.add([(url, event) for url in self.settings.endpoints])

    def _outgoing(self, delivery: Delivery) -> Outgoing | None:
        if delivery.endpoint not in self.settings.endpoints:
            return None  # an endpoint removed from the configuration since this was queued
        secret = os.environ.get(SECRET_ENV, "").strip()
        if not secret:
            log.warning("webhook not sent: no signing secret", extra={"secret_env": SECRET_ENV})
            return None
        payload = delivery.event["payload"]
        body = json.dumps(payload, separators=(",", ":")).encode()
        return Outgoing(delivery.endpoint, body, signed_headers(secret, delivery.event["id"], payload["event"], body))

    def forget(self) -> None:
        """The owner is removed on purpose: its pending deliveries go with it."""
        if self.settings.enabled:
            self.queue.drop_all()

    async def close(self) -> None:
        await self.queue.close()
