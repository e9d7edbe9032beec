"""Health (open) and the API's own configuration."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from ..models import ConfBackupBody
from ..responses import OPEN_ERRORS, Health, JsonObject, Output
from ..service import HostResult
from .common import Svc, body_opt

health_router = APIRouter(tags=["health"], responses=OPEN_ERRORS)
router = APIRouter(tags=["configuration"])


@health_router.get("/health", response_model=Health)
async def health() -> dict[str, str]:
    """Liveness; needs no API key."""
    return {"status": "ok"}


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
