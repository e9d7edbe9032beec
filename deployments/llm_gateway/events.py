"""Gateway events (spec 001 §6 types): logged, kept in a bounded recent list, handed to listeners.

Every event carries an id (``evt_<uuid>``), its type, a UTC timestamp and its data;
``GET /admin/events`` shows the recent ones. Webhook delivery is not built: the
``webhooks`` section is refused at startup (see ``config.py``).
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

EVENT_TYPES = frozenset(
    {
        "circuit_open",
        "budget_threshold",
        "injection_blocked",
        "endpoint_down",
        "endpoint_recovered",
        "auth_failure",
        "panic_activated",
    }
)


class EventLog:
    def __init__(self, keep: int = 200) -> None:
        self._recent: deque[dict[str, Any]] = deque(maxlen=keep)
        self.listeners: list[Callable[[dict[str, Any]], None]] = []

    def emit(self, kind: str, **data: Any) -> dict[str, Any]:
        if kind not in EVENT_TYPES:
            raise ValueError(f"unknown event type {kind!r}")
        event = {"id": f"evt_{uuid.uuid4().hex}", "type": kind, "timestamp": time.time(), "data": data}
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
