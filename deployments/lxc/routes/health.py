"""Health (open) and the API's own configuration."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from rayfleet.metrics import CONTENT_TYPE, METRICS_ROUTE
from sims.pve.demo import published_children

from ..models import ConfBackupBody
from ..responses import OPEN_ERRORS, Health, JsonObject, Output
from ..service import HostResult
from .common import Ctx, Svc, body_opt

health_router = APIRouter(tags=["health"], responses=OPEN_ERRORS)
router = APIRouter(tags=["configuration"])


@health_router.get("/health", response_model=Health, response_model_exclude_none=True)
async def health(state: Ctx) -> dict[str, Any]:
    """Liveness; needs no API key. `children`: the supervised host processes (the demo pve-sim), when configured."""
    body: dict[str, Any] = {"status": "ok"}
    if state.config.supervised_children:
        body["children"] = _children(state.config.supervised_children)
    return body


@health_router.get("/metrics", **METRICS_ROUTE)
async def metrics(state: Ctx) -> Response:
    """Prometheus text: the supervised children's restarts, state and last exit; needs no API key."""
    state.child_metrics.update(_children(state.config.supervised_children))  # type: ignore[arg-type]
    return Response(await state.metrics.render(), media_type=CONTENT_TYPE)


def _children(paths: list[str]) -> list[dict[str, Any]]:
    return [status for path in paths for status in published_children(path)]


@router.get("/conf", response_model=JsonObject)
async def conf(svc: Svc) -> dict[str, Any]:
    """The configuration in force, secrets masked."""
    return svc.masked_config()


@router.post("/conf/validate", response_model=Output)
async def conf_validate(svc: Svc) -> HostResult:
    return svc.validate_config()


@router.post("/conf/backup", response_model=Output)
async def conf_backup(svc: Svc, body: ConfBackupBody | None = body_opt) -> HostResult:
    """Write the masked configuration inside `conf_backup_dir` (optionally timestamped, gzip-compressed)."""
    body = body or ConfBackupBody()
    return svc.backup_config(body.destination_path, body.timestamp, body.compress)
