"""Containers: create, list, get, bulk lifecycle, status, scale, clone, exec, services, migration."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request, Response

from .. import containers, guestconfig, jobs, pve
from .. import validate as v
from ..config import LxcConfig
from ..errors import BadRequest
from ..models import BulkBody, CloneBody, CreateBody, ExecBody, MigrateBody, ScaleBody, ServiceBody
from ..responses import JOB_ACCEPTED, BulkDone, Cloned, Created, InstanceStatus, JsonList, JsonObject, Result
from ..service import HostResult
from .common import INSTANCE, Az, Ctx, InstanceId, Region, Svc, body_opt, command_words, located, need

router = APIRouter(tags=["instances"])


def _create_request(config: LxcConfig, body: CreateBody) -> containers.CreateRequest:
    """Every creation field allow-listed; combinations that cannot work refused (400)."""
    if body.size not in config.instance_sizes:
        raise BadRequest(f"'size' must be one of: {', '.join(config.instance_sizes)}")
    ip = v.ipv4(body.ip, "ip") if body.ip is not None else None
    if ip and body.dhcp:
        raise BadRequest("give either 'ip' or 'dhcp': true, not both")
    if ip and body.count > 1:
        raise BadRequest("a static 'ip' can only be used with count 1")
    gateway = v.ipv4(body.gateway, "gateway") if body.gateway is not None else None
    if gateway and not ip:
        raise BadRequest("'gateway' needs a static 'ip'")
    return containers.CreateRequest(
        image_id=v.volid(need(body.image_id, "image_id")),
        size=body.size,
        count=body.count,
        hostname=v.hostname(body.hostname) if body.hostname is not None else None,
        password=v.password(body.password) if body.password is not None else None,
        ip=ip,
        netmask=v.netmask_bits(body.netmask),
        gateway=gateway,
        dns=v.dns_servers(body.dns) if body.dns is not None else None,
        dhcp=body.dhcp,
        ipv6=guestconfig.ipv6_fields(body.ipv6, body.gateway6),
        storage_size=v.disk_size(body.storage_size, relative_ok=False) if body.storage_size is not None else None,
        features=v.features(body.features) if body.features is not None else None,
        unprivileged=body.unprivileged,
    )


@router.post("/lxc/instances", response_model=Created, responses=JOB_ACCEPTED)
async def create(svc: Svc, state: Ctx, request: Request, body: CreateBody | None = body_opt) -> Any:
    """Create and start `count` containers (VMIDs from `pvesh get /cluster/nextid`, reserved).
    With `Prefer: respond-async`: 202 and a job (`/api/v1/jobs/{id}`) whose result is this answer."""
    body = body or CreateBody()
    req = _create_request(svc.config, body)
    t = located(svc, body)
    target = {"count": req.count, "key": t.key}
    return await jobs.answer(state, request, "create", target, lambda: containers.create(t, svc.config, req))


OFFLINE_HEADER = {
    "X-Offline-Nodes": {
        "description": "a cluster zone: the configured nodes the cluster reports offline or whose SSH server "
        "does not answer (comma-separated)",
        "schema": {"type": "string"},
    }
}


@router.get("/lxc/instances", response_model=JsonList, responses={200: {"headers": OFFLINE_HEADER}})
async def list_instances(
    svc: Svc, response: Response, region: Region = None, az: Az = None
) -> list[pve.ContainerEntry]:
    """Every node's containers; in a cluster, `X-Offline-Nodes` names the configured nodes the
    cluster reports offline or whose SSH server does not answer (their containers are listed with
    `status: unknown`)."""
    view = await containers.zone_view(svc.target(region, az))
    if view.offline:
        response.headers["X-Offline-Nodes"] = ", ".join(view.offline)
    return view.containers


@router.get(INSTANCE, response_model=JsonObject)
async def get_instance(svc: Svc, instance_id: InstanceId, region: Region = None, az: Az = None) -> pve.ContainerConfig:
    """The container's configuration (`pvesh get /nodes/<node>/lxc/<id>/config`)."""
    return await containers.get_instance(svc.target(region, az), v.vmid(instance_id))


def _bulk_action(action: str) -> Callable[..., Awaitable[BulkDone]]:
    async def bulk_action(svc: Svc, body: BulkBody | None = body_opt) -> BulkDone:
        body = body or BulkBody()
        ids = v.vmids(body.instance_ids)
        return await containers.bulk(located(svc, body), action, ids)

    bulk_action.__name__ = f"instances_{action}"
    bulk_action.__doc__ = (
        f"{action.capitalize()} every listed container; 404 (nothing done) if one does not exist. "
        "Each container is reported under `results` (a container already in the wanted state, or stopped "
        "for reboot, is an outcome, not an error); the answer is an error only when every container failed."
    )
    return bulk_action


