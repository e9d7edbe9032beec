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
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

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
        self.maxsize, self.ttl, self._clock = maxsize, ttl, clock
        self._items: OrderedDict[str, tuple[float, float]] = OrderedDict()

    @property
    def active(self) -> bool:
        return self.maxsize > 0 and self.ttl > 0

    def __len__(self) -> int:
        return len(self._items)

    def resize(self, maxsize: int, ttl: float) -> None:
        """Apply reloaded settings; entries beyond the new size go, the oldest first."""
        self.maxsize, self.ttl = maxsize, ttl
        self._trim()

    def _trim(self) -> None:
        while len(self._items) > max(0, self.maxsize):
            self._items.popitem(last=False)

    def add(self, body: dict[str, Any], score: float) -> None:
        if not self.active:
            return
        key = block_key(body)
        self._items[key] = (self._clock() + self.ttl, score)
        self._items.move_to_end(key)
        self._trim()

    def get(self, body: dict[str, Any]) -> float | None:
        """The score of a remembered block of this model and prompt, or ``None``."""
        if not self._items:
            return None
        key = block_key(body)
        item = self._items.get(key)
        if item is None:
            return None
        if item[0] <= self._clock():
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return item[1]
