"""``/metrics`` (scraper text) and the ring latency views (admin keys; the guard is applied by ``app``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from deployments.llm_gateway.routes.common import Gateway
from rayfleet.metrics import CONTENT_TYPE

_TEXT: dict[int | str, dict[str, Any]] = {
    200: {"description": "Prometheus text exposition format", "content": {"text/plain": {"schema": {"type": "string"}}}}
}

router = APIRouter()


@router.get("/metrics", tags=["operations"], response_class=Response, responses=_TEXT)
async def metrics(gateway: Gateway) -> Response:
    """Cluster-wide metrics in Prometheus text format (admin key)."""
    return Response(await gateway.metrics_text.render(), media_type=CONTENT_TYPE)


@router.get("/api/v1/metrics/latency", tags=["control plane"])
async def latency(gateway: Gateway) -> dict[str, Any]:
    """Per-ring and per-plugin latency percentiles (ms), cluster-wide."""
    return await gateway.views.latency.latency()


@router.get("/api/v1/metrics/ring-timeline", tags=["control plane"])
async def ring_timeline(gateway: Gateway) -> dict[str, Any]:
    """The last 20 requests of the cluster, each with its per-ring breakdown."""
    return {"traces": await gateway.views.latency.timeline()}
