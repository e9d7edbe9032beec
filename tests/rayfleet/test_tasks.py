"""BackgroundTasks: one start, one stop; failing steps are logged and the loop goes on."""

from __future__ import annotations

import asyncio

from rayfleet.tasks import BackgroundTasks
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
