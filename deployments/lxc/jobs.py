"""Long operations as jobs: `Prefer: respond-async` answers 202 and a job id (RFC 7240).

The operation runs in this replica's event loop exactly as the synchronous route would run it
(same validation before the 202, same container lease, held until the host command ends); the
job's record, result and error are kept by the `JobBook` actor. Without the header the route
stays synchronous, as the spec has it.

While it runs, every output line of its host commands (`JOB_OUTPUT`, read by `Target.run`)
is handed to the book every `POLL` seconds; the answer says whether the job was cancelled
(from any replica). Cancelling cancels the operation's task: the SSH layer TERMs the remote
command and waits for its channel to close, and only then does the container's lease go.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from starlette.responses import JSONResponse

from actors.lxc.jobs import JobBook
from rayfleet.logs import get_logger
from rayfleet.state import ActorHandle, call

from . import validate as v
from .errors import INTERNAL_MESSAGE, BadRequest, CommandFailed, HTTPProblem, NotFound
from .hosts import JOB_OUTPUT

log = get_logger("lxc")
POLL = 0.5
_running: dict[str, asyncio.Task[Any]] = {}  # job id -> the operation's task, in this replica
_tasks: set[asyncio.Task[None]] = set()
_notices: dict[str, asyncio.Event] = {}  # job id -> set when this replica records a change of it


async def changed(job_id: str, timeout: float) -> None:
    """Wait until this replica records a change of the job (its end, new output), at most `timeout` s
    (a job run by another replica is seen at the follower's next poll)."""
    notice = _notices.setdefault(job_id, asyncio.Event())
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(notice.wait(), timeout)


def _notify(job_id: str) -> None:
    notice = _notices.pop(job_id, None)
    if notice is not None:
        notice.set()


def wants_job(request: Request) -> bool:
    return any(p.strip().lower() == "respond-async" for p in request.headers.get("prefer", "").split(","))


async def answer(
    jobs: ActorHandle[JobBook], request: Request, kind: str, target: dict[str, Any], work: Callable[[], Awaitable[Any]]
) -> Any:
    """A job (202) when the request prefers `respond-async`, else `work`'s answer now."""
    if wants_job(request):
        return await start(jobs, request, kind, target, work)
    return await work()


async def start(
    jobs: ActorHandle[JobBook], request: Request, kind: str, target: dict[str, Any], work: Callable[[], Awaitable[Any]]
) -> JSONResponse:
    """Record the job, run `work` in the background, answer 202 with where to follow it."""
    job = await call(jobs, JobBook.create, kind, target)
    task = asyncio.create_task(_run(jobs, job["id"], work), name=f"lxc-job-{job['id']}")
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    url = f"{request.scope.get('root_path', '')}/api/v1/jobs/{job['id']}"
    return JSONResponse(
        {"job_id": job["id"], "kind": kind, "state": "running", "url": url},
        status_code=202,
        headers={"Location": url, "Preference-Applied": "respond-async"},
    )


def cancel_here(job_id: str) -> bool:
    """Cancel the job's operation at once when this replica runs it (else its own replica's
    next poll of the book does)."""
    task = _running.get(job_id)
    if task is None or task.done():
        return False
    task.cancel()
    return True


async def _run(jobs: ActorHandle[JobBook], job_id: str, work: Callable[[], Awaitable[Any]]) -> None:
    lines: list[str] = []
    token = JOB_OUTPUT.set(lines.append)
    try:
        operation = asyncio.ensure_future(work())
    finally:
        JOB_OUTPUT.reset(token)
    _running[job_id] = operation
    watch = asyncio.create_task(_watch(jobs, job_id, lines, operation))
    result: Any = None
    error: dict[str, Any] | None = None
    cancelled = False
    try:
        result = jsonable_encoder(await operation)
    except asyncio.CancelledError:
        cancelled = operation.cancelled()
        if not cancelled:
            raise
        error = {"status": None, "error": "cancelled on request; the host command was stopped"}
    except Exception as exc:  # every outcome is recorded on the job
        error = job_error(exc)
    finally:
        _running.pop(job_id, None)
        watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watch
    if lines:
        await call(jobs, JobBook.poll, job_id, _drain(lines))
    await call(jobs, JobBook.finish, job_id, result, error, cancelled)
    _notify(job_id)


async def _watch(jobs: ActorHandle[JobBook], job_id: str, lines: list[str], operation: asyncio.Future[Any]) -> None:
    """Hand the output over every `POLL` s (a heartbeat too); cancel the operation when asked."""
    while True:
        await asyncio.sleep(POLL)
        fresh = _drain(lines)
        keep_going = await call(jobs, JobBook.poll, job_id, fresh)
        if fresh:
            _notify(job_id)
        if not keep_going:
            operation.cancel()
            return


def _drain(lines: list[str]) -> list[str]:
    taken = lines[:]
    del lines[: len(taken)]
    return taken


def job_error(exc: Exception) -> dict[str, Any]:
    """What the synchronous route would have answered: its status and message."""
    if isinstance(exc, CommandFailed):
        return {
            "status": exc.status,
            "error": exc.details.strip(),
            "output": exc.output,
            "return_code": exc.return_code,
        }
    if isinstance(exc, BadRequest | v.Invalid):
        return {"status": 400, "error": str(exc)}
    if isinstance(exc, NotFound):
        return {"status": 404, "error": exc.message}
    if isinstance(exc, HTTPProblem):
        return {"status": exc.status, "error": exc.description}
    log.error("job failed", extra={"error": repr(exc)})
    return {"status": 500, "error": INTERNAL_MESSAGE}
