"""Container volumes (mount point `mp0`)."""

from __future__ import annotations

from fastapi import APIRouter

from .. import containers
from .. import validate as v
from ..errors import BadRequest
from ..models import VolumeAttachBody, VolumeDetachBody
from ..responses import Output
from ..service import HostResult
from .common import INSTANCE, InstanceId, Svc, body_opt, located, need

router = APIRouter(tags=["volumes"])


@router.post(f"{INSTANCE}/volumes/attach", response_model=Output)
async def volume_attach(svc: Svc, instance_id: InstanceId, body: VolumeAttachBody | None = body_opt) -> HostResult:
    """`pct set <id> --mp0 <volume_name>:<GiB>,mp=<mount_point>`."""
    body = body or VolumeAttachBody()
    storage = v.storage(need(body.volume_name, "volume_name"), "volume_name")
    size = v.disk_size(need(body.volume_size, "volume_size"), "volume_size", relative_ok=False)
    mount = v.abs_path(need(body.mount_point, "mount_point"), "mount_point")
    if mount == "/":
        raise BadRequest("'mount_point' cannot be /")
    return await containers.volume_attach(located(svc, body), v.vmid(instance_id), storage, size, mount)


@router.post(f"{INSTANCE}/volumes/detach", response_model=Output)
async def volume_detach(svc: Svc, instance_id: InstanceId, body: VolumeDetachBody | None = body_opt) -> HostResult:
    """Always removes the container's `mp0` mount, whatever the name (spec)."""
    body = body or VolumeDetachBody()
    if body.volume_name is not None:
        v.storage(body.volume_name, "volume_name")
    return await containers.volume_detach(located(svc, body), v.vmid(instance_id))
