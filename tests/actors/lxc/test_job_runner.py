"""The JobRunner runs jobs shipped to it pickled, hands their output to the book, and marks the jobs
of its previous life lost."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import cloudpickle

from actors.lxc.jobs import JobBook
from actors.lxc.runner import RUNNER_DIED, JobRunner
from rayfleet.state import ActorHandle, actor, call
from tests.polling import eventually

GATES: dict[str, asyncio.Event] = {}


async def gated(name: str, emit: Callable[[str], None]) -> dict[str, Any]:
    """A job that writes a line, waits for its gate, writes another and answers."""
    emit(f"{name}: started")
    await GATES[name].wait()
    emit(f"{name}: done")
    return {"result": {"name": name}}


def _payload(name: str) -> bytes:
    GATES[name] = asyncio.Event()
    return cloudpickle.dumps(functools.partial(gated, name))


def _book(tmp_path: Any, **kwargs: Any) -> ActorHandle[JobBook]:
    """The book the runner reaches by name (the in-process stand-in of the named actor)."""
    return actor(JobBook, "test-lxc-jobs", f"sqlite:///{tmp_path}/jobs.sqlite3", **kwargs)


async def _state(book: ActorHandle[JobBook], job_id: str, wanted: str) -> dict[str, Any] | None:
    job = await call(book, JobBook.get, job_id)
    return job if job is not None and job["state"] == wanted else None


async def _output(book: ActorHandle[JobBook], job_id: str) -> list[str]:
    return list(await call(book, JobBook.output, job_id))


async def test_a_job_runs_hands_its_output_over_and_can_be_cancelled(tmp_path):
    book = _book(tmp_path)
    runner = JobRunner("test-lxc-jobs")
    one = await call(book, JobBook.create, "backup", {"instance_id": "100"})
    assert await runner.start(one["id"], _payload("one"))
    assert await eventually(lambda: _first_line(book, one["id"], "one: started"), what="the first line stored")
    assert (await call(book, JobBook.get, one["id"]))["state"] == "running"
    assert await runner.running() == [one["id"]]
    GATES["one"].set()
    done = await eventually(lambda: _state(book, one["id"], "succeeded"), what="the job recorded")
    assert done["result"] == {"name": "one"} and done["progress"] == ["one: started", "one: done"]

    two = await call(book, JobBook.create, "backup", {"instance_id": "101"})
    await runner.start(two["id"], _payload("two"))
    assert await runner.cancel(two["id"]) is True
    cancelled = await eventually(lambda: _state(book, two["id"], "cancelled"), what="the job cancelled")
    assert "stopped" in cancelled["error"]["error"]
    assert await runner.cancel(two["id"]) is False  # nothing runs any more


async def _first_line(book: ActorHandle[JobBook], job_id: str, line: str) -> bool:
    return await _output(book, job_id) == [line]


async def test_a_restarted_runner_marks_its_previous_lifes_jobs_lost_with_the_reason(tmp_path):
    book = _book(tmp_path)
    first_life = JobRunner("test-lxc-jobs")
    stranded = await call(book, JobBook.create, "backup", {"instance_id": "100"})
    await first_life.start(stranded["id"], _payload("stranded"))
    await eventually(lambda: _first_line(book, stranded["id"], "stranded: started"), what="the job under way")

    second_life = JobRunner("test-lxc-jobs")  # the actor died and Ray started it again
    fresh = await call(book, JobBook.create, "backup", {"instance_id": "101"})
    await second_life.start(fresh["id"], _payload("fresh"))
    lost = await call(book, JobBook.get, stranded["id"])
    assert lost["state"] == "lost" and lost["error"] == {"status": None, "error": RUNNER_DIED}
    assert lost["progress"] == ["stranded: started"]  # what it wrote before is kept
    assert (await call(book, JobBook.get, fresh["id"]))["state"] == "running"
    GATES["fresh"].set()
    await eventually(lambda: _state(book, fresh["id"], "succeeded"), what="the new life's job")
    await first_life.cancel(stranded["id"])
