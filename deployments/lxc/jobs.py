"""Long operations as jobs: `Prefer: respond-async` answers 202 and a job id (RFC 7240).

The operation runs in this replica's event loop exactly as the synchronous route would run it
(same validation before the 202, same container lease, held until the host command ends); the
job's record, result and error are kept by the `JobBook` actor. Without the header the route
stays synchronous, as the spec has it.
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

log = get_logger("lxc")
HEARTBEAT = 5.0
_running: set[asyncio.Task[None]] = set()


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
    _running.add(task)
    task.add_done_callback(_running.discard)
    url = f"{request.scope.get('root_path', '')}/api/v1/jobs/{job['id']}"
    return JSONResponse(
        {"job_id": job["id"], "kind": kind, "state": "running", "url": url},
        status_code=202,
        headers={"Location": url, "Preference-Applied": "respond-async"},
    )


async def _run(jobs: ActorHandle[JobBook], job_id: str, work: Callable[[], Awaitable[Any]]) -> None:
    beat = asyncio.create_task(_beat(jobs, job_id))
    result: Any = None
    error: dict[str, Any] | None = None
    try:
        result = jsonable_encoder(await work())
    except Exception as exc:  # every outcome is recorded on the job
        error = job_error(exc)
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
    await call(jobs, JobBook.finish, job_id, result, error)


async def _beat(jobs: ActorHandle[JobBook], job_id: str) -> None:
    while await call(jobs, JobBook.beat, job_id):
        await asyncio.sleep(HEARTBEAT)


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
