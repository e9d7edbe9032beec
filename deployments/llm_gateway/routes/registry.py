"""Control-plane routes of the endpoint registry (spec 001 §4), admin keys only.

| Method | Path | Answer |
|---|---|---|
| GET | /api/v1/registry | ``{data: [entry], total, configured: [endpoint]}`` (``configured``: read-only) |
| POST | /api/v1/registry | 201, the new entry (status ``FOUND``); 409 on a duplicate name |
| POST | /api/v1/registry/scan | ``{candidates: [{id, provider, base_url, models, status, added}], total, added}`` |
| POST | /api/v1/registry/{id}/probe | 200 ``{ok, latency_ms, models, entry}``; 502 ``probe_failed`` when unreachable |
| POST | /api/v1/registry/{id}/toggle | the entry with its new status |
| POST | /api/v1/registry/{id}/priority | the entry with its new priority |
| DELETE | /api/v1/registry/{id} | ``{id, deleted: true}`` |

Unknown ids answer 404 ``registry_entry_not_found``; an unavailable store 503; a change to an
endpoint of the config file (listed under ``configured``, ``read_only: true``) 409
``registry_entry_read_only``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from pydantic import BaseModel
from starlette.responses import JSONResponse

from actors.llm_gateway import BreakerBoard, RegistryBoard
from deployments.llm_gateway.discovery import discover
from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.registry import (
    EntryIn,
    PriorityIn,
    ProbeFailed,
    configured_view,
    entry_id,
    probe,
    public_view,
)
from deployments.llm_gateway.routes.common import Gateway, parsed_body
from deployments.llm_gateway.routes.schemas import body
from deployments.llm_gateway.state import GatewayState
from rayfleet import state as state_mod
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

M = TypeVar("M", bound=BaseModel)
MAX_BODY = 64 * 1024


def _check(result: dict[str, Any]) -> dict[str, Any]:
    if result.get("ok"):
        return result
    error, message = result.get("error"), result.get("message", "registry error")
    if error == "not_found":
        raise GatewayError(404, message, code="registry_entry_not_found")
    if error == "conflict":
        raise GatewayError(409, message, code="registry_entry_exists")
    raise GatewayError(503, message, code="registry_unavailable")


P = ParamSpec("P")


async def _call(
    gateway: GatewayState,
    method: Callable[Concatenate[RegistryBoard, P], dict[str, Any]],
    *args: P.args,
    **kwargs: P.kwargs,
) -> dict[str, Any]:
    """A registry actor call refused in the one error shape; this replica sees its own change at once."""
    try:
        result = await state_mod.call(gateway.handles.registry, method, *args, **kwargs)
    except Exception as exc:
        log.warning("registry actor call failed", extra={"method": method.__name__, "error": type(exc).__name__})
        raise GatewayError(503, "the registry is unavailable", code="registry_unavailable") from None
    result = _check(result)
    try:
        await gateway.views.registry.refresh()
    except Exception:
        log.warning("registry refresh after a change failed", exc_info=True)
    return result


def _view(gateway: GatewayState, entry: dict[str, Any]) -> dict[str, Any]:
    return public_view(entry, gateway.views.breakers.states.get(entry["id"]))


def _reserved(gateway: GatewayState) -> list[str]:
    return sorted(gateway.router.static_names() | set(gateway.config.endpoints))


def _writable(gateway: GatewayState, id: str) -> str:
    """``id`` unless it names an endpoint of the config file (or found at startup): those are read-only here."""
    if id in gateway.router.static_names() and id not in gateway.views.registry.entries:
        raise GatewayError(
            409,
            f"endpoint {id!r} comes from the config file and is read-only here: change it in the file and redeploy",
            code="registry_entry_read_only",
        )
    return id


def _configured(gateway: GatewayState) -> list[dict[str, Any]]:
    router, states = gateway.router, gateway.views.breakers.states
    out = []
    for name in sorted(router.static_names()):
        ring = router.keyrings.get(name)
        out.append(configured_view(name, router.endpoints[name], len(ring.keys) if ring else 0, states.get(name)))
    return out


router = APIRouter(tags=["control plane"])


@router.get("/api/v1/registry")
async def list_registry(gateway: Gateway) -> JSONResponse:
    """Every registry entry with its status, breaker state, stored latency and priority."""
    registry = gateway.views.registry
    try:
        await registry.refresh()
    except Exception as exc:
        raise GatewayError(
            503, f"the registry is unavailable ({type(exc).__name__})", code="registry_unavailable"
        ) from None
    entries = sorted(registry.entries.values(), key=lambda e: (e["priority"], e["created_at"], e["id"]))
    return JSONResponse(
        {"data": [_view(gateway, e) for e in entries], "total": len(entries), "configured": _configured(gateway)}
    )


@router.post("/api/v1/registry", status_code=201, openapi_extra=body(EntryIn.model_json_schema()))
async def add_entry(request: Request, gateway: Gateway) -> JSONResponse:
    """Add an endpoint. It starts as ``FOUND``; toggle it (or probe it successfully) to make it Live.

    Body: ``name``, ``base_url``, ``provider``, ``priority`` (integer), ``api_key`` (optional),
    ``models`` (list of strings or one comma-separated string).
    """
    entry = await parsed_body(request, EntryIn)
    fields = entry.model_dump()
    fields["id"] = entry_id(entry.name)
    result = await _call(gateway, RegistryBoard.add, fields, _reserved(gateway))
    return JSONResponse(_view(gateway, result["entry"]), status_code=201)


@router.post("/api/v1/registry/{id}/toggle")
async def toggle(id: str, gateway: Gateway) -> JSONResponse:
    """``verified`` becomes ``IGNORED``; any other status becomes ``verified``."""
    return JSONResponse(_view(gateway, (await _call(gateway, RegistryBoard.toggle, _writable(gateway, id)))["entry"]))


@router.post("/api/v1/registry/{id}/priority", openapi_extra=body(PriorityIn.model_json_schema()))
async def set_priority(id: str, request: Request, gateway: Gateway) -> JSONResponse:
    """Set the routing priority (lower is preferred). Body: ``{"priority": <integer>}``."""
    change = await parsed_body(request, PriorityIn)
    result = await _call(gateway, RegistryBoard.set_priority, _writable(gateway, id), change.priority)
    return JSONResponse(_view(gateway, result["entry"]))


@router.delete("/api/v1/registry/{id}")
async def delete(id: str, gateway: Gateway) -> JSONResponse:
    """Remove the entry; it stops receiving traffic."""
    await _call(gateway, RegistryBoard.remove, _writable(gateway, id))
    return JSONResponse({"id": id, "deleted": True})


@router.post("/api/v1/registry/scan")
async def scan(gateway: Gateway) -> JSONResponse:
    """Probe the configured well-known local ports; what answers is added as ``DISCOVERED``."""
    settings = gateway.config.registry
    found = await discover(settings.scan_host, settings.scan_timeout, gateway.local.scan_targets())
    servers = [
        {
            "id": entry_id(f"local-{s.provider}-{urlsplit(s.base_url).port}"),
            "provider": s.provider,
            "base_url": s.base_url,
            "models": s.models,
        }
        for s in found
    ]
    result = await _call(gateway, RegistryBoard.add_discovered, servers, _reserved(gateway))
    candidates = result["candidates"]
    return JSONResponse(
        {
            "candidates": candidates,
            "total": len(candidates),
            "added": sum(1 for c in candidates if c["added"]),
            "scanned": [f"{settings.scan_host}:{t.port}" for t in settings.scan_ports],
        }
    )


async def _health(gateway: GatewayState, id: str, ok: bool, reason: str) -> None:
    """An operator's probe marks the endpoint up or down like the prober's (an event per transition)."""
    try:
        await state_mod.call(gateway.handles.breakers, BreakerBoard.record_health, id, ok, reason)
        await gateway.views.breakers.refresh()
    except Exception:
        log.warning("health mark of a probe failed", extra={"endpoint": id})


@router.post("/api/v1/registry/{id}/probe")
async def probe_entry(id: str, gateway: Gateway) -> JSONResponse:
    """List the entry's models (no inference) and store the measured latency."""
    entry = (await _call(gateway, RegistryBoard.get, _writable(gateway, id)))["entry"]
    assert gateway.client is not None
    try:
        latency_ms, models = await probe(
            gateway.client,
            entry["provider"],
            entry["base_url"],
            entry.get("api_key"),
            gateway.config.registry.probe_timeout,
        )
    except ProbeFailed as exc:
        await _call(gateway, RegistryBoard.record_probe, id, False, None, None, str(exc))
        await _health(gateway, id, False, str(exc)[:200])
        raise GatewayError(502, f"probe of {id!r} failed: {exc}", code="probe_failed") from None
    result = await _call(gateway, RegistryBoard.record_probe, id, True, latency_ms, models, None)
    await _health(gateway, id, True, "")
    return JSONResponse(
        {"ok": True, "id": id, "latency_ms": latency_ms, "models": models, "entry": _view(gateway, result["entry"])}
    )
