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
from rayfleet.state import LocalActorHandle
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


async def _state(book: JobBook, job_id: str, wanted: str) -> dict[str, Any] | None:
    job = book.get(job_id)
    return job if job is not None and job["state"] == wanted else None


async def test_a_job_runs_hands_its_output_over_and_can_be_cancelled(tmp_path):
    book = JobBook(f"sqlite:///{tmp_path}/jobs.sqlite3")
    runner = JobRunner(LocalActorHandle(book))
    one = book.create("backup", {"instance_id": "100"})
    assert await runner.start(one["id"], _payload("one"))
    assert await eventually(lambda: book.output(one["id"]) == ["one: started"], what="the first line stored")
    assert book.get(one["id"])["state"] == "running" and await runner.running() == [one["id"]]
    GATES["one"].set()
    done = await eventually(lambda: _state(book, one["id"], "succeeded"), what="the job recorded")
    assert done["result"] == {"name": "one"} and done["progress"] == ["one: started", "one: done"]

    two = book.create("backup", {"instance_id": "101"})
    await runner.start(two["id"], _payload("two"))
    assert await runner.cancel(two["id"]) is True
    cancelled = await eventually(lambda: _state(book, two["id"], "cancelled"), what="the job cancelled")
    assert "stopped" in cancelled["error"]["error"]
    assert await runner.cancel(two["id"]) is False  # nothing runs any more


async def test_a_restarted_runner_marks_its_previous_lifes_jobs_lost_with_the_reason(tmp_path):
    book = JobBook(f"sqlite:///{tmp_path}/jobs.sqlite3", stale_after=3600)
    first_life = JobRunner(LocalActorHandle(book))
    stranded = book.create("backup", {"instance_id": "100"})
    await first_life.start(stranded["id"], _payload("stranded"))
    await eventually(lambda: book.output(stranded["id"]) == ["stranded: started"], what="the job under way")

    second_life = JobRunner(LocalActorHandle(book))  # the actor died and Ray started it again
    fresh = book.create("backup", {"instance_id": "101"})
    await second_life.start(fresh["id"], _payload("fresh"))
    lost = book.get(stranded["id"])
    assert lost["state"] == "lost" and lost["error"] == {"status": None, "error": RUNNER_DIED}
    assert lost["progress"] == ["stranded: started"]  # what it wrote before is kept
    assert book.get(fresh["id"])["state"] == "running"
    GATES["fresh"].set()
    await eventually(lambda: _state(book, fresh["id"], "succeeded"), what="the new life's job")
    await first_life.cancel(stranded["id"])
