"""Cluster-wide switches of the gateway: the panic switch, the plugins turned off, and the
reloaded configuration sections (``POST /admin/config/reload``, validated before they get here).

Replicas poll ``state(version)`` (``None`` while nothing changed) every
``POLL_INTERVAL`` seconds, so a change reaches every replica within a second; they
never call the actor per request.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypedDict

POLL_INTERVAL = 0.25


class Panic(TypedDict):
    active: bool
    since: float | None
    reason: str


class Reloaded(TypedDict):
    """The reloaded sections (the whole set) and their version."""

    version: int
    sections: dict[str, Any]


class ControlState(TypedDict):
    version: int
    panic: Panic
    disabled_plugins: list[str]
    config: Reloaded


class ControlBoard:
    """The actor."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._version = 1
        self._panic: Panic = {"active": False, "since": None, "reason": ""}
        self._disabled: set[str] = set()
        self._config: Reloaded = {"version": 0, "sections": {}}

    def _view(self) -> ControlState:
        return {
            "version": self._version,
            "panic": Panic(**self._panic),
            "disabled_plugins": sorted(self._disabled),
            "config": self._config,
        }

    def set_config(self, sections: dict[str, Any]) -> ControlState:
        """Replace the reloaded sections (the whole set: every replica applies exactly these)."""
        self._config = {"version": self._config["version"] + 1, "sections": sections}
        self._version += 1
        return self._view()

    def state(self, known_version: int = 0) -> ControlState | None:
        return None if known_version == self._version else self._view()

    def set_panic(self, active: bool, reason: str = "") -> ControlState:
        if active != self._panic["active"]:
            self._panic = {"active": active, "since": self._clock() if active else None, "reason": reason}
            self._version += 1
        return self._view()

    def set_plugin(self, name: str, enabled: bool) -> ControlState:
        before = set(self._disabled)
        if enabled:
            self._disabled.discard(name)
        else:
            self._disabled.add(name)
        if before != self._disabled:
            self._version += 1
        return self._view()
