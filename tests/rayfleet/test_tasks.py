"""BackgroundTasks: one start, one stop; failing steps are logged and the loop goes on."""

from __future__ import annotations

import asyncio

from rayfleet.tasks import BackgroundTasks, Wake
from tests.polling import eventually


async def test_every_repeats_a_step_and_survives_its_failures():
    calls: list[int] = []
    done = asyncio.Event()

    async def step() -> None:
        calls.append(len(calls))
        if len(calls) == 2:
            raise RuntimeError("one bad step")
        if len(calls) >= 4:
            done.set()

    tasks = BackgroundTasks("test")
    tasks.every(0.001, step, name="step", first_delay=0)
    await asyncio.wait_for(done.wait(), 10)
    assert len(calls) >= 4
    await tasks.stop()
    assert tasks.running == 0


async def test_stop_cancels_and_awaits_every_task():
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    tasks = BackgroundTasks("test")
    task = tasks.start(forever(), name="forever")
    await asyncio.sleep(0)  # one event-loop turn: forever() starts, so its cancellation runs its finally
    assert tasks.running == 1
    await tasks.stop()
    assert task.cancelled() and cancelled.is_set() and tasks.running == 0


async def test_a_finished_task_is_forgotten():
    async def once() -> int:
        return 1

    tasks = BackgroundTasks("test")
    task = tasks.start(once(), name="once")
    assert await task == 1
    await eventually(lambda: tasks.running == 0, what="the finished task forgotten")


async def test_every_asks_a_callable_interval_and_a_wake_ends_the_pause():
    """A pause of an hour (or None: until woken) ends as soon as `wake` is set; the step runs again."""
    calls: list[int] = []
    pauses = iter([3600.0, None])
    wake = Wake()

    async def step() -> None:
        calls.append(len(calls))

    tasks = BackgroundTasks("test")
    tasks.every(lambda: next(pauses, 3600.0), step, name="step", first_delay=0, wake=wake)
    await eventually(lambda: len(calls) == 1, what="the first step")
    wake.set()
    await eventually(lambda: len(calls) == 2, what="the step after the hour's pause was woken")
    assert not wake.is_set(), "the event is cleared before each step"
    wake.set()
    await eventually(lambda: len(calls) == 3, what="the step after the pause without a deadline was woken")
    await tasks.stop()
