"""The negative cache (``caching.negative_cache``): prompts the security pipeline blocked, remembered.

A block is kept under ``sha256(model, messages)`` (for completions and embeddings, their
``prompt`` or ``input`` in place of ``messages``) with its injection score, for ``ttl``
seconds, at most ``maxsize`` of them (the least recently used dropped first). The
``injection_scan`` stage asks it first: a repeat of a blocked prompt is refused at once,
without scoring it again. Each replica keeps its own (it is a cache: a replica that has not
seen the prompt scores it and blocks it the same way). ``maxsize`` or ``ttl`` 0 turns it off.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

from deployments.llm_gateway.cache import ExpiringMap

_PROMPT_FIELDS = ("messages", "prompt", "input")


def block_key(body: dict[str, Any]) -> str:
    """sha256 of the model and the prompt fields, canonical JSON (other parameters do not count)."""
    blob = json.dumps(
        [body.get("model"), [body.get(f) for f in _PROMPT_FIELDS]],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


class NegativeCache:
    def __init__(self, maxsize: int, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._items: ExpiringMap[float] = ExpiringMap(ttl, maxsize, clock)

    @property
    def active(self) -> bool:
        return self._items.size > 0 and self._items.ttl > 0

    def __len__(self) -> int:
        return len(self._items)

    def resize(self, maxsize: int, ttl: float) -> None:
        """Apply reloaded settings; entries beyond the new size go, the least recently used first."""
        self._items.size, self._items.ttl = maxsize, ttl
        self._items.trim()

    def add(self, body: dict[str, Any], score: float) -> None:
        if self.active:
            self._items.put(block_key(body), score)

    def get(self, body: dict[str, Any]) -> float | None:
        """The score of a remembered block of this model and prompt, or ``None``."""
        return self._items.get(block_key(body)) if len(self._items) else None
