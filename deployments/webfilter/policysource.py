"""What the proxy actor reads the policy with: `PolicySource(config.db)()` -> (version, policy).

Replicas commit a change, then bump the policy version (`Store.bump_policy_version`) and ask the proxy
actor to sync to that version; the actor reads the policy itself (through this object, handed to it at
creation) only when it has not read that version yet. Nothing but the path is pickled to the actor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from actors.webfilter.squidconf import Policy
from deployments.webfilter.store import Store


class PolicySource:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._store: Store | None = None

    def __call__(self) -> tuple[int, Policy]:
        if self._store is None:
            self._store = Store.reader(self.path)
        return self._store.versioned_policy()

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path, self._store = Path(state["path"]), None
