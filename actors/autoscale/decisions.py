"""The scaling model's decision log: bounded, in the scaler actor, queried by the API.

Every decision of a cycle (set, hold, flag, skip) is kept with its inputs and
outcome, oldest first; the oldest go once `keep` are held. Not durable: the
scaler's state is actor memory (see the README's table), and each decision is
also written to the replica log as a `scaling decision` line.
"""

from __future__ import annotations

from collections import deque
from typing import Any


class DecisionLog:
    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._items: deque[dict[str, Any]] = deque(maxlen=keep)

    def add(self, decision: dict[str, Any]) -> None:
        self._items.append(decision)

    def __len__(self) -> int:
        return len(self._items)

    def query(
        self, vmid: str | None = None, action: str | None = None, since: float | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """The newest `limit` decisions matching every given filter, oldest first."""
        out: list[dict[str, Any]] = []
        for d in reversed(self._items):
            if len(out) >= limit:
                break
            if vmid is not None and d["vmid"] != vmid:
                continue
            if action is not None and d["action"] != action:
                continue
            if since is not None and d["t"] < since:
                continue
            out.append(d)
        out.reverse()
        return out
