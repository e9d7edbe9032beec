"""The API's routes, one router per resource, assembled under `/api/v1`."""

from __future__ import annotations

from fastapi import APIRouter

from ..responses import ERRORS
from . import (
    apps,
    backups,
    diagnostics,
    health,
    hosts,
    instances,
    security,
    security_groups,
    snapshots,
    templates,
    volumes,
)

PROTECTED = (
    health.router,
    hosts.router,
    templates.router,
    security_groups.router,
    instances.router,
    snapshots.router,
    volumes.router,
    backups.router,
    diagnostics.router,
    apps.router,
    security.router,
)


def api_router() -> APIRouter:
    """`/health` (open) and every protected resource router, with the documented error answers."""
    api = APIRouter()
    api.include_router(health.health_router)
    for router in PROTECTED:
        api.include_router(router, responses=ERRORS)
    return api
