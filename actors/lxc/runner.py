"""The job runner: the actor that runs long container operations, so that a job outlives the
Serve replica that accepted it.

A replica that accepts an operation with `Prefer: respond-async` records the job in the
`JobBook` and ships the operation here as a pickled `Job` (cloudpickle: the closure the
synchronous route would have run, rebuilt in this actor's process with its own SSH pool; see
`deployments/lxc/jobs.py`). It runs in this actor's event loop, holding the container's lease
until the host command ends; every `POLL` seconds its new output lines go to the book (durable
storage, one entry per hand-over) with a heartbeat, and the book's answer says whether someone
asked to cancel it. A replica's death does not touch it.

If this actor dies, its jobs' host commands end with their SSH connections: nothing can
reattach to them. The restarted actor (same name, `max_restarts=-1`) marks every job the book
still shows running as `lost`, with that reason, before it takes a new one; the book also
reports a job `lost` when its heartbeat is older than its `stale_after` (a hung runner).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import cloudpickle

from rayfleet.logs import get_logger
from rayfleet.state import ActorHandle, actor, call

from .jobs import JobBook

log = get_logger("lxc")
POLL = 0.5
Job = Callable[[Callable[[str], None]], Awaitable[dict[str, Any]]]
"""An operation as a job: given where its output lines go, it answers ``{"result": ...}`` or
``{"error": {...}}`` (the status and message the synchronous route would have answered)."""
RUNNER_DIED = (
    "the actor running the job stopped (its host command ended with its SSH connection); "
    "the outcome on the host is unknown: check the container"
)


class JobRunner:
    """`book` and `dsn` name the `JobBook` actor (reached by name, never passed as a handle: a
    restarted runner is rebuilt from its constructor arguments, which must outlive whoever made it)."""

    def __init__(self, book: str, dsn: str | None = None) -> None:
        self._book_name = book
        self._dsn = dsn
        self._book: ActorHandle[JobBook] | None = None
        self._operations: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._recovered = False
        self.life = uuid.uuid4().hex  # this life of the actor: the jobs it claims carry it

    @property
    def book(self) -> ActorHandle[JobBook]:
        """Looked up on first use, not in the constructor (which runs inside `actor()`)."""
        if self._book is None:
            self._book = actor(JobBook, self._book_name, self._dsn)
        return self._book

    async def _recover(self) -> None:
        """Once per actor life: the jobs a previous life of this actor claimed are lost."""
        if not self._recovered:
            self._recovered = True
            lost = await call(self.book, JobBook.mark_lost, RUNNER_DIED, self.life)
            if lost:
                log.warning("jobs lost with the previous job runner", extra={"jobs": lost})

    async def start(self, job_id: str, payload: bytes) -> bool:
        """Run the pickled `Job` in the background; True once it is under way."""
        await self._recover()
        await call(self.book, JobBook.claim, job_id, self.life)
        job: Job = cloudpickle.loads(payload)
        lines: list[str] = []
        self._operations[job_id] = asyncio.ensure_future(job(lines.append))
        task = asyncio.create_task(self._run(job_id, lines), name=f"lxc-job-{job_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def cancel(self, job_id: str) -> bool:
        """Stop the job's operation now (the SSH layer TERMs the host command); False when it
        does not run here."""
        operation = self._operations.get(job_id)
        if operation is None or operation.done():
            return False
        operation.cancel()
        return True

    async def running(self) -> list[str]:
        return sorted(self._operations)

    async def _run(self, job_id: str, lines: list[str]) -> None:
        operation = self._operations[job_id]
        watch = asyncio.create_task(self._watch(job_id, lines, operation))
        outcome: dict[str, Any] = {}
        cancelled = False
        try:
            outcome = await operation
        except asyncio.CancelledError:
            cancelled = operation.cancelled()
            if not cancelled:
                raise
            outcome = {"error": {"status": None, "error": "cancelled on request; the host command was stopped"}}
        except Exception as exc:  # a Job maps its own errors; this is a bug in one
            log.error("job crashed", extra={"job": job_id, "error": repr(exc)})
            outcome = {"error": {"status": 500, "error": "internal error"}}
        finally:
            self._operations.pop(job_id, None)
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
        if lines:
            await call(self.book, JobBook.poll, job_id, _drain(lines))
        await call(self.book, JobBook.finish, job_id, outcome.get("result"), outcome.get("error"), cancelled)

    async def _watch(self, job_id: str, lines: list[str], operation: asyncio.Future[Any]) -> None:
        """Hand the output over every `POLL` s (a heartbeat too); cancel the operation when asked."""
        while True:
            await asyncio.sleep(POLL)
            if not await call(self.book, JobBook.poll, job_id, _drain(lines)):
                operation.cancel()
                return


def _drain(lines: list[str]) -> list[str]:
    taken = lines[:]
    del lines[: len(taken)]
    return taken
