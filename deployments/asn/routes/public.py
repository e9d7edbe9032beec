"""Public pages: service information and the health of each dependency (no API key)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import JSONResponse

from deployments.asn import schemas
from deployments.asn.holder import DatasetHolder
from deployments.asn.limiter import Limiter
from deployments.asn.routes.common import VERSION, Ctx

PUBLIC_ROUTES = ["/api/", "/api/health", "/api/docs", "/api/redoc", "/api/openapi.json"]
PROTECTED_ROUTES = [
    "/api/v1/asn/{asn}",
    "/api/v1/ip/{address}",
    "/api/v1/ip/bulk",
    "/api/v1/search?q=&country=&limit=",
    "/api/v1/country/{country}/prefixes?family=",
]

router = APIRouter(prefix="/api", tags=["public"])


@router.get("/", summary="Service information")
async def root(request: Request, state: Ctx) -> dict[str, Any]:
    base = request.scope.get("root_path", "").rstrip("/")
    rate = state.config.rate_limit
    store = state.dataset.store
    return {
        "service": "asn",
        "name": "ASN lookup API",
        "version": VERSION,
        "docs": f"{base}/api/docs",
        "redoc": f"{base}/api/redoc",
        "openapi": f"{base}/api/openapi.json",
        "endpoints": {
            "public": [f"{base}{p}" for p in PUBLIC_ROUTES],
            "protected": [f"{base}{p}" for p in PROTECTED_ROUTES],
        },
        "authentication": "header X-API-Key",
        "client_ip": request.scope.get("state", {}).get("client_ip"),
        "rate_limit": {"limit": rate.limit, "window_seconds": rate.window_seconds},
        "dataset": store.dataset() if store else None,
    }


@router.get(
    "/health",
    summary="Health of each dependency",
    response_model=schemas.Health,
    responses={503: {"model": schemas.Health, "description": "a dependency is down"}},
)
async def health(state: Ctx) -> JSONResponse:
    dataset_status, store_status = await asyncio.gather(dataset_health(state.dataset), store_health(state.limiter))
    store_key = "redis" if state.config.rate_limit.redis_url else "rate_limit_actor"
    dependencies = {"dataset": dataset_status, store_key: store_status}
    healthy = all(d["status"] == "up" for d in dependencies.values())
    meta = state.dataset.store.dataset() if state.dataset.store else {}
    body = {
        "status": "healthy" if healthy else "degraded",
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "version": VERSION,
        "dataset_date": meta.get("date"),
        "dataset_age_days": meta.get("age_days"),
        "dependencies": dependencies,
    }
    return JSONResponse(body, status_code=200 if healthy else 503)


async def dataset_health(holder: DatasetHolder) -> dict[str, Any]:
    if holder.store is None:
        status = "down" if holder.phase == "failed" else "loading"
        return {"status": status, "phase": holder.phase, "error": holder.error}
    try:
        rows = holder.store.counts()
    except Exception as exc:  # the file became unreadable after loading
        return {"status": "down", "phase": holder.phase, "error": type(exc).__name__}
    ok = rows["asn"] > 0 and rows["prefix"] > 0
    return {
        "status": "up" if ok else "down",
        "rows": rows,
        "dataset": holder.store.dataset(),
        "load_seconds": holder.load_seconds,
    }


async def store_health(limiter: Limiter) -> dict[str, Any]:
    try:
        return await asyncio.wait_for(limiter.ping(), timeout=2.0)
    except TimeoutError:
        return {"status": "down", "error": "timeout"}
