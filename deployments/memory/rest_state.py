"""What the REST routes share: the settings, the token, and one `Memory` per worker thread."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from deployments.memory.config import Settings
from deployments.memory.service import Memory
from deployments.memory.store import Store


@dataclass
class RestState:
    settings: Settings
    token: str
    version: str = ""
    allowed_hosts: set[str] = field(default_factory=set)  # empty: any Host header (in-process tests)
    _local: threading.local = field(default_factory=threading.local, repr=False)

    @classmethod
    def per_thread(cls, settings: Settings, token: str, version: str = "") -> RestState:
        """The state of a server whose worker threads each open their own store (SQLite
        connections stay in their thread) on first use."""
        return cls(settings, token, version)

    def memory(self) -> Memory:
        """This thread's `Memory` (store + service), opened on first use."""
        memory: Memory | None = getattr(self._local, "memory", None)
        if memory is None:
            memory = self._local.memory = Memory(self.settings, Store(self.settings.db_path))
        return memory

    def restrict_hosts(self, port: int) -> None:
        """Answer only requests addressed to 127.0.0.1 or localhost on `port` (421 otherwise)."""
        self.allowed_hosts.update({f"127.0.0.1:{port}", f"localhost:{port}"})
        if port == 80:
            self.allowed_hosts.update({"127.0.0.1", "localhost"})
