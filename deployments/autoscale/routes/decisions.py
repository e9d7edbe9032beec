"""The scaling model's record (`/api/v1/decisions`, `/api/v1/timelines`): what it decided, from what, with what outcome.

Both read the scaler actor (key + rate limit, like `/resource`); 503 when this
deployment runs no scaling model (`scaler.enabled` or `monitor.enabled` false).
Query parameters are validated as text by `filters` (400 "Validation failed").
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from actors.autoscale.scaler import ScalerActor
from rayfleet.state import ActorHandle, call

from ..errors import ApiError, ErrorBody, success
from ..filters import decision_filter, timeline_filter
from ..schemas import DecisionsEnvelope, TimelinesEnvelope
from ..state import AutoscaleState
from .common import Ctx

router = APIRouter(tags=["decisions"])
NOT_RUNNING: dict[int | str, dict[str, Any]] = {
    503: {"model": ErrorBody, "description": "this deployment runs no scaling model"}
}
Text = Annotated[str | None, Query()]


def _scaler(state: AutoscaleState) -> ActorHandle[ScalerActor]:
    if state.scaler is None:
        raise ApiError(503, "The scaling model is not running on this deployment")
    return state.scaler


@router.get(
    "/api/v1/decisions",
    response_model=DecisionsEnvelope,
    responses=NOT_RUNNING,
    summary="The scaling model's decisions (newest `limit`, oldest first) with inputs and outcome",
)
async def decisions(
    request: Request,
    state: Ctx,
    lxc_id: Annotated[str | None, Query(description="container id, ASCII digits in 100-999999")] = None,
    action: Annotated[str | None, Query(description="set, hold, flag or skip")] = None,
    since: Annotated[str | None, Query(description="Unix time in seconds (decisions at or after it)")] = None,
    limit: Annotated[str | None, Query(description="1-1000, default 100")] = None,
) -> dict[str, object]:
    f = decision_filter(request.query_params)
    page = await call(_scaler(state), ScalerActor.decisions, f.vmid, f.action, f.since, f.limit)
    return success(f"{len(page['decisions'])} decisions", page)


@router.get(
    "/api/v1/timelines",
    response_model=TimelinesEnvelope,
    responses=NOT_RUNNING,
    summary="Per container: sampled usage and allocation over time, and the decisions about it",
)
async def timelines(
    request: Request,
    state: Ctx,
    lxc_id: Annotated[str | None, Query(description="one container (ASCII digits in 100-999999)")] = None,
) -> dict[str, object]:
    vmid = timeline_filter(request.query_params)
    data = await call(_scaler(state), ScalerActor.timelines, vmid)
    return success(f"{len(data['containers'])} containers", data)
