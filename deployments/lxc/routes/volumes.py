"""Container volumes (mount points `mp0`-`mp9`)."""

from __future__ import annotations

from fastapi import APIRouter

from .. import containers, guestconfig
from .. import validate as v
from ..errors import BadRequest
from ..models import VolumeAttachBody, VolumeDetachBody
from ..responses import Output
from ..service import HostResult
from .common import INSTANCE, InstanceId, Svc, body_opt, located, need

router = APIRouter(tags=["volumes"])


@router.post(f"{INSTANCE}/volumes/attach", response_model=Output)
async def volume_attach(svc: Svc, instance_id: InstanceId, body: VolumeAttachBody | None = body_opt) -> HostResult:
    """`pct set <id> --mpN <volume_name>:<GiB>,mp=<mount_point>`: `slot` mp0-mp9, default the first free
    one (409 when all ten are used or the slot is taken; 400 when the path is already mounted)."""
    body = body or VolumeAttachBody()
    storage = v.storage(need(body.volume_name, "volume_name"), "volume_name")
    size = v.disk_size(need(body.volume_size, "volume_size"), "volume_size", relative_ok=False)
    mount = v.abs_path(need(body.mount_point, "mount_point"), "mount_point")
    if mount == "/":
        raise BadRequest("'mount_point' cannot be /")
    slot = v.mount_slot(body.slot) if body.slot is not None else None
    gib = max(1, round(v.size_in_gib(size)))
    return await guestconfig.attach(located(svc, body), v.vmid(instance_id), slot, storage, gib, mount)


@router.post(f"{INSTANCE}/volumes/detach", response_model=Output)
async def volume_detach(svc: Svc, instance_id: InstanceId, body: VolumeDetachBody | None = body_opt) -> HostResult:
    """Removes the mount in `slot` (mp0-mp9; 404 when it is empty). Without `slot`, the container's
    `mp0`, whatever the name (spec). The volume stays as an `unusedN` disk, as Proxmox keeps it."""
    body = body or VolumeDetachBody()
    if body.volume_name is not None:
        v.storage(body.volume_name, "volume_name")
    if body.slot is not None:
        return await guestconfig.detach(located(svc, body), v.vmid(instance_id), v.mount_slot(body.slot))
    return await containers.volume_detach(located(svc, body), v.vmid(instance_id))
