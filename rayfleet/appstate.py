"""A component's typed state on its app, and the FastAPI dependency that hands it to routes.

Each component declares one dataclass of what its routes share (actor handles, services,
config) with a ``from_ray(config)`` default; ``create_app(config, state=None)`` attaches it:

    state = state or GatewayState.from_ray(config)
    attach(app, state)

and the resource routers, module-level ``APIRouter``s, ask for it by type:

    State = Annotated[GatewayState, Depends(state_of(GatewayState))]

    @router.get("/things")
    async def things(state: State) -> ThingList: ...
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from fastapi import FastAPI, Request

T = TypeVar("T")


def attach(app: FastAPI, state: object) -> None:
    """Make ``state`` the app's component state (read by :func:`state_of` dependencies)."""
    app.state.component = state


def state_of(cls: type[T]) -> Callable[[Request], Awaitable[T]]:
    """A dependency returning the app's component state, checked to be a ``cls``.

    It is a coroutine function on purpose: FastAPI runs a plain function dependency in its
    thread pool, a hop per request that a hot path cannot afford."""

    async def dependency(request: Request) -> T:
        value = getattr(request.app.state, "component", None)
        if not isinstance(value, cls):
            raise TypeError(f"the app's component state is {type(value).__name__}, not {cls.__name__}")
        return value

    dependency.__name__ = f"{cls.__name__}_state"
    return dependency