for _action in ("start", "stop", "terminate", "reboot"):
    router.add_api_route(f"/lxc/instances/{_action}", _bulk_action(_action), methods=["POST"], response_model=BulkDone)


@router.post("/lxc/instances/status", response_model=dict[str, InstanceStatus])
async def instances_status(svc: Svc, body: BulkBody | None = body_opt) -> dict[str, InstanceStatus]:
    """Per container: its state, and for a running one a snapshot of load average, memory, disk and swap
    (a stopped container is a state, not an error)."""
    body = body or BulkBody()
    return await containers.status(located(svc, body), v.vmids(body.instance_ids))


def _scale_request(body: ScaleBody) -> containers.ScaleRequest:
    if body.disk_read_limit is not None or body.disk_write_limit is not None:
        raise BadRequest("'disk_read_limit' and 'disk_write_limit' are not supported")
    req = containers.ScaleRequest(
        memory=v.positive_int(body.memory, "memory", 16, 4_194_304) if body.memory is not None else None,
        cpulimit=v.positive_number(body.cpulimit, "cpulimit") if body.cpulimit is not None else None,
        cpucores=v.positive_int(body.cpucores, "cpucores", 1, 8192) if body.cpucores is not None else None,
        storage_size=v.disk_size(body.storage_size) if body.storage_size is not None else None,
        net_limit=v.positive_number(body.net_limit, "net_limit", 0, 100_000) if body.net_limit is not None else None,
    )
    if all(getattr(req, f) is None for f in ("memory", "cpulimit", "cpucores", "storage_size", "net_limit")):
        raise BadRequest("give at least one of memory, cpulimit, cpucores, storage_size, net_limit")
    return req


@router.post("/lxc/instances/scale", response_model=BulkDone)
async def instances_scale(svc: Svc, body: ScaleBody | None = body_opt) -> BulkDone:
    """Memory, CPU limit, cores, root disk (`64G` or `+8G`; never shrinks), network rate; reported
    per container (`scaled` or `failed`, as the other bulk actions)."""
    body = body or ScaleBody()
    ids = v.vmids(body.instance_ids)
    return await containers.scale(located(svc, body), ids, _scale_request(body))


@router.post("/lxc/instances/clone", response_model=Cloned, responses=JOB_ACCEPTED)
async def instances_clone(svc: Svc, state: Ctx, request: Request, body: CloneBody | None = body_opt) -> Any:
    """`pct clone` through a temporary snapshot; with `Prefer: respond-async`: 202 and a job."""
    body = body or CloneBody()
    source = v.vmid(need(body.source_instance_id, "source_instance_id"), "source_instance_id")
    target = v.vmid(body.target_instance_id, "target_instance_id") if body.target_instance_id else None
    if target == source:
        raise BadRequest("'target_instance_id' must differ from 'source_instance_id'")
    t = located(svc, body)
    return await jobs.answer(
        state,
        request,
        "clone",
        {"instance_id": source, "key": t.key},
        lambda: containers.clone(t, source, target, body.full),
    )


@router.post(f"{INSTANCE}/exec", response_model=Result)
async def instance_exec(svc: Svc, instance_id: InstanceId, body: ExecBody | None = body_opt) -> HostResult:
    """`pct exec <id> -- <words>`: no shell; metacharacters refused; at most 16384 characters and 1024 words."""
    body = body or ExecBody()
    words = await command_words(body.command)
    return await containers.exec_in(located(svc, body), v.vmid(instance_id), words)


@router.post(f"{INSTANCE}/service", response_model=Result)
async def instance_service(svc: Svc, instance_id: InstanceId, body: ServiceBody | None = body_opt) -> HostResult:
    body = body or ServiceBody()
    action = v.choice(need(body.action, "action"), "action", v.SERVICE_ACTIONS)
    name = v.service_name(need(body.service_name, "service_name"))
    return await containers.service(located(svc, body), v.vmid(instance_id), action, name)


@router.post(f"{INSTANCE}/migrate", response_model=Result, responses=JOB_ACCEPTED)
async def instance_migrate(
    svc: Svc, state: Ctx, request: Request, instance_id: InstanceId, body: MigrateBody | None = body_opt
) -> Any:
    """`pct migrate`; with `Prefer: respond-async`: 202 and a job (`/api/v1/jobs/{id}`)."""
    body = body or MigrateBody()
    node = v.node(need(body.target_host, "target_host"))
    storage = v.storage(body.target_storage, "target_storage") if body.target_storage else None
    t, vmid = located(svc, body), v.vmid(instance_id)

    def work() -> Any:
        return containers.migrate(t, vmid, node, body.restart, storage)

    return await jobs.answer(state, request, "migrate", {"instance_id": vmid, "key": t.key}, work)
