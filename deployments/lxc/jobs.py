"""Long operations as jobs: `Prefer: respond-async` answers 202 and a job id (RFC 7240).

The operation is the closure the synchronous route would run (same validation before the 202,
same container lease, held until the host command ends). It is shipped to the `JobRunner`
actor pickled (cloudpickle: the `LxcService` and `Target`s in it travel as their configuration
and are rebuilt there with the runner's own SSH pool), so the job outlives this replica: its
record, output lines, result and error are kept by the `JobBook` actor in durable storage.
Without the header the route stays synchronous, as the spec has it.

Every output line of its host commands (`hosts.JOB_OUTPUT`, read by `Target.run`) goes to the
book every half second; cancelling (from any replica) reaches the runner at once, and through
the book at its next hand-over otherwise: the SSH layer TERMs the remote command and waits for
its channel to close, and only then does the container's lease go.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import cloudpickle
from fastapi import Request
from fastapi.encoders import jsonable_encoder
from starlette.responses import JSONResponse

from actors.lxc.jobs import JobBook
from actors.lxc.runner import Job, JobRunner
from rayfleet.logs import get_logger
from rayfleet.state import call

from . import hosts
from . import validate as v
from .errors import INTERNAL_MESSAGE, BadRequest, CommandFailed, HTTPProblem, NotFound, describe

if TYPE_CHECKING:
    from .state import LxcState

log = get_logger("lxc")
POLL = 0.5  # how often a follower of a job reads the book


def wants_job(request: Request) -> bool:
    return any(p.strip().lower() == "respond-async" for p in request.headers.get("prefer", "").split(","))


async def answer(
    state: LxcState, request: Request, kind: str, target: dict[str, Any], work: Callable[[], Awaitable[Any]]
) -> Any:
    """A job (202) when the request prefers `respond-async`, else `work`'s answer now."""
    if wants_job(request):
        return await start(state, request, kind, target, work)
    return await work()


def as_job(work: Callable[[], Awaitable[Any]]) -> Job:
    """`work` as the runner runs it: its output lines to `emit`, its outcome as the route would answer."""

    async def job(emit: Callable[[str], None]) -> dict[str, Any]:
        token = hosts.JOB_OUTPUT.set(emit)
        try:
            return {"result": jsonable_encoder(await work())}
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every outcome is recorded on the job
            return {"error": job_error(exc)}
        finally:
            hosts.JOB_OUTPUT.reset(token)

    return job


async def start(
    state: LxcState, request: Request, kind: str, target: dict[str, Any], work: Callable[[], Awaitable[Any]]
) -> JSONResponse:
    """Record the job, hand `work` to the runner, answer 202 with where to follow it."""
    payload = cloudpickle.dumps(as_job(work))
    job = await call(state.jobs, JobBook.create, kind, target)
    try:
        await call(state.runner, JobRunner.start, job["id"], payload)
    except Exception as exc:
        await call(state.jobs, JobBook.finish, job["id"], None, {"status": 500, "error": INTERNAL_MESSAGE})
        log.error("job not started", extra={"job": job["id"], "error": repr(exc)})
        raise
    url = f"{request.scope.get('root_path', '')}/api/v1/jobs/{job['id']}"
    return JSONResponse(
        {"job_id": job["id"], "kind": kind, "state": "running", "url": url},
        status_code=202,
        headers={"Location": url, "Preference-Applied": "respond-async"},
    )


def job_error(exc: Exception) -> dict[str, Any]:
    """What the synchronous route would have answered: its status and message."""
    if isinstance(exc, CommandFailed):
        return {
            "status": exc.status,
            "error": describe(exc),
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
