"""Background tasks of a replica or an actor: started together, cancelled and awaited together.

Every component that runs loops beside its requests (metric flushes, refreshes,
queues) uses `BackgroundTasks`, so a stop never leaves a task running and an
exception in a loop is logged instead of vanishing with the task.

    tasks = BackgroundTasks("llm_gateway")
    tasks.start(refresh_forever(), name="registry-refresh")
    tasks.every(5.0, flush, name="flush")
    ...
    await tasks.stop()
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from rayfleet.logs import get_logger

__all__ = ["BackgroundTasks"]


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
        wake: asyncio.Event | None = None,
    ) -> asyncio.Task[Any]:
        """Call `step()` every `interval` seconds; an exception is logged and the loop goes on.

        `interval` may be a function, asked after each step for the pause before the next (None:
        no next step until `wake`); with `wake`, setting that event ends the pause at once (it is
        cleared before each step), so a loop can sleep long and still answer a change promptly."""
        pause = interval if callable(interval) else (lambda: interval)
        delay = pause() if first_delay is None else first_delay
        return self.start(self._repeat(pause, step, name, delay, wake), name=name)

    async def _repeat(
        self,
        pause: Callable[[], float | None],
        step: Callable[[], Awaitable[Any]],
        name: str,
        delay: float | None,
        wake: asyncio.Event | None,
    ) -> None:
        await _sleep(delay, wake)
        while True:
            if wake is not None:
                wake.clear()
            try:
                await step()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._log.warning("background step failed", extra={"task": name, "error": repr(exc)})
            await _sleep(pause(), wake)

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


async def _sleep(delay: float | None, wake: asyncio.Event | None) -> None:
    """Sleep `delay` seconds (None: forever), or until `wake` is set when there is one."""
    if wake is None:
        await asyncio.sleep(delay if delay is not None else 3600.0)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wake.wait(), delay)
