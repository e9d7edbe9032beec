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

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel

from deployments.llm_gateway.body import read_capped
from deployments.llm_gateway.errors import GatewayError, json_object
from deployments.llm_gateway.gateway import Gateway
from deployments.llm_gateway.masking import masked_config
from deployments.llm_gateway.routes.schemas import RELOAD_BODY, body


class BreakerView(BaseModel):
    id: str
    circuit_state: str
    failure_count: int


class PanicView(BaseModel):
    active: bool
    since: float | None
    reason: str


def _breakers(api: APIRouter, gateway: Gateway) -> None:
    @api.post("/api/v1/circuit-breaker/{id}/reset", tags=["control plane"], response_model=BreakerView)
    async def reset_breaker(id: str) -> BreakerView:
        """Force the endpoint's breaker to CLOSED."""
        await gateway.start()
        if id not in gateway.router.endpoints:
            raise GatewayError(404, f"Unknown endpoint {id!r}", code="endpoint_not_found")
        view = await gateway.breaker_handle.reset.remote(id)
        gateway.breakers.states[id] = view
        gateway.metrics.circuit.labels(endpoint=id).set(0.0)
        return BreakerView(id=id, circuit_state=view["state"], failure_count=view["failures"])


def _plugins(api: APIRouter, gateway: Gateway) -> None:
    @api.get("/admin/plugins")
    async def plugins() -> dict[str, Any]:
        """Every plugin of the request rings, in order, with its enabled flag (cluster-wide)."""
        await gateway.start()
        return {"plugins": gateway.plugin_list()}

    async def switch(name: str, enabled: bool) -> dict[str, Any]:
        await gateway.start()
        stage = gateway.pipeline.stage(name)
        if stage is None:
            raise GatewayError(404, f"Unknown plugin {name!r}", code="plugin_not_found")
        if not enabled and stage.required:
            raise GatewayError(409, f"Plugin {name!r} is required and cannot be disabled", code="plugin_required")
        await gateway.control.apply(await gateway.control_handle.set_plugin.remote(name, enabled))
        return {"plugins": gateway.plugin_list()}

    @api.post("/admin/plugins/{name}/enable")
    async def enable(name: str) -> dict[str, Any]:
        """Turn a plugin back on, on every replica."""
        return await switch(name, True)

    @api.post("/admin/plugins/{name}/disable")
    async def disable(name: str) -> dict[str, Any]:
        """Turn a plugin off on every replica (required plugins refuse with 409)."""
        return await switch(name, False)


def _panic(api: APIRouter, gateway: Gateway) -> None:
    @api.get("/admin/panic", response_model=PanicView)
    async def panic_state() -> dict[str, Any]:
        """Whether the panic switch is on."""
        await gateway.start()
        return gateway.control.panic

    @api.post("/admin/panic", response_model=PanicView)
    async def panic_on(request: Request) -> dict[str, Any]:
        """Stop all forwarding cluster-wide (every replica within a second). Body: ``{"reason": str}`` (optional)."""
        raw = await request.body()
        body = json_object(raw) if raw.strip() else {}
        reason = body.get("reason", "")
        if not isinstance(reason, str) or len(reason) > 500:
            raise GatewayError(400, "'reason' must be a string of at most 500 characters", code="invalid_reason")
        await gateway.start()
        view = await gateway.control_handle.set_panic.remote(True, reason)
        await gateway.control.apply(view)
        gateway.events.emit("panic_activated", reason=reason)
        return gateway.control.panic

    @api.delete("/admin/panic", response_model=PanicView)
    async def panic_off() -> dict[str, Any]:
        """Resume forwarding."""
        await gateway.start()
        await gateway.control.apply(await gateway.control_handle.set_panic.remote(False))
        return gateway.control.panic


def _threats(api: APIRouter, gateway: Gateway) -> None:
    @api.get("/admin/threats")
    async def threats() -> dict[str, Any]:
        """The threat ledger: tracked actors, their summed scores and blocks."""
        await gateway.start()
        return await gateway.threat_handle.view.remote()

    @api.delete("/admin/threats")
    async def clear_threats() -> dict[str, Any]:
        """Forget every actor (lifts every block)."""
        await gateway.start()
        removed = await gateway.threat_handle.clear.remote(None)
        await gateway.threats.flush()
        return {"cleared": removed}

    @api.delete("/admin/threats/{actor}")
    async def clear_actor(actor: str) -> dict[str, Any]:
        """Forget one actor (lifts its block)."""
        await gateway.start()
        if not await gateway.threat_handle.clear.remote(actor):
            raise GatewayError(404, f"Actor {actor!r} is not tracked", code="actor_not_found")
        await gateway.threats.flush()
        return {"cleared": 1}


def router(gateway: Gateway) -> APIRouter:
    api = APIRouter(tags=["admin"], dependencies=[Depends(gateway.admin_guard)])
    _breakers(api, gateway)
    _plugins(api, gateway)
    _panic(api, gateway)
    _threats(api, gateway)

    @api.get("/admin/config")
    async def config() -> dict[str, Any]:
        """The running configuration, with every secret-bearing value masked."""
        return masked_config(gateway.config)

    @api.post("/admin/config/reload", openapi_extra=body(RELOAD_BODY))
    async def reload_config(request: Request) -> dict[str, Any]:
        """Replace reloadable sections on every replica, or refuse the whole body.

        Body: ``{section: {...}}`` for sections in ``RELOADABLE`` (merged into the running
        values). The merged configuration is validated first; 409 ``not_reloadable`` names any
        other section, 422 ``invalid_config`` the first invalid value. Nothing is applied on an error.
        """
        body = json_object(await read_capped(request, 256 * 1024))
        await gateway.start()
        sections = gateway.validate_reload(body)
        view = await gateway.control_handle.set_config.remote(sections)
        await gateway.control.apply(view)
        return {"version": gateway.control.config_version, "sections": sorted(sections)}

    @api.get("/admin/audit/verify")
    async def verify_audit() -> dict[str, Any]:
        """Walk the audit trail's hash chain: ``{ok, records, first_bad_seq, anchored_after}``."""
        if gateway.audit is None:
            raise GatewayError(404, "The audit trail is off (logging.audit_trail.enabled)", code="audit_disabled")
        return await gateway.audit.verify()

    @api.get("/admin/events")
    async def events() -> dict[str, Any]:
        """The most recent gateway events (newest first)."""
        return {"events": gateway.events.recent()}

    return api
