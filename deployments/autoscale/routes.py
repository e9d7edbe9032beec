"""Protected routes: container allocation and status (`/resource/*`), scaling (`/scale/*`).

GET routes read the container id from the query string (documented as the
optional parameters `lxc_id`, `vm_id`, `container_id`; one is enough, all must
agree); mutating routes read only the JSON body. Every `/scale/*` call counts `scaling_actions_total` when
`pct` succeeds and `scaling_failures_total` (with a classified reason) when it
does not.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import ValidationError

from .errors import ApiError, success, validation_failed
from .fleet import Fleet, classify, parse_pct_config
from .schemas import (
    ConfigEnvelope,
    CoresBody,
    RamBody,
    ScaleEnvelope,
    StatusEnvelope,
    StorageBody,
    Target,
)
from .telemetry import ApiMetrics

IdParam = Annotated[
    str | None,
    Query(
        description="container id, digits in 100-999999 (or give vm_id / container_id)",
        openapi_examples={"existing": {"value": "101"}},
    ),
]


def _query_target(lxc_id: str | None, vm_id: str | None, container_id: str | None) -> str:
    try:
        return Target(lxc_id=lxc_id, vm_id=vm_id, container_id=container_id).vmid
    except ValidationError as exc:
        raise validation_failed(
            [str(e.get("msg", "invalid")).removeprefix("Value error, ") for e in exc.errors()]
        ) from exc


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def resource_router(fleet: Fleet, metrics: ApiMetrics) -> APIRouter:
    router = APIRouter(tags=["resource"])

    async def read(sub: str, *ids: str | None) -> tuple[str, str, str]:
        """(vmid, host, stdout) of `pct <sub> <vmid>` for the container named in the query string."""
        vmid = _query_target(*ids)
        host = await fleet.locate(vmid)
        result = await fleet.run(host, ["pct", sub, vmid])
        if not result.ok:
            fleet.forget(vmid)
            raise ApiError(500, f"pct {sub} failed: {result.stderr.strip()[:500]}")
        return vmid, host, result.stdout

    async def config(lxc_id: IdParam = None, vm_id: IdParam = None, container_id: IdParam = None) -> dict:
        vmid, host, out = await read("config", lxc_id, vm_id, container_id)
        conf = parse_pct_config(out)
        cores, memory = _int(conf.get("cores")), _int(conf.get("memory"))
        if cores is not None:
            metrics.cores.labels(container_id=vmid).set(cores)
        if memory is not None:
            metrics.memory.labels(container_id=vmid).set(memory)
        data = {"lxc_id": vmid, "vm_id": vmid, "host": host, "cores": cores, "memory_mb": memory}
        return success("Container configuration", data)

    async def status(lxc_id: IdParam = None, vm_id: IdParam = None, container_id: IdParam = None) -> dict:
        vmid, host, out = await read("status", lxc_id, vm_id, container_id)
        state = out.strip().removeprefix("status:").strip()
        return success("Container status", {"lxc_id": vmid, "vm_id": vmid, "host": host, "status": state})

    for kind in ("lxc", "vm"):
        router.add_api_route(
            f"/resource/{kind}/config",
            config,
            methods=["GET"],
            response_model=ConfigEnvelope,
            summary=f"Allocation from `pct config` ({kind} alias)" if kind == "vm" else "Allocation from `pct config`",
        )
        router.add_api_route(
            f"/resource/{kind}/status",
            status,
            methods=["GET"],
            response_model=StatusEnvelope,
            summary=f"`pct status` ({kind} alias)" if kind == "vm" else "`pct status`",
        )
    return router


def scale_router(fleet: Fleet, metrics: ApiMetrics) -> APIRouter:
    router = APIRouter(tags=["scale"])

    async def apply(vmid: str, resource: str, action: str, argv: list[str], value: int | str) -> dict:
        try:
            host = await fleet.locate(vmid)
        except ApiError:
            metrics.failure(vmid, resource, "not_found")
            raise
        result = await fleet.run(host, argv)
        if not result.ok:
            fleet.forget(vmid)
            metrics.failure(vmid, resource, classify(result))
            raise ApiError(500, f"{' '.join(argv[:2])} failed: {result.stderr.strip()[:500]}")
        metrics.action(vmid, resource, action)
        data = {"lxc_id": vmid, "vm_id": vmid, "host": host, "resource": resource, "value": value}
        return success(f"{resource} {action} applied to container {vmid}", data)

    @router.post("/scale/cores", response_model=ScaleEnvelope, summary="Set CPU cores (`pct set --cores`)")
    async def cores(body: CoresBody) -> dict:
        return await apply(body.vmid, "cpu", "set", ["pct", "set", body.vmid, "--cores", str(body.cores)], body.cores)

    @router.post("/scale/ram", response_model=ScaleEnvelope, summary="Set memory in MB (`pct set --memory`)")
    async def ram(body: RamBody) -> dict:
        argv = ["pct", "set", body.vmid, "--memory", str(body.memory)]
        return await apply(body.vmid, "ram", "set", argv, body.memory)

    @router.post("/scale/storage/increase", response_model=ScaleEnvelope, summary="Grow the root disk (`pct resize`)")
    async def storage(body: StorageBody) -> dict:
        size = f"+{body.disk_size}G"
        argv = ["pct", "resize", body.vmid, "rootfs", size]
        return await apply(body.vmid, "storage", "increase", argv, size)

    return router
