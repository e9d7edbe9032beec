"""A Ray actor handle whose actor has died: every call fails, as Ray's do (`ActorDiedError`).

In-process tests stand a node's actor in with its object; to kill it, the test ends what the
actor's process ending would end (its loops, its HAProxy) and swaps the fleet's handle for this.
"""

from __future__ import annotations

from typing import Any


class ActorDied(ConnectionError):
    """What a call on a dead actor raises (Ray: `ray.exceptions.ActorDiedError`)."""


class _Method:
    def __init__(self, actor: str, name: str) -> None:
        self._actor = actor
        self._name = name

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        async def fail() -> Any:
            raise ActorDied(f"the actor {self._actor} died before it ran {self._name}")

        return fail()


class DeadActorHandle:
    def __init__(self, actor: str) -> None:
        self.actor = actor

    def __getattr__(self, name: str) -> _Method:
        if name.startswith("_"):
            raise AttributeError(name)
        return _Method(self.actor, name)
