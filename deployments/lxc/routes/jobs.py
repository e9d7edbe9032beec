"""Jobs of long operations started with `Prefer: respond-async` (create, clone, backup, px/backup-lxc,
restore, migrate, px/update, app/setup): read, cancel (`DELETE`), follow as server-sent events (`/events`)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Header, Query, Request
from starlette.responses import JSONResponse, StreamingResponse

from actors.lxc.jobs import JobBook
from actors.lxc.runner import JobRunner
from rayfleet.state import call

from ..errors import BadRequest, HTTPProblem, NotFound
from ..jobs import POLL
from ..responses import JsonList, JsonObject
from .common import Ctx

router = APIRouter(tags=["jobs"])
JOB_ID = re.compile(r"[0-9a-f]{32}")


@router.get("/jobs", response_model=JsonList)
async def jobs_list(state: Ctx, limit: int = Query(default=50, ge=1, le=500)) -> list[dict[str, Any]]:
    """The newest jobs first: id, kind, target, state (running, succeeded, failed, lost), started,
    finished, result, error."""
    return await call(state.jobs, JobBook.recent, limit)


KEEPALIVE = 15.0  # seconds between comment lines on a quiet event stream
FINAL = ("succeeded", "failed", "cancelled", "lost")


def _job_id(job_id: str) -> str:
    if not JOB_ID.fullmatch(job_id):
        raise BadRequest("'job_id' must be 32 hexadecimal digits")
    return job_id


@router.get("/jobs/{job_id}", response_model=JsonObject)
async def job_get(state: Ctx, job_id: str) -> dict[str, Any]:
    """One job: state (running, succeeded, failed, cancelled; `lost` when the actor running it
    died or stopped beating its heartbeat for 30 s, with the reason in `error`), `progress` (the host commands' output lines, each command
    announced by a `$ ...` line), result, error, started, finished."""
    job = await call(state.jobs, JobBook.get, _job_id(job_id))
    if job is None:
        raise NotFound(f"no job {job_id}")
    return job


@router.delete("/jobs/{job_id}", response_model=JsonObject, status_code=202)
async def job_cancel(state: Ctx, job_id: str) -> JSONResponse:
    """Cancel a running job: 202 and the job (`cancel_requested: true`). The host command is
    stopped (TERM on its SSH channel) and the job turns `cancelled` once it has ended; the
    container's lease is held until then. 409 when the job has already finished."""
    job = await call(state.jobs, JobBook.cancel, _job_id(job_id))
    if job is None:
        raise NotFound(f"no job {job_id}")
    if job["state"] != "running":
        raise HTTPProblem(409, f"job {job_id} has already finished ({job['state']})")
    await call(state.runner, JobRunner.cancel, job_id)
    return JSONResponse(job, status_code=202)


@router.get(
    "/jobs/{job_id}/events",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "`progress` events (one per output line), then one `end` event with the job",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    },
)
async def job_events(
    state: Ctx, request: Request, job_id: str, last_event_id: str | None = Header(default=None)
) -> StreamingResponse:
    """The job as server-sent events (`text/event-stream`): one `progress` event per output
    line (`id` = its number, `data` = `{"line": ...}`), then one `end` event whose data is the
    job (state, result, error, started, finished), and the stream closes. A client that
    reconnects with `Last-Event-ID: N` gets the lines after N."""
    found = await call(state.jobs, JobBook.follow, _job_id(job_id), 0)
    if found is None:
        raise NotFound(f"no job {job_id}")
    after = int(last_event_id) if last_event_id and last_event_id.isdigit() else 0
    return StreamingResponse(
        _events(state, request, job_id, after),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _events(state: Any, request: Request, job_id: str, after: int) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    quiet_since = loop.time()
    while True:
        seen = await call(state.jobs, JobBook.follow, job_id, after)
        if seen is None:
            return
        for line in seen["lines"]:
            after += 1
            yield f"id: {after}\nevent: progress\ndata: {json.dumps({'line': line})}\n\n"
            quiet_since = loop.time()
        job = seen["job"]
        if job["state"] in FINAL:
            yield f"event: end\ndata: {json.dumps(job)}\n\n"
            return
        if await request.is_disconnected():
            return
        if loop.time() - quiet_since > KEEPALIVE:
            yield ": keep-alive\n\n"
            quiet_since = loop.time()
        await asyncio.sleep(POLL)
