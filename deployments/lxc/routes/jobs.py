"""Jobs of long operations started with `Prefer: respond-async` (backup, restore, migrate, px/update,
app/setup)."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Query

from actors.lxc.jobs import JobBook
from rayfleet.state import call

from ..errors import BadRequest, NotFound
from ..responses import JsonList, JsonObject
from .common import Ctx

router = APIRouter(tags=["jobs"])
JOB_ID = re.compile(r"[0-9a-f]{32}")


@router.get("/jobs", response_model=JsonList)
async def jobs_list(state: Ctx, limit: int = Query(default=50, ge=1, le=500)) -> list[dict[str, Any]]:
    """The newest jobs first: id, kind, target, state (running, succeeded, failed, lost), started,
    finished, result, error."""
    return await call(state.jobs, JobBook.recent, limit)


@router.get("/jobs/{job_id}", response_model=JsonObject)
async def job_get(state: Ctx, job_id: str) -> dict[str, Any]:
    """One job. `lost`: still running when its replica stopped beating its heartbeat (30 s)."""
    if not JOB_ID.fullmatch(job_id):
        raise BadRequest("'job_id' must be 32 hexadecimal digits")
    job = await call(state.jobs, JobBook.get, job_id)
    if job is None:
        raise NotFound(f"no job {job_id}")
    return job
