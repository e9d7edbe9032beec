"""Security discovery and scanning."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from .. import diagnostics
from .. import validate as v
from ..responses import Discovered, SecurityScan
from .common import INSTANCE, Az, InstanceId, Region, Svc

router = APIRouter(tags=["security"])


@router.get("/sec/discovery", response_model=list[Discovered])
async def sec_discovery(
    svc: Svc,
    lxc_id: Annotated[str | None, Query(description="one container id")] = None,
    region: Region = None,
    az: Az = None,
) -> list[Discovered]:
    """Containers and, for running ones, their listening sockets."""
    return await diagnostics.discovery(svc.target(region, az), v.vmid(lxc_id, "lxc_id") if lxc_id else None)


@router.get(f"{INSTANCE}/sec/scan", response_model=SecurityScan)
async def sec_scan(
    svc: Svc,
    instance_id: InstanceId,
    scan_type: Annotated[str, Query(description="quick or full")] = "quick",
    region: Region = None,
    az: Az = None,
) -> SecurityScan:
    kind = v.choice(scan_type, "scan_type", ("quick", "full"))
    return await diagnostics.security_scan(svc.target(region, az), v.vmid(instance_id), kind)
