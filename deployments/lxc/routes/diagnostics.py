"""Read-mostly inspection of one container: storage, scale advice, ports, info, health, reports."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from .. import diagnostics
from .. import validate as v
from ..responses import HealthCheck, Info, NetCheck, Report, Resources, Result, ScaleCheck
from ..service import HostResult
from .common import INSTANCE, Az, Flag, InstanceId, Region, Svc, need

router = APIRouter(tags=["diagnostics"])


@router.get(f"{INSTANCE}/storage", response_model=Result)
async def instance_storage(svc: Svc, instance_id: InstanceId, region: Region = None, az: Az = None) -> HostResult:
    """`df -h` inside the container."""
    return await diagnostics.storage(svc.target(region, az), v.vmid(instance_id))


@router.get(f"{INSTANCE}/scale-check", response_model=ScaleCheck)
async def instance_scale_check(svc: Svc, instance_id: InstanceId, region: Region = None, az: Az = None) -> ScaleCheck:
    """A read-only recommendation from the configured `scaling` thresholds."""
    return await diagnostics.scale_check(svc.target(region, az), svc.config, v.vmid(instance_id))


@router.get(f"{INSTANCE}/net-check", response_model=NetCheck)
async def instance_net_check(
    svc: Svc,
    instance_id: InstanceId,
    protocol: Annotated[str, Query(description="tcp or udp")] = "tcp",
    port: Annotated[str | None, Query(description="port 1-65535 (required)")] = None,
    region: Region = None,
    az: Az = None,
) -> NetCheck:
    proto = v.choice(protocol, "protocol", ("tcp", "udp"))
    return await diagnostics.net_check(svc.target(region, az), v.vmid(instance_id), proto, v.port(need(port, "port")))


@router.get(f"{INSTANCE}/info", response_model=Info)
async def instance_info(svc: Svc, instance_id: InstanceId, region: Region = None, az: Az = None) -> Info:
    """IP addresses, in-container hostname, DNS servers, host-side node name."""
    return await diagnostics.info(svc.target(region, az), v.vmid(instance_id))


@router.get(f"{INSTANCE}/public-ip", response_model=Result)
async def instance_public_ip(svc: Svc, instance_id: InstanceId, region: Region = None, az: Az = None) -> HostResult:
    return await diagnostics.public_ip(svc.target(region, az), v.vmid(instance_id))


@router.get(f"{INSTANCE}/health-check", response_model=HealthCheck)
async def instance_health(
    svc: Svc, instance_id: InstanceId, fix: Flag = None, region: Region = None, az: Az = None
) -> HealthCheck:
    """`fix=true`: disk over 80% deletes files older than 7 days in /tmp and /var/tmp; DNS failure restarts networking."""
    return await diagnostics.health_check(svc.target(region, az), v.vmid(instance_id), v.query_flag(fix, "fix"))


@router.get(f"{INSTANCE}/report", response_model=Report)
async def instance_report(svc: Svc, instance_id: InstanceId, region: Region = None, az: Az = None) -> Report:
    return await diagnostics.report(svc.target(region, az), svc.config, v.vmid(instance_id))


@router.get(f"{INSTANCE}/resources", response_model=Resources)
async def instance_resources(svc: Svc, instance_id: InstanceId, region: Region = None, az: Az = None) -> Resources:
    return await diagnostics.resources(svc.target(region, az), v.vmid(instance_id))
