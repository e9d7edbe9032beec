"""Public routes: `GET /metrics` (no key, no limit) and `GET /health/check` (no key; rate limited)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from starlette.responses import JSONResponse, Response

from rayfleet.metrics import CONTENT_TYPE
from sims.pve.demo import published_children

from ..errors import ErrorBody
from ..schemas import HealthBody
from ..telemetry import metrics_library_available
from .common import Ctx, rate_limited

router = APIRouter(tags=["public"])


@router.get(
    "/metrics",
    summary="Prometheus text exposition (cluster-wide)",
    response_class=Response,
    responses={501: {"model": ErrorBody, "description": "the prometheus_client library is not installed"}},
)
async def scrape(state: Ctx) -> Response:
    if not metrics_library_available():
        return JSONResponse(
            {
                "status": "error",
                "message": "Metrics are unavailable: the prometheus_client library is not installed",
            },
            status_code=501,
        )
    if state.config.supervised_children:
        state.metrics.children().update(_children(state.config.supervised_children))  # type: ignore[arg-type]
    return Response(await state.metrics.registry.render(), media_type=CONTENT_TYPE)


@router.get(
    "/health/check",
    response_model=HealthBody,
    responses={503: {"model": HealthBody}},
    dependencies=[Depends(rate_limited)],
    summary="`pct list` on every host (cached)",
)
async def health(state: Ctx) -> JSONResponse:
    ok, detail = await state.probe.check()
    body: dict[str, Any] = {
        "status": "healthy" if ok else "unhealthy",
        "checks": {"lxc_commands": {"ok": ok, "detail": detail}},
    }
    if state.config.supervised_children:
        body["children"] = _children(state.config.supervised_children)
    return JSONResponse(body, status_code=200 if ok else 503)


def _children(paths: list[str]) -> list[dict[str, Any]]:
    return [status for path in paths for status in published_children(path)]
