"""State handles: one call surface for named Ray actors and in-process stand-ins.

Components hold shared state (breakers, budgets, rate-limit windows...) in plain
classes. In a Ray deployment the class becomes a named actor that every replica on
every node finds by name; in tier-1 tests (or when Ray is not running) the same
class is instantiated once per process and called through `LocalActorHandle`, which
offers the same ``await handle.method.remote(*args)`` surface.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, cast, overload

NAMESPACE = "rayfleet"
DEFAULT_ACTOR_CPUS = 0.01

T = TypeVar("T")


class ActorMethod(Protocol):
    """`handle.method` of a Ray actor handle or a stand-in: call it with ``.remote(...)``."""

    def remote(self, *args: Any, **kwargs: Any) -> Awaitable[Any]: ...


class ActorHandle(Generic[T]):
    """The typed surface of a state handle for an actor of class `T`.

    Both a Ray actor handle and a `LocalActorHandle` answer ``handle.method.remote(...)``
    with an awaitable; annotate handles as ``ActorHandle[Budget]`` so readers (and mypy)
    know which class stands behind them.
    """

    def __getattr__(self, name: str) -> ActorMethod:  # pragma: no cover - typing surface only
        raise AttributeError(name)


UNLOCKED = "__rayfleet_unlocked__"
A = TypeVar("A", bound=Callable[..., Awaitable[Any]])


def unlocked(method: A) -> A:
    """Mark an ``async`` actor method that waits (a long-poll holding the call until a change): the
    in-process stand-in runs it outside its mailbox lock, as Ray runs an async actor's methods
    concurrently whenever one awaits. Such a method must only read state before and after its
    awaits; every other method keeps the stand-in's one-at-a-time semantics."""
    setattr(method, UNLOCKED, True)
    return method


_local_instances: dict[str, LocalActorHandle] = {}
_local_lock = threading.Lock()
_force_local = threading.local()


class _LocalMethod:
    """`handle.method.remote(...)` for a local instance: returns an awaitable."""

    def __init__(self, handle: LocalActorHandle, name: str) -> None:
        self._handle = handle
        self._name = name

    def remote(self, *args: Any, **kwargs: Any) -> asyncio.Future[Any]:
        return asyncio.ensure_future(self._handle._call(self._name, args, kwargs))


