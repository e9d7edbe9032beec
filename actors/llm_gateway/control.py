"""Cluster-wide switches of the gateway: the panic switch, the plugins turned off, and the
reloaded configuration sections (``POST /admin/config/reload``, validated before they get here).

Replicas long-poll ``wait_state(version)`` (``state`` held while nothing changed:
``actors/llm_gateway/changes.py``), so a change reaches every replica in one call; they never
call the actor per request.

Durable (``rayfleet.durable``, stream ``llm_gateway/control``): each change is recorded
before it is answered and replayed after a restart, so a panic, a disabled plugin or a
reloaded configuration outlives the actor. Versions start at the record's epoch shifted
32 bits, above every version an earlier instance handed out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypedDict

from actors.llm_gateway.changes import HOLD_SECONDS, Changes
from actors.llm_gateway.durable_store import record_store
from rayfleet.durable import DurableState, Op
from rayfleet.state import unlocked

STREAM = "llm_gateway/control"


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


def _initial() -> dict[str, Any]:
    return {
        "panic": {"active": False, "since": None, "reason": ""},
        "disabled": [],
        "config": {"version": 0, "sections": {}},
    }


def _apply(state: dict[str, Any], op: Op) -> None:
    if op["op"] not in ("panic", "disabled", "config"):
        raise ValueError(f"not a control operation: {op['op']!r}")
    state[op["op"]] = op["value"]


class ControlBoard:
    """The actor. ``store``: the gateway's storage spec (``durable_store``); ``None``: the platform's store."""

    def __init__(
        self, clock: Callable[[], float] = time.time, store: dict[str, Any] | None = None, stream: str = STREAM
    ) -> None:
        self._clock = clock
        self._store_spec, self._stream = store, stream
        self._durable: DurableState[dict[str, Any]] | None = None
        self._version = 0
        self._changes = Changes()

    def _record(self) -> DurableState[dict[str, Any]]:
        if self._durable is None:
            durable = DurableState(
                record_store(self._store_spec), self._stream, initial=_initial, apply=_apply, dump=dict, load=dict
            )
            self._durable, self._version = durable, durable.epoch << 32
        return self._durable

    def _change(self, kind: str, value: Any) -> None:
        self._record().record({"op": kind, "value": value})
        self._version += 1
        self._changes.notify()

    def _view(self) -> ControlState:
        st = self._record().state
        panic, config = st["panic"], st["config"]
        return {
            "version": self._version,
            "panic": Panic(active=panic["active"], since=panic["since"], reason=panic["reason"]),
            "disabled_plugins": sorted(st["disabled"]),
            "config": Reloaded(version=config["version"], sections=config["sections"]),
        }

    def set_config(self, sections: dict[str, Any]) -> ControlState:
        """Replace the reloaded sections (the whole set: every replica applies exactly these)."""
        self._change("config", {"version": self._record().state["config"]["version"] + 1, "sections": sections})
        return self._view()

    def state(self, known_version: int = 0) -> ControlState | None:
        self._record()
        return None if known_version == self._version else self._view()

    @unlocked
    async def wait_state(self, known_version: int = 0, timeout: float = HOLD_SECONDS) -> ControlState | None:
        """``state(known_version)``, the call held up to ``timeout`` s while nothing changed (a long-poll)."""
        self._record()
        await self._changes.wait(lambda: self._version == known_version, timeout)
        return self.state(known_version)

    def set_panic(self, active: bool, reason: str = "") -> ControlState:
        if active != self._record().state["panic"]["active"]:
            self._change("panic", {"active": active, "since": self._clock() if active else None, "reason": reason})
        return self._view()

    def set_plugin(self, name: str, enabled: bool) -> ControlState:
        before = set(self._record().state["disabled"])
        after = before - {name} if enabled else before | {name}
        if before != after:
            self._change("disabled", sorted(after))
        return self._view()
