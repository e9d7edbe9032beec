"""An actor handle that delivers the actor's exceptions the way Ray does.

In-process tests call an actor's object through `rayfleet.state.LocalActorHandle`, which raises
the actor's own exception. A Ray actor handle raises it wrapped: `RayTaskError(<class>)`, an
instance of both `ray.exceptions.RayTaskError` and the original class, whose text is the remote
traceback (`ray::ProxyOwner.apply() (pid=..., ip=...)`, file paths, frames). This handle builds
that wrapper with Ray's own class and method (`RayTaskError(...).as_instanceof_cause()`, what
Ray's deserialiser raises), so a test sees exactly what a replica sees.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

from ray.exceptions import RayTaskError


class _Method:
    def __init__(self, inner: Any, actor: str, name: str) -> None:
        self._inner = inner
        self._actor = actor
        self._name = name

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        async def run() -> Any:
            try:
                return await getattr(self._inner, self._name).remote(*args, **kwargs)
            except Exception as exc:
                wrapped = RayTaskError(
                    f"{self._actor}.{self._name}",
                    traceback.format_exc(),
                    exc,
                    proctitle=f"ray::{self._actor}.{self._name}",
                    pid=os.getpid(),
                    ip="127.0.0.1",
                    actor_repr=f"<{self._actor} object>",
                    actor_id="f" * 32,
                )
                raise wrapped.as_instanceof_cause() from None

        return run()


class RayDeliveredHandle:
    """Wraps a handle (`LocalActorHandle`) of the actor class `actor`: results pass through, exceptions
    come out as Ray delivers them."""

    def __init__(self, inner: Any, actor: str) -> None:
        self._inner = inner
        self._actor = actor

    def __getattr__(self, name: str) -> _Method:
        if name.startswith("_"):
            raise AttributeError(name)
        return _Method(self._inner, self._actor, name)