class LocalActorHandle:
    """In-process stand-in for a Ray actor handle.

    Calls are serialised through a lock, like an actor's mailbox, so a stand-in
    is as atomic as the actor it replaces (max_concurrency=1 semantics). Like an
    async actor, a stand-in has one event loop: the loop of its first caller, while
    that loop runs. A call from another loop (a second test client, a fuzzer's own
    client) runs there, so the instance's asyncio locks and tasks only ever meet
    one loop.
    """

    def __init__(self, instance: Any) -> None:
        self._instance = instance
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        home = self._loop
        if home is not None and home is not loop and home.is_running() and not home.is_closed():
            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._run(name, args, kwargs), home))
        if home is not loop:  # first call, or the home loop has ended: this loop becomes home
            self._loop = loop
            self._lock = asyncio.Lock()
        return await self._run(name, args, kwargs)

    async def _run(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        assert self._lock is not None
        method = getattr(self._instance, name)
        if getattr(method, UNLOCKED, False):
            return await method(*args, **kwargs)
        async with self._lock:
            result = method(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result

    def __getattr__(self, name: str) -> _LocalMethod:
        if name.startswith("_"):
            raise AttributeError(name)
        if not callable(getattr(self._instance, name, None)):
            raise AttributeError(f"{type(self._instance).__name__} has no method {name!r}")
        return _LocalMethod(self, name)

    @property
    def instance(self) -> Any:
        """The wrapped object (tests may inspect it directly)."""
        return self._instance


def _ray_active() -> bool:
    if getattr(_force_local, "on", False):
        return False
    try:
        import ray
    except ImportError:  # pragma: no cover - ray is a dependency
        return False
    return ray.is_initialized()


def actor(
    cls: type[T],
    name: str,
    *args: Any,
    num_cpus: float = DEFAULT_ACTOR_CPUS,
    max_restarts: int = -1,
    max_concurrency: int | None = None,
    lifetime: str | None = "detached",
    **kwargs: Any,
) -> ActorHandle[T]:
    """Return the handle of the actor `name`, creating it from `cls(*args, **kwargs)`.

    With Ray initialised this is a named actor in the ``rayfleet`` namespace,
    created with ``get_if_exists=True`` so concurrent replicas converge on one.
    Otherwise it is a process-wide local stand-in keyed by `name`.
    Constructor arguments only apply at creation: the first creator wins.
    """
    if _ray_active():
        import ray

        options: dict[str, Any] = dict(
            name=name,
            namespace=NAMESPACE,
            get_if_exists=True,
            num_cpus=num_cpus,
            max_restarts=max_restarts,
        )
        if max_restarts != 0:
            options["max_task_retries"] = -1
        if max_concurrency is not None:
            options["max_concurrency"] = max_concurrency
        if lifetime:
            options["lifetime"] = lifetime
        remote_cls = ray.remote(cls)
        return cast(ActorHandle[T], remote_cls.options(**options).remote(*args, **kwargs))
    with _local_lock:
        handle = _local_instances.get(name)
        if handle is None:
            handle = LocalActorHandle(cls(*args, **kwargs))
            _local_instances[name] = handle
        return cast(ActorHandle[T], handle)


def kill_actor(name: str) -> None:
    """Remove the actor `name` (Ray) or drop its stand-in (local)."""
    if _ray_active():
        import ray

        try:
            ray.kill(ray.get_actor(name, namespace=NAMESPACE), no_restart=True)
        except ValueError:
            pass
        return
    with _local_lock:
        _local_instances.pop(name, None)


@contextlib.contextmanager
def local_state() -> Iterator[None]:
    """Force in-process stand-ins within this thread, even when Ray is initialised."""
    previous = getattr(_force_local, "on", False)
    _force_local.on = True
    try:
        yield
    finally:
        _force_local.on = previous


def reset_local_state() -> None:
    """Forget every in-process stand-in (isolation between tier-1 tests)."""
    with _local_lock:
        _local_instances.clear()


def is_local(handle: Any) -> bool:
    """True when `handle` is an in-process stand-in."""
    return isinstance(handle, LocalActorHandle)


P = ParamSpec("P")
R = TypeVar("R")


@overload
async def call(
    handle: ActorHandle[T], method: Callable[Concatenate[T, P], Awaitable[R]], *args: P.args, **kwargs: P.kwargs
) -> R: ...


@overload
async def call(
    handle: ActorHandle[T], method: Callable[Concatenate[T, P], R], *args: P.args, **kwargs: P.kwargs
) -> R: ...


async def call(
    handle: ActorHandle[T], method: Callable[Concatenate[T, P], Any], *args: P.args, **kwargs: P.kwargs
) -> Any:
    """``await call(handle, Budget.charge, 1.5)``: ``handle.charge.remote(1.5)``, checked by mypy.

    The method is named through the actor's class, so a renamed method, a wrong argument or a
    misused result fails type checking; the call itself is the same ``.remote()`` either way.
    """
    return await getattr(handle, method.__name__).remote(*args, **kwargs)


def submit(
    handle: ActorHandle[T], method: Callable[Concatenate[T, P], Any], *args: P.args, **kwargs: P.kwargs
) -> Awaitable[Any]:
    """Start ``handle.method.remote(*args)`` without awaiting it (fire-and-forget or gathered later);
    the arguments are checked like :func:`call`'s."""
    result: Awaitable[Any] = getattr(handle, method.__name__).remote(*args, **kwargs)
    return result
