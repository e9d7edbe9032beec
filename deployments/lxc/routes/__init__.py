"""The API's routes, one router per resource, assembled under `/api/v1`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends

from ..responses import ERRORS
from . import (
    apps,
    backups,
    diagnostics,
    health,
    hosts,
    instances,
    jobs,
    security,
    security_groups,
    settings,
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
    settings.router,
    jobs.router,
    snapshots.router,
    volumes.router,
    backups.router,
    diagnostics.router,
    apps.router,
    security.router,
)


def api_router(guard: Callable[..., Any]) -> APIRouter:
    """`/health` (open) and every resource router behind `guard` (the platform API-key dependency)."""
    api = APIRouter()
    api.include_router(health.health_router)
    for router in PROTECTED:
        api.include_router(router, responses=ERRORS, dependencies=[Depends(guard)])
    return api
