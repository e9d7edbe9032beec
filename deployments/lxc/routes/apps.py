"""Container-runtime applications: runtime setup, `docker run`, compose deployments, logs, removal."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from .. import apps, jobs
from .. import validate as v
from ..models import AppDeployBody, AppRemoveBody, AppRunBody, AppSetupBody, AppUpdateBody
from ..responses import JOB_ACCEPTED, BulkDone, Result
from ..service import HostResult
from .common import INSTANCE, Az, Ctx, InstanceId, Region, Svc, body_opt, command_words, located, need

router = APIRouter(tags=["applications"])


@router.post(f"{INSTANCE}/app/setup", response_model=Result, responses=JOB_ACCEPTED)
async def app_setup(
    svc: Svc, state: Ctx, request: Request, instance_id: InstanceId, body: AppSetupBody | None = body_opt
) -> Any:
    """Install the runtime and compose tool; `enable_nesting` sets nesting (and keyctl) and restarts first.
    With `Prefer: respond-async`: 202 and a job (`/api/v1/jobs/{id}`)."""
    body = body or AppSetupBody()
    t, vmid, nesting = located(svc, body), v.vmid(instance_id), body.enable_nesting
    target = {"instance_id": vmid, "key": t.key}
    return await jobs.answer(state, request, "app/setup", target, lambda: apps.setup(t, vmid, nesting))


@router.post(f"{INSTANCE}/app/run", response_model=Result)
async def app_run(svc: Svc, instance_id: InstanceId, body: AppRunBody | None = body_opt) -> HostResult:
    """`docker run <docker_command>`: same checks and limits as exec."""
    body = body or AppRunBody()
    words = await command_words(body.docker_command, "docker_command")
    return await apps.run(located(svc, body), v.vmid(instance_id), words)


@router.post(f"{INSTANCE}/app/deploy", response_model=Result, responses=JOB_ACCEPTED)
async def app_deploy(
    svc: Svc, state: Ctx, request: Request, instance_id: InstanceId, body: AppDeployBody | None = body_opt
) -> Any:
    """Compose `action` on the app named by the file's first service, under /opt/lws/apps/<app>/.
    With `Prefer: respond-async`: 202 and a job."""
    body = body or AppDeployBody()
    action = v.choice(body.action, "action", v.APP_ACTIONS)
    t, vmid, auto_start = located(svc, body), v.vmid(instance_id), body.auto_start
    compose = await apps.load_compose(svc.config, need(body.compose_file, "compose_file"))
    target = {"instance_id": vmid, "key": t.key}
    return await jobs.answer(
        state, request, "app/deploy", target, lambda: apps.deploy(t, vmid, action, compose, auto_start)
    )


@router.post(f"{INSTANCE}/app/update", response_model=Result, responses=JOB_ACCEPTED)
async def app_update(
    svc: Svc, state: Ctx, request: Request, instance_id: InstanceId, body: AppUpdateBody | None = body_opt
) -> Any:
    """Copy the new compose file, pull images, recreate changed services. With `Prefer: respond-async`:
    202 and a job."""
    body = body or AppUpdateBody()
    t, vmid = located(svc, body), v.vmid(instance_id)
    compose = await apps.load_compose(svc.config, need(body.compose_file, "compose_file"))
    target = {"instance_id": vmid, "key": t.key}
    return await jobs.answer(state, request, "app/update", target, lambda: apps.update(t, vmid, compose))


@router.get(f"{INSTANCE}/app/logs/{{container_name}}", response_model=Result)
async def app_logs(
    svc: Svc,
    instance_id: InstanceId,
    container_name: str,
    tail: str | None = None,
    region: Region = None,
    az: Az = None,
) -> HostResult:
    """The container's log as at request time (`tail`: a number or `all`, the default)."""
    return await apps.logs(svc.target(region, az), v.vmid(instance_id), v.container_name(container_name), v.tail(tail))


@router.get(f"{INSTANCE}/app/containers", response_model=Result)
async def app_containers(svc: Svc, instance_id: InstanceId, region: Region = None, az: Az = None) -> HostResult:
    return await apps.containers(svc.target(region, az), v.vmid(instance_id))


@router.post("/lxc/instances/app/remove", response_model=BulkDone)
async def app_remove(svc: Svc, body: AppRemoveBody | None = body_opt) -> BulkDone:
    """Remove the runtime packages that are installed (`dpkg-query` first; apt is never asked for one it
    cannot find). `purge: true` first removes every Docker container (running ones too), volume, image
    and network, then purges the packages with their conffiles. Reported per container."""
    body = body or AppRemoveBody()
    return await apps.remove(located(svc, body), v.vmids(body.instance_ids), body.purge)
