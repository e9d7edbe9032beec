"""The request counters in Prometheus text format."""

from __future__ import annotations

from fastapi import APIRouter, Response

from deployments.ignore_gen.routes.common import Ctx
from rayfleet.metrics import CONTENT_TYPE, METRICS_ROUTE

router = APIRouter()


@router.get("/metrics", summary="Request counters (Prometheus text format)", **METRICS_ROUTE)
async def metrics_route(state: Ctx) -> Response:
    return Response(await state.metrics.render(), media_type=CONTENT_TYPE)
