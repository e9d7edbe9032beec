"""The live log stream's fan-out: one poller per replica feeding every connected client's queue.

Each client has a bounded queue: a slow client loses messages (counted, then reported to it as
`{"type": "dropped", "count": n}`), the stream never waits for it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from actors.webfilter.logparse import mask_ip
from actors.webfilter.logstore import LogStore
from deployments.webfilter.store import Store
from rayfleet.state import ActorHandle, call

QUEUE_SIZE = 1024
POLL_SECONDS = 0.1


class Client:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[str] = asyncio.Queue(QUEUE_SIZE)
        self.dropped = 0

    def offer(self, text: str) -> None:
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.dropped += 1


class Fanout:
    """One poller per replica feeding every connected client's queue."""

    def __init__(self, logs: ActorHandle[LogStore], store: Store) -> None:
        self.logs = logs
        self.store = store
        self.clients: set[Client] = set()
        self.task: asyncio.Task[None] | None = None
        self.seq = -1

    def join(self) -> Client:
        client = Client()
        self.clients.add(client)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())
        return client

    def leave(self, client: Client) -> None:
        self.clients.discard(client)

    async def _run(self) -> None:
        if self.seq < 0:
            self.seq, _ = await call(self.logs, LogStore.since, 1 << 62)
        while self.clients:
            seq, rows = await call(self.logs, LogStore.since, self.seq)
            self.seq = seq
            if rows:
                gdpr = (await asyncio.to_thread(self.store.settings))["gdpr_mode"]
                for row in rows:
                    data: dict[str, Any] = dict(row)
                    if gdpr:
                        data["client_ip"] = mask_ip(data["client_ip"])
                    text = json.dumps({"type": "log", "data": data})
                    for client in list(self.clients):
                        client.offer(text)
            await asyncio.sleep(POLL_SECONDS)
