"""Container snapshots."""

from __future__ import annotations

from fastapi import APIRouter

from .. import containers, guestconfig, pve
from .. import validate as v
from ..models import RollbackBody, SnapshotBody
from ..responses import JsonList, Output
from ..service import HostResult
from .common import INSTANCE, Az, InstanceId, Region, Svc, body_opt, located, need

router = APIRouter(tags=["snapshots"])


@router.post(f"{INSTANCE}/snapshots", response_model=Output)
async def snapshot_create(svc: Svc, instance_id: InstanceId, body: SnapshotBody | None = body_opt) -> HostResult:
    body = body or SnapshotBody()
    name = v.snapshot_name(need(body.snapshot_name, "snapshot_name"))
    return await containers.snapshot_create(located(svc, body), v.vmid(instance_id), name)


@router.get(f"{INSTANCE}/snapshots", response_model=JsonList)
async def snapshot_list(svc: Svc, instance_id: InstanceId, region: Region = None, az: Az = None) -> list[pve.Snapshot]:
    return await containers.snapshot_list(svc.target(region, az), v.vmid(instance_id))


@router.delete(f"{INSTANCE}/snapshots/{{snapshot_name}}", response_model=Output)
async def snapshot_delete(
    svc: Svc, instance_id: InstanceId, snapshot_name: str, region: Region = None, az: Az = None
) -> HostResult:
    return await containers.snapshot_delete(svc.target(region, az), v.vmid(instance_id), v.snapshot_name(snapshot_name))


@router.post(f"{INSTANCE}/snapshots/{{snapshot_name}}/rollback", response_model=Output)
async def snapshot_rollback(
    svc: Svc, instance_id: InstanceId, snapshot_name: str, body: RollbackBody | None = body_opt
) -> HostResult:
    """`pct rollback`: the container's disks and configuration go back to the snapshot; a running
    container is stopped first, and started again with `start: true`. 404 for an unknown snapshot."""
    body = body or RollbackBody()
    name = v.snapshot_name(snapshot_name)
    return await guestconfig.rollback(located(svc, body), v.vmid(instance_id), name, body.start)
