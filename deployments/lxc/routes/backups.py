"""Container backups (vzdump) and restores."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request

from .. import containers, jobs
from .. import validate as v
from ..errors import BadRequest
from ..models import BackupBody, RestoreBody
from ..responses import JOB_ACCEPTED, BackupDone, Result
from .common import INSTANCE, Ctx, InstanceId, Svc, body_opt, located, need

router = APIRouter(tags=["backups"])

_BACKUP_VOLID = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*:backup/[A-Za-z0-9][A-Za-z0-9._\-]*")


def _backup_source(value: object) -> str:
    """An absolute host path, or a backup volume id (storage:backup/name)."""
    if isinstance(value, str) and value.startswith("/"):
        return v.abs_path(value, "backup_file")
    if not isinstance(value, str) or len(value) > 255 or not _BACKUP_VOLID.fullmatch(value):
        raise BadRequest("'backup_file' must be an absolute host path or a backup volume id (storage:backup/name)")
    return value


@router.post(f"{INSTANCE}/restore", response_model=Result, responses=JOB_ACCEPTED)
async def instance_restore(
    svc: Svc, state: Ctx, request: Request, instance_id: InstanceId, body: RestoreBody | None = body_opt
) -> Any:
    """Replace the container from a backup; refused unless `force: true`. The backup file is kept.
    With `Prefer: respond-async`: 202 and a job (`/api/v1/jobs/{id}`)."""
    body = body or RestoreBody()
    source = _backup_source(need(body.backup_file, "backup_file"))
    storage = v.storage(body.storage) if body.storage else None
    if not body.force:
        raise BadRequest("restore replaces the container: pass 'force': true to confirm")
    t, vmid = located(svc, body), v.vmid(instance_id)

    def work() -> Any:
        return containers.restore(t, svc.config, vmid, source, storage, body.no_start)

    return await jobs.answer(state, request, "restore", {"instance_id": vmid, "key": t.key}, work)


@router.post(f"{INSTANCE}/backup", response_model=BackupDone, responses=JOB_ACCEPTED)
async def instance_backup(
    svc: Svc, state: Ctx, request: Request, instance_id: InstanceId, body: BackupBody | None = body_opt
) -> Any:
    """vzdump to `destination` (default /var/lib/vz/dump) or `storage`; the answer names the archive.
    With `Prefer: respond-async`: 202 and a job (`/api/v1/jobs/{id}`) whose result is this answer."""
    body = body or BackupBody()
    if body.destination and body.storage:
        raise BadRequest("give either 'destination' or 'storage', not both")
    destination = v.abs_path(body.destination, "destination") if body.destination else None
    storage = v.storage(body.storage) if body.storage else None
    mode = v.choice(body.mode, "mode", v.BACKUP_MODES)
    compress = v.COMPRESS[v.choice(body.compress, "compress", tuple(v.COMPRESS))]
    t = located(svc, body)
    vmid = v.vmid(instance_id)

    def work() -> Any:
        return containers.backup(t, svc.config, vmid, destination, storage, mode, compress, body.download)

    return await jobs.answer(state, request, "backup", {"instance_id": vmid, "key": t.key}, work)
