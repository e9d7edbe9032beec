"""Container allocation and status (`/resource/{lxc,vm}/{config,status}`).

GET routes read the container id from the query string (documented as the
optional parameters `lxc_id`, `vm_id`, `container_id`; one is enough, all must
agree).
"""

from __future__ import annotations

from fastapi import APIRouter

from ..errors import ApiError, success
from ..fleet import parse_pct_config
from ..schemas import ID_TEXT, ConfigEnvelope, StatusEnvelope
from .common import Ctx, IdParam, query_target

router = APIRouter(tags=["resource"])


def _int(value: str | None) -> int | None:
    """A count from `pct config` (ASCII digits, bounded: the host's text never reaches int() unchecked)."""
    return int(value) if value is not None and ID_TEXT.fullmatch(value) else None


async def _read(state: Ctx, sub: str, *ids: str | None) -> tuple[str, str, str]:
    """(vmid, host, stdout) of `pct <sub> <vmid>` for the container named in the query string."""
    vmid = query_target(*ids)
    host = await state.fleet.locate(vmid)
    result = await state.fleet.run(host, ["pct", sub, vmid])
    if not result.ok:
        state.fleet.forget(vmid)
        raise ApiError(500, f"pct {sub} failed: {result.stderr.strip()[:500]}")
    return vmid, host, result.stdout


async def config(
    state: Ctx, lxc_id: IdParam = None, vm_id: IdParam = None, container_id: IdParam = None
) -> dict[str, object]:
    vmid, host, out = await _read(state, "config", lxc_id, vm_id, container_id)
    conf = parse_pct_config(out)
    cores, memory = _int(conf.get("cores")), _int(conf.get("memory"))
    if cores is not None:
        state.metrics.cores.labels(container_id=vmid).set(cores)
    if memory is not None:
        state.metrics.memory.labels(container_id=vmid).set(memory)
    data = {"lxc_id": vmid, "vm_id": vmid, "host": host, "cores": cores, "memory_mb": memory}
    return success("Container configuration", data)


async def status(
    state: Ctx, lxc_id: IdParam = None, vm_id: IdParam = None, container_id: IdParam = None
) -> dict[str, object]:
    vmid, host, out = await _read(state, "status", lxc_id, vm_id, container_id)
    current = out.strip().removeprefix("status:").strip()
    return success("Container status", {"lxc_id": vmid, "vm_id": vmid, "host": host, "status": current})


for _kind in ("lxc", "vm"):
    router.add_api_route(
        f"/resource/{_kind}/config",
        config,
        methods=["GET"],
        response_model=ConfigEnvelope,
        summary=f"Allocation from `pct config` ({_kind} alias)" if _kind == "vm" else "Allocation from `pct config`",
    )
    router.add_api_route(
        f"/resource/{_kind}/status",
        status,
        methods=["GET"],
        response_model=StatusEnvelope,
        summary=f"`pct status` ({_kind} alias)" if _kind == "vm" else "`pct status`",
    )
