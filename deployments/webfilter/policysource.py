"""What the proxy actor reads the policy with: `PolicySource(config.db)()` -> (version, policy).

Replicas commit a change, then bump the policy version (`Store.bump_policy_version`) and ask the proxy
actor to sync to that version; the actor reads the policy itself (through this object, handed to it at
creation) only when it has not read that version yet. Nothing but the path is pickled to the actor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from actors.webfilter.logpolicy import LogSettings
from actors.webfilter.squidconf import Policy
from deployments.webfilter.store import Store


class StoreReader:
    """A read-only view of `config.db` handed to an actor: only the path is pickled, the connection is
    opened in the actor."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store.reader(self.path)
        return self._store

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path, self._store = Path(state["path"]), None


class PolicySource(StoreReader):
    def __call__(self) -> tuple[int, Policy]:
        return self.store.versioned_policy()


class LogSettingsSource(StoreReader):
    """What the log store reads each turn: `gdpr_mode` and `log_retention_days`."""

    def __call__(self) -> LogSettings:
        values = self.store.settings()
        return LogSettings(gdpr_mode=bool(values["gdpr_mode"]), retention_days=int(values["log_retention_days"]))
