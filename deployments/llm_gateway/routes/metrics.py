"""``/metrics`` (scraper text) and the ring latency views (admin keys)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from starlette.responses import Response

from deployments.llm_gateway.gateway import Gateway
from rayfleet.metrics import CONTENT_TYPE

_TEXT: dict[int | str, dict[str, Any]] = {
    200: {"description": "Prometheus text exposition format", "content": {"text/plain": {"schema": {"type": "string"}}}}
}


def router(gateway: Gateway) -> APIRouter:
    api = APIRouter(dependencies=[Depends(gateway.admin_guard)])

    @api.get("/metrics", tags=["operations"], response_class=Response, responses=_TEXT)
    async def metrics() -> Response:
        """Cluster-wide metrics in Prometheus text format (admin key)."""
        await gateway.start()
        return Response(await gateway.render_metrics(), media_type=CONTENT_TYPE)

    @api.get("/api/v1/metrics/latency", tags=["control plane"])
    async def latency() -> dict[str, Any]:
        """Per-ring and per-plugin latency percentiles (ms), cluster-wide."""
        await gateway.start()
        return await gateway.latency.latency()

    @api.get("/api/v1/metrics/ring-timeline", tags=["control plane"])
    async def ring_timeline() -> dict[str, Any]:
        """The last 20 requests of the cluster, each with its per-ring breakdown."""
        await gateway.start()
        return {"traces": await gateway.latency.timeline()}

    return api
