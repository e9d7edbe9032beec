"""Hypervisor hosts: listing, status, reboot, clusters, updates, cluster services, host backups, host exec."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request

from rayfleet.auth import fingerprint, presented_key
from rayfleet.http import client_ip, request_id

from .. import jobs
from .. import validate as v
from ..errors import HTTPProblem
from ..models import BackupLxcBody, HostBackupBody, HostExecBody, Located, RebootBody, UpdateBody
from ..responses import EXEC_ERRORS, JOB_ACCEPTED, HostEntry, Output, Result, TemplateEntry, UpdateDone
from ..service import HostResult
from .common import Az, Ctx, Region, Svc, body_opt, command_words, located, need

router = APIRouter(tags=["hosts"])


@router.get("/px/hosts", response_model=list[HostEntry])
async def px_hosts(svc: Svc, region: Region = None) -> list[HostEntry]:
    """Every configured host (or a region's): DNS lookup and an SSH `hostname` probe."""
    return await svc.hosts(region)


@router.get("/px/status", response_model=Result)
async def px_status(svc: Svc, region: Region = None, az: Az = None) -> HostResult:
    return await svc.host_status(svc.target(region, az))


@router.post("/px/reboot", response_model=Output)
async def px_reboot(svc: Svc, body: RebootBody | None = body_opt) -> HostResult:
    body = body or RebootBody()
    return await svc.reboot(located(svc, body), body.confirm)


@router.get("/px/templates", response_model=list[TemplateEntry])
async def px_templates(svc: Svc, region: Region = None, az: Az = None) -> list[TemplateEntry]:
    return await svc.templates(svc.target(region, az))


@router.get("/px/clusters", response_model=Result)
async def px_clusters(svc: Svc, region: Region = None, az: Az = None) -> HostResult:
    return await svc.clusters(svc.target(region, az))


@router.post("/px/update", response_model=UpdateDone, responses=JOB_ACCEPTED)
async def px_update(svc: Svc, state: Ctx, request: Request, body: UpdateBody | None = body_opt) -> Any:
    """Package update and dist-upgrade: every host, a region's hosts, or one zone (each node of a
    cluster), reported per host under `results` (upgraded, failed, unreachable); an error only when
    every host failed (500 if one really failed, else 503). With `Prefer: respond-async`: 202 and a
    job (`/api/v1/jobs/{id}`)."""
    region, az = (body.region, body.az) if body is not None else (None, None)
    targets = svc.targets(region, az)
    hosts = {"hosts": [n.key for t in targets for n in t.each_node()]}
    return await jobs.answer(state, request, "px/update", hosts, lambda: svc.update(targets))


def _cluster_action(verb: str) -> Callable[..., Awaitable[HostResult]]:
    async def cluster_action(svc: Svc, body: Located | None = body_opt) -> HostResult:
        return await svc.cluster_services(located(svc, body), verb)

    cluster_action.__name__ = f"px_cluster_{verb}"
    cluster_action.__doc__ = f"`systemctl {verb} pve-cluster corosync` on the host."
    return cluster_action


for _verb in ("start", "stop", "restart"):
    router.add_api_route(f"/px/cluster/{_verb}", _cluster_action(_verb), methods=["POST"], response_model=Result)


@router.post("/px/backup-lxc", response_model=Result, responses=JOB_ACCEPTED)
async def px_backup_lxc(svc: Svc, state: Ctx, request: Request, body: BackupLxcBody | None = body_opt) -> Any:
    """`vzdump <vmid> --storage <s> --mode <m>`; with `Prefer: respond-async`: 202 and a job."""
    body = body or BackupLxcBody()
    vmid = v.vmid(need(body.vmid, "vmid"), "vmid")
    storage = v.storage(need(body.storage, "storage"))
    mode = v.choice(body.mode, "mode", v.BACKUP_MODES)
    t = located(svc, body)
    target = {"instance_id": vmid, "key": t.key}
    return await jobs.answer(state, request, "backup", target, lambda: svc.backup_lxc(t, vmid, storage, mode))


@router.post("/px/backup", response_model=Output, responses=JOB_ACCEPTED)
async def px_backup(svc: Svc, state: Ctx, request: Request, body: HostBackupBody | None = body_opt) -> Any:
    """`tar -czf <backup_dir>/proxmox-backup-<ts>.tar.gz /etc/pve` on the host; with
    `Prefer: respond-async`: 202 and a job."""
    body = body or HostBackupBody()
    t, backup_dir = located(svc, body), v.abs_path(body.backup_dir, "backup_dir")
    return await jobs.answer(state, request, "px/backup", {"hosts": [t.key]}, lambda: svc.host_backup(t, backup_dir))


@router.post("/px/exec", response_model=Result, responses=EXEC_ERRORS)
async def px_exec(request: Request, svc: Svc, body: HostExecBody | None = body_opt) -> HostResult:
    """Run a command as root on the host (no shell); audited. Other body fields are ignored."""
    if not svc.config.api.host_exec_enabled:
        raise HTTPProblem(403, "host command execution is disabled (api.host_exec_enabled: false)")
    body = body or HostExecBody()
    words = await command_words(body.command)
    who = {
        "request_id": request_id(request),
        "client": client_ip(request),
        "key_fingerprint": fingerprint(presented_key(request, "X-API-Key", bearer=False) or ""),
    }
    return await svc.host_exec(svc.target(body.region, body.az), words, who)
