"""Webhook delivery: the spec's payload POSTed to every endpoint, retried with exponential backoff.

Payload: {event, timestamp, node_id, data: {attack_type, source_ip, packets_per_second, action, ...}}.
A delivery is retried on a connection error or a non-2xx answer, `max_retries` times,
waiting `retry_delay_seconds`, then twice that, and so on. Deliveries run in the
background; the sender keeps a bounded count of outcomes for the status views.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import httpx

from actors.mitigation.settings import WebhookSettings
from rayfleet.logs import get_logger

log = get_logger("mitigation")
MAX_PENDING = 1000


def event_payload(event: str, node_id: str, data: dict[str, Any]) -> dict[str, Any]:
    body = {"attack_type": None, "source_ip": None, "packets_per_second": 0, "action": None, **data}
    return {
        "event": event,
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "node_id": node_id,
        "data": body,
    }


class WebhookSender:
    def __init__(self, settings: WebhookSettings) -> None:
        self.settings = settings
        self.delivered = 0
        self.failed = 0
        self.dropped = 0
        self._pending: set[asyncio.Task[None]] = set()
        self._client: httpx.AsyncClient | None = None

    def wants(self, event: str) -> bool:
        return self.settings.enabled and bool(self.settings.endpoints) and event in self.settings.events

    def send(self, payload: dict[str, Any]) -> None:
        """Queue one event for every endpoint (non-blocking; the oldest work is never cancelled)."""
        if not self.wants(payload["event"]):
            return
        for url in self.settings.endpoints:
            if len(self._pending) >= MAX_PENDING:
                self.dropped += 1
                continue
            task = asyncio.get_running_loop().create_task(self._deliver(url, payload))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    async def _deliver(self, url: str, payload: dict[str, Any]) -> None:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.settings.timeout_seconds, trust_env=False)
        delay = self.settings.retry_delay_seconds
        for attempt in range(self.settings.max_retries + 1):
            try:
                response = await self._client.post(url, json=payload)
                if 200 <= response.status_code < 300:
                    self.delivered += 1
                    return
                problem = f"HTTP {response.status_code}"
            except httpx.HTTPError as exc:
                problem = type(exc).__name__
            if attempt < self.settings.max_retries:
                await asyncio.sleep(delay)
                delay *= 2
        self.failed += 1
        log.warning("webhook delivery failed", extra={"event": payload["event"], "url": url, "error": problem})

    async def close(self) -> None:
        for task in list(self._pending):
            task.cancel()
        if self._client is not None:
            await self._client.aclose()
            self._client = None
