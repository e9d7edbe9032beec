"""Control-plane routes of the endpoint registry (spec 001 §4), admin keys only.

| Method | Path | Answer |
|---|---|---|
| GET | /api/v1/registry | ``{data: [entry], total}`` |
| POST | /api/v1/registry | 201, the new entry (status ``FOUND``); 409 on a duplicate name |
| POST | /api/v1/registry/scan | ``{candidates: [{id, provider, base_url, models, status, added}], total, added}`` |
| POST | /api/v1/registry/{id}/probe | 200 ``{ok, latency_ms, models, entry}``; 502 ``probe_failed`` when unreachable |
| POST | /api/v1/registry/{id}/toggle | the entry with its new status |
| POST | /api/v1/registry/{id}/priority | the entry with its new priority |
| DELETE | /api/v1/registry/{id} | ``{id, deleted: true}`` |

Unknown ids answer 404 ``registry_entry_not_found``; an unavailable store 503.
"""

from __future__ import annotations

from typing import Any, TypeVar
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ValidationError
from starlette.responses import JSONResponse

from deployments.llm_gateway.body import read_capped
from deployments.llm_gateway.discovery import discover
from deployments.llm_gateway.errors import GatewayError, json_object
from deployments.llm_gateway.gateway import Gateway
from deployments.llm_gateway.registry import EntryIn, PriorityIn, ProbeFailed, entry_id, probe, public_view
from deployments.llm_gateway.routes.schemas import body
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

M = TypeVar("M", bound=BaseModel)
MAX_BODY = 64 * 1024


async def _body(request: Request, model: type[M]) -> M:
    """Parse the JSON body after authentication, so a bad key is refused before bad input is."""
    data = json_object(await read_capped(request, MAX_BODY))
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "body"
        raise GatewayError(422, f"{where}: {first.get('msg', 'invalid value')}", code="validation_error") from None


def _check(result: dict[str, Any]) -> dict[str, Any]:
    if result.get("ok"):
        return result
    error, message = result.get("error"), result.get("message", "registry error")
    if error == "not_found":
        raise GatewayError(404, message, code="registry_entry_not_found")
    if error == "conflict":
        raise GatewayError(409, message, code="registry_entry_exists")
    raise GatewayError(503, message, code="registry_unavailable")


class _Registry:
    """Actor calls of the registry routes: refused with one error shape, refreshed on this replica at once."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def call(self, method: str, *args: Any) -> dict[str, Any]:
        try:
            result = await getattr(self.gateway.registry_handle, method).remote(*args)
        except Exception as exc:
            log.warning("registry actor call failed", extra={"method": method, "error": type(exc).__name__})
            raise GatewayError(503, "the registry is unavailable", code="registry_unavailable") from None
        result = _check(result)
        try:
            await self.gateway.registry.refresh()  # this replica sees its own change at once
        except Exception:
            log.warning("registry refresh after a change failed", exc_info=True)
        return result

    def view(self, entry: dict[str, Any]) -> dict[str, Any]:
        return public_view(entry, self.gateway.breakers.states.get(entry["id"]))

    def reserved(self) -> list[str]:
        return sorted(self.gateway.router.static_names() | set(self.gateway.config.endpoints))


def _entries(app: APIRouter, gateway: Gateway, reg: _Registry) -> None:
    @app.get("/api/v1/registry")
    async def list_registry(request: Request) -> JSONResponse:
        """Every registry entry with its status, breaker state, stored latency and priority."""
        await gateway.start()
        try:
            await gateway.registry.refresh()
        except Exception as exc:
            raise GatewayError(
                503, f"the registry is unavailable ({type(exc).__name__})", code="registry_unavailable"
            ) from None
        entries = sorted(gateway.registry.entries.values(), key=lambda e: (e["priority"], e["created_at"], e["id"]))
        return JSONResponse({"data": [reg.view(e) for e in entries], "total": len(entries)})

    @app.post("/api/v1/registry", status_code=201, openapi_extra=body(EntryIn.model_json_schema()))
    async def add_entry(request: Request) -> JSONResponse:
        """Add an endpoint. It starts as ``FOUND``; toggle it (or probe it successfully) to make it Live.

        Body: ``name``, ``base_url``, ``provider``, ``priority`` (integer), ``api_key`` (optional),
        ``models`` (list of strings or one comma-separated string).
        """
        body = await _body(request, EntryIn)
        await gateway.start()
        fields = body.model_dump()
        fields["id"] = entry_id(body.name)
        result = await reg.call("add", fields, reg.reserved())
        return JSONResponse(reg.view(result["entry"]), status_code=201)

    @app.post("/api/v1/registry/{id}/toggle")
    async def toggle(id: str, request: Request) -> JSONResponse:
        """``verified`` becomes ``IGNORED``; any other status becomes ``verified``."""
        await gateway.start()
        return JSONResponse(reg.view((await reg.call("toggle", id))["entry"]))

    @app.post("/api/v1/registry/{id}/priority", openapi_extra=body(PriorityIn.model_json_schema()))
    async def set_priority(id: str, request: Request) -> JSONResponse:
        """Set the routing priority (lower is preferred). Body: ``{"priority": <integer>}``."""
        body = await _body(request, PriorityIn)
        await gateway.start()
        return JSONResponse(reg.view((await reg.call("set_priority", id, body.priority))["entry"]))

    @app.delete("/api/v1/registry/{id}")
    async def delete(id: str, request: Request) -> JSONResponse:
        """Remove the entry; it stops receiving traffic."""
        await gateway.start()
        await reg.call("remove", id)
        return JSONResponse({"id": id, "deleted": True})


def _discovery(app: APIRouter, gateway: Gateway, reg: _Registry) -> None:
    @app.post("/api/v1/registry/scan")
    async def scan(request: Request) -> JSONResponse:
        """Probe the configured well-known local ports; what answers is added as ``DISCOVERED``."""
        await gateway.start()
        settings = gateway.config.registry
        found = await discover(settings.scan_host, settings.scan_timeout, gateway.scan_targets())
        servers = [
            {
                "id": entry_id(f"local-{s.provider}-{urlsplit(s.base_url).port}"),
                "provider": s.provider,
                "base_url": s.base_url,
                "models": s.models,
            }
            for s in found
        ]
        result = await reg.call("add_discovered", servers, reg.reserved())
        candidates = result["candidates"]
        return JSONResponse(
            {
                "candidates": candidates,
                "total": len(candidates),
                "added": sum(1 for c in candidates if c["added"]),
                "scanned": [f"{settings.scan_host}:{t.port}" for t in settings.scan_ports],
            }
        )

    @app.post("/api/v1/registry/{id}/probe")
    async def probe_entry(id: str, request: Request) -> JSONResponse:
        """List the entry's models (no inference) and store the measured latency."""
        await gateway.start()
        entry = (await reg.call("get", id))["entry"]
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
            await reg.call("record_probe", id, False, None, None, str(exc))
            gateway.events.emit("endpoint_down", endpoint=id, reason=str(exc)[:200])
            raise GatewayError(502, f"probe of {id!r} failed: {exc}", code="probe_failed") from None
        result = await reg.call("record_probe", id, True, latency_ms, models, None)
        return JSONResponse(
            {"ok": True, "id": id, "latency_ms": latency_ms, "models": models, "entry": reg.view(result["entry"])}
        )


def router(gateway: Gateway) -> APIRouter:
    """The registry routes (admin keys)."""
    app = APIRouter(tags=["control plane"], dependencies=[Depends(gateway.admin_guard)])
    reg = _Registry(gateway)
    _entries(app, gateway, reg)
    _discovery(app, gateway, reg)
    return app
