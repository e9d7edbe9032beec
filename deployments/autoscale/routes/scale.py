"""Scaling (`/scale/*`): every call counts `scaling_actions_total` when `pct` succeeds and
`scaling_failures_total` (with a classified reason) when it does not. Mutating routes read only the JSON body."""

from __future__ import annotations

from fastapi import APIRouter

from ..errors import ApiError, success
from ..fleet import classify
from ..schemas import CoresBody, RamBody, ScaleEnvelope, StorageBody
from ..state import AutoscaleState
from .common import Ctx

router = APIRouter(tags=["scale"])


async def _apply(
    state: AutoscaleState, vmid: str, resource: str, action: str, argv: list[str], value: int | str
) -> dict[str, object]:
    try:
        host = await state.fleet.locate(vmid)
    except ApiError:
        state.metrics.failure(vmid, resource, "not_found")
        raise
    result = await state.fleet.run(host, argv)
    if not result.ok:
        state.fleet.forget(vmid)
        state.metrics.failure(vmid, resource, classify(result))
        raise ApiError(500, f"{' '.join(argv[:2])} failed: {result.stderr.strip()[:500]}")
    state.metrics.action(vmid, resource, action)
    data = {"lxc_id": vmid, "vm_id": vmid, "host": host, "resource": resource, "value": value}
    return success(f"{resource} {action} applied to container {vmid}", data)


@router.post("/scale/cores", response_model=ScaleEnvelope, summary="Set CPU cores (`pct set --cores`)")
async def cores(state: Ctx, body: CoresBody) -> dict[str, object]:
    argv = ["pct", "set", body.vmid, "--cores", str(body.cores)]
    return await _apply(state, body.vmid, "cpu", "set", argv, body.cores)


@router.post("/scale/ram", response_model=ScaleEnvelope, summary="Set memory in MB (`pct set --memory`)")
async def ram(state: Ctx, body: RamBody) -> dict[str, object]:
    argv = ["pct", "set", body.vmid, "--memory", str(body.memory)]
    return await _apply(state, body.vmid, "ram", "set", argv, body.memory)


@router.post("/scale/storage/increase", response_model=ScaleEnvelope, summary="Grow the root disk (`pct resize`)")
async def storage(state: Ctx, body: StorageBody) -> dict[str, object]:
    size = f"+{body.disk_size}G"
    argv = ["pct", "resize", body.vmid, "rootfs", size]
    return await _apply(state, body.vmid, "storage", "increase", argv, size)
