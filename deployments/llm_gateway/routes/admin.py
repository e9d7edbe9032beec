"""Control-plane routes beside the registry (admin keys): breaker reset and ``/admin/*``.

| Method | Path | Answer |
|---|---|---|
| POST | /api/v1/circuit-breaker/{id}/reset | ``{id, circuit_state, failure_count}``; 404 unknown endpoint |
| GET | /admin/config | the running configuration, secrets masked |
| POST | /admin/config/reload | reloadable sections applied on every replica; 409 ``not_reloadable``, 422 ``invalid_config`` |
| GET | /admin/plugins | every plugin with its ring, enabled flag and whether it may be disabled |
| POST | /admin/plugins/{name}/enable, /disable | the plugin list; 404 unknown, 409 a required plugin |
| GET, POST, DELETE | /admin/panic | the panic switch (POST stops all forwarding cluster-wide) |
| GET, DELETE | /admin/threats | the threat ledger; DELETE clears every actor |
| DELETE | /admin/threats/{actor} | clears one actor; 404 when it is not tracked |
| GET | /admin/events | the most recent gateway events (newest first) |
| GET | /admin/audit/verify | the audit trail's hash chain checked: ``{ok, records, first_bad_seq, anchored_after}`` |
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

from actors.llm_gateway import BreakerBoard, ControlBoard, ThreatLedger
from actors.llm_gateway.control import Panic
from deployments.llm_gateway.body import read_capped
from deployments.llm_gateway.errors import GatewayError, json_object
from deployments.llm_gateway.masking import masked_config
from deployments.llm_gateway.routes.common import Gateway
from deployments.llm_gateway.routes.schemas import RELOAD_BODY, body
from deployments.llm_gateway.state import GatewayState
from rayfleet import state as state_mod


class BreakerView(BaseModel):
    id: str
    circuit_state: str
    failure_count: int


class PanicView(BaseModel):
    active: bool
    since: float | None
    reason: str


router = APIRouter(tags=["admin"])


@router.post("/api/v1/circuit-breaker/{id}/reset", tags=["control plane"], response_model=BreakerView)
async def reset_breaker(id: str, gateway: Gateway) -> BreakerView:
    """Force the endpoint's breaker to CLOSED."""
    if id not in gateway.router.endpoints:
        raise GatewayError(404, f"Unknown endpoint {id!r}", code="endpoint_not_found")
    view = await state_mod.call(gateway.handles.breakers, BreakerBoard.reset, id)
    gateway.views.breakers.states[id] = view
    gateway.metrics.circuit.labels(endpoint=id).set(0.0)
    return BreakerView(id=id, circuit_state=view["state"], failure_count=view["failures"])


@router.get("/admin/plugins")
async def plugins(gateway: Gateway) -> dict[str, Any]:
    """Every plugin of the request rings, in order, with its enabled flag (cluster-wide)."""
    return {"plugins": gateway.plugin_list()}


async def _switch(gateway: GatewayState, name: str, enabled: bool) -> dict[str, Any]:
    stage = gateway.pipeline.stage(name)
    if stage is None:
        raise GatewayError(404, f"Unknown plugin {name!r}", code="plugin_not_found")
    if not enabled and stage.required:
        raise GatewayError(409, f"Plugin {name!r} is required and cannot be disabled", code="plugin_required")
    control = gateway.views.control
    await control.apply(await state_mod.call(gateway.handles.control, ControlBoard.set_plugin, name, enabled))
    return {"plugins": gateway.plugin_list()}


@router.post("/admin/plugins/{name}/enable")
async def enable(name: str, gateway: Gateway) -> dict[str, Any]:
    """Turn a plugin back on, on every replica."""
    return await _switch(gateway, name, True)


@router.post("/admin/plugins/{name}/disable")
async def disable(name: str, gateway: Gateway) -> dict[str, Any]:
    """Turn a plugin off on every replica (required plugins refuse with 409)."""
    return await _switch(gateway, name, False)


@router.get("/admin/panic", response_model=PanicView)
async def panic_state(gateway: Gateway) -> Panic:
    """Whether the panic switch is on."""
    return gateway.views.control.panic


@router.post("/admin/panic", response_model=PanicView)
async def panic_on(request: Request, gateway: Gateway) -> Panic:
    """Stop all forwarding cluster-wide (every replica within a second). Body: ``{"reason": str}`` (optional)."""
    raw = await request.body()
    body = json_object(raw) if raw.strip() else {}
    reason = body.get("reason", "")
    if not isinstance(reason, str) or len(reason) > 500:
        raise GatewayError(400, "'reason' must be a string of at most 500 characters", code="invalid_reason")
    control = gateway.views.control
    await control.apply(await state_mod.call(gateway.handles.control, ControlBoard.set_panic, True, reason))
    gateway.views.events.emit("panic_activated", reason=reason)
    return control.panic


@router.delete("/admin/panic", response_model=PanicView)
async def panic_off(gateway: Gateway) -> Panic:
    """Resume forwarding."""
    control = gateway.views.control
    await control.apply(await state_mod.call(gateway.handles.control, ControlBoard.set_panic, False))
    return control.panic


@router.get("/admin/threats")
async def threats(gateway: Gateway) -> dict[str, Any]:
    """The threat ledger: tracked actors, their summed scores and blocks."""
    return await state_mod.call(gateway.handles.threats, ThreatLedger.view)


@router.delete("/admin/threats")
async def clear_threats(gateway: Gateway) -> dict[str, Any]:
    """Forget every actor (lifts every block)."""
    removed = await state_mod.call(gateway.handles.threats, ThreatLedger.clear, None)
    await gateway.views.threats.flush()
    return {"cleared": removed}


@router.delete("/admin/threats/{actor}")
async def clear_actor(actor: str, gateway: Gateway) -> dict[str, Any]:
    """Forget one actor (lifts its block)."""
    if not await state_mod.call(gateway.handles.threats, ThreatLedger.clear, actor):
        raise GatewayError(404, f"Actor {actor!r} is not tracked", code="actor_not_found")
    await gateway.views.threats.flush()
    return {"cleared": 1}


@router.get("/admin/config")
async def config(gateway: Gateway) -> dict[str, Any]:
    """The running configuration, with every secret-bearing value masked."""
    return masked_config(gateway.config)


@router.post("/admin/config/reload", openapi_extra=body(RELOAD_BODY))
async def reload_config(request: Request, gateway: Gateway) -> dict[str, Any]:
    """Replace reloadable sections on every replica, or refuse the whole body.

    Body: ``{section: {...}}`` for sections in ``RELOADABLE`` (merged into the running
    values). The merged configuration is validated first; 409 ``not_reloadable`` names any
    other section, 422 ``invalid_config`` the first invalid value. Nothing is applied on an error.
    """
    data = json_object(await read_capped(request, 256 * 1024))
    sections = gateway.reload.validate(data)
    control = gateway.views.control
    await control.apply(await state_mod.call(gateway.handles.control, ControlBoard.set_config, sections))
    return {"version": control.config_version, "sections": sorted(sections)}


@router.get("/admin/audit/verify")
async def verify_audit(gateway: Gateway) -> dict[str, Any]:
    """Walk the audit trail's hash chain: ``{ok, records, first_bad_seq, anchored_after}``."""
    audit = gateway.stores.audit
    if audit is None:
        raise GatewayError(404, "The audit trail is off (logging.audit_trail.enabled)", code="audit_disabled")
    return await audit.verify()


@router.get("/admin/events")
async def events(gateway: Gateway) -> dict[str, Any]:
    """The most recent gateway events (newest first)."""
    return {"events": gateway.views.events.recent()}
