"""Gateway events (spec 001 §6 types): logged, kept in a bounded recent list, handed to listeners.

Every event carries an id (``evt_<uuid>``, or a deterministic one when several replicas
report the same fact, e.g. a breaker event), its type, a UTC timestamp and its data;
``GET /admin/events`` shows the recent ones; with ``webhooks.enabled`` the
``WebhookFeed`` hands them to the webhook actor in batches.
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

from actors.llm_gateway.webhooks import WebhookQueue
from deployments.llm_gateway.config import WEBHOOK_EVENTS
from rayfleet.logs import get_logger
from rayfleet.state import ActorHandle, call

log = get_logger("llm_gateway")

EVENT_TYPES = frozenset(WEBHOOK_EVENTS)


class EventLog:
    def __init__(self, keep: int = 200) -> None:
        self._recent: deque[dict[str, Any]] = deque(maxlen=keep)
        self.listeners: list[Callable[[dict[str, Any]], None]] = []

    def emit(self, kind: str, event_id: str | None = None, **data: Any) -> dict[str, Any]:
        if kind not in EVENT_TYPES:
            raise ValueError(f"unknown event type {kind!r}")
        event = {"id": event_id or f"evt_{uuid.uuid4().hex}", "type": kind, "timestamp": time.time(), "data": data}
        self._recent.append(event)
        log.info("gateway event", extra={"event": kind, "event_id": event["id"], **data})
        for listener in self.listeners:
            try:
                listener(event)
            except Exception:
                log.warning("event listener failed", exc_info=True)
        return event

    def recent(self) -> list[dict[str, Any]]:
        return list(reversed(self._recent))


class WebhookFeed:
    """Events of this replica, pushed to the webhook actor in batches (never one call per event).

    A batch the actor did not acknowledge (it was restarting, its store was down) is kept
    and sent again with the next flush. With nothing to send the feed still calls the
    actor every ``tick`` seconds, so a restarted actor resumes delivering what it had queued.
    """

    interval = 0.5
    tick = 2.0

    def __init__(self, handle: ActorHandle[WebhookQueue], max_pending: int = 10_000) -> None:
        self.handle = handle
        self.max_pending = max_pending
        self.pending: list[dict[str, Any]] = []
        self._last_call = 0.0

    def __call__(self, event: dict[str, Any]) -> None:
        if len(self.pending) < self.max_pending:
            self.pending.append(event)

    async def flush(self) -> None:
        now = time.monotonic()
        if not self.pending and now - self._last_call < self.tick:
            return
        self._last_call = now
        batch, self.pending = self.pending, []
        try:
            await call(self.handle, WebhookQueue.enqueue, batch)
        except Exception:
            self.pending = (batch + self.pending)[: self.max_pending]
            raise
