"""Background tasks of a replica or an actor: started together, cancelled and awaited together.

Every component that runs loops beside its requests (metric flushes, refreshes,
queues) uses `BackgroundTasks`, so a stop never leaves a task running and an
exception in a loop is logged instead of vanishing with the task.

    tasks = BackgroundTasks("llm_gateway")
    tasks.start(refresh_forever(), name="registry-refresh")
    tasks.every(5.0, flush, name="flush")
    tasks.when(wake, 0.25, flush_batch, name="batch-flush")   # only after a producer called wake.set()
    ...
    await tasks.stop()
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from rayfleet.logs import get_logger

__all__ = ["BackgroundTasks", "Wake"]


class Wake:
    """What a producer raises when it buffered something to flush (``BackgroundTasks.when`` waits on it).

    ``set`` is cheap and may be called from any thread: from another thread than the flushing loop's,
    it is handed to that loop (an ``asyncio.Event`` may only be set from its own loop)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    def set(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            self._event.set()
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._event.set()
        else:
            loop.call_soon_threadsafe(self._event.set)

    def is_set(self) -> bool:
        return self._event.is_set()

    def clear(self) -> None:
        self._event.clear()

    async def wait(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop, set_before = loop, self._event.is_set()
            self._event = asyncio.Event()  # an event a waiter of another loop may have bound
            if set_before:
                self._event.set()
        await self._event.wait()


class BackgroundTasks:
    """A named set of asyncio tasks with one start and one stop."""

    def __init__(self, component: str) -> None:
        self._log = get_logger(component)
        self._tasks: set[asyncio.Task[Any]] = set()

    def start(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Run `coro` in the running loop; it is kept until it ends or `stop` cancels it."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def every(
        self,
        interval: float | Callable[[], float | None],
        step: Callable[[], Awaitable[Any]],
        *,
        name: str,
        first_delay: float | None = None,
        wake: Wake | None = None,
    ) -> asyncio.Task[Any]:
        """Call `step()` every `interval` seconds; an exception is logged and the loop goes on.

        `interval` may be a function, asked after each step for the pause before the next (None:
        no next step until `wake`); with `wake` (the `Wake` `when` waits on too), setting it ends the
        pause at once (it is cleared before each step), so a loop can sleep long and still answer a
        change promptly."""
        pause = interval if callable(interval) else (lambda: interval)
        delay = pause() if first_delay is None else first_delay
        return self.start(self._repeat(pause, step, name, delay, wake), name=name)

    async def _repeat(
        self,
        pause: Callable[[], float | None],
        step: Callable[[], Awaitable[Any]],
        name: str,
        delay: float | None,
        wake: Wake | None,
    ) -> None:
        await _sleep(delay, wake)
        while True:
            if wake is not None:
                wake.clear()
            await self._step(step, name)
            await _sleep(pause(), wake)

    def when(self, wake: Wake, bound: float, step: Callable[[], Awaitable[Any]], *, name: str) -> asyncio.Task[Any]:
        """Call `step()` each time `wake` is set, `bound` seconds after (what follows joins the batch);
        no call at all while nothing sets it.

        `wake` is cleared just before each call, so what a producer adds during the call wakes the
        next one. A step that returns ``True`` (something is still held: a lease to give back when
        idle) or raises (logged) is called again `bound` seconds later."""
        return self.start(self._on_demand(wake, bound, step, name), name=name)

    async def _on_demand(self, wake: Wake, bound: float, step: Callable[[], Awaitable[Any]], name: str) -> None:
        while True:
            await wake.wait()
            await asyncio.sleep(bound)
            wake.clear()
            if await self._step(step, name):
                wake.set()

    async def _step(self, step: Callable[[], Awaitable[Any]], name: str) -> bool:
        """`step()`; whether it asks to be called again: it returned ``True`` or raised (logged, the
        loop goes on)."""
        try:
            return await step() is True
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._log.warning("background step failed", extra={"task": name, "error": repr(exc)})
            return True

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self._log.error("background task ended with an error", extra={"task": task.get_name(), "error": repr(exc)})

    @property
    def running(self) -> int:
        """How many tasks are still running."""
        return len(self._tasks)

    async def stop(self, timeout: float = 5.0) -> None:
        """Cancel every task and wait (at most `timeout` s) until they have ended."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait(tasks, timeout=timeout)
        self._tasks.clear()


async def _sleep(delay: float | None, wake: Wake | None) -> None:
    """Sleep `delay` seconds (None: forever), or until `wake` is set when there is one."""
    if wake is None:
        await asyncio.sleep(delay if delay is not None else 3600.0)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wake.wait(), delay)
