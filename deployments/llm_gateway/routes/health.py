"""``GET /health``: liveness and a read-only view of endpoints, breakers and switches.

Public, so it names endpoints and their states but never where they are (no upstream or
local-server URL): the registry and ``/admin/config`` show those to admins."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from deployments.llm_gateway.routes.common import Gateway
from deployments.llm_gateway.state import GatewayState

NO_LOCAL_SERVER = "no local model server found on ports 11434 (Ollama), 1234 (LM Studio), 8080 (llama.cpp), 8001 (vLLM)"
NO_ENDPOINT = "no upstream endpoint configured: add one under endpoints in config/llm_gateway.yaml"


def _endpoints(gateway: GatewayState) -> list[dict[str, Any]]:
    out = []
    for name, ep in gateway.router.endpoints.items():
        view = gateway.views.breakers.states.get(name)
        ring = gateway.router.keyrings.get(name)
        out.append(
            {
                "name": name,
                "provider": ep.provider,
                "models": ep.models,
                "circuit_state": view["state"] if view else "CLOSED",
                "failure_count": view["failures"] if view else 0,
                "health": view.get("health", "unknown") if view else "unknown",
                "keys": len(ring.keys) if ring else 0,
            }
        )
    return out


def _warnings(gateway: GatewayState) -> list[str]:
    warnings = list(gateway.auth.warnings)
    if gateway.local.done and not gateway.local.found and gateway.config.discovery:
        warnings.append(NO_LOCAL_SERVER)
    if not gateway.router.endpoints:
        warnings.append(NO_ENDPOINT)
    if gateway.views.control.panic["active"]:
        warnings.append("panic switch is on: all forwarding is stopped (DELETE /admin/panic to resume)")
    return warnings


def _exporter(gateway: GatewayState) -> dict[str, Any]:
    exp = gateway.exporter
    if exp is None:
        return {"enabled": False}
    return {"enabled": True, "bind": exp.bind, "port": exp.port, "serving_here": exp.serving}


def _export(gateway: GatewayState) -> dict[str, Any]:
    exp = gateway.stores.export
    if exp is None:
        return {"enabled": False}
    current = exp.path(exp.day).name if exp.day is not None else None
    return {
        "enabled": True,
        "file": current,
        "queued": len(exp.pending),
        "written": exp.written,
        "dropped": exp.dropped,
    }


def health_view(gateway: GatewayState) -> dict[str, Any]:
    endpoints = _endpoints(gateway)
    healthy = any(e["circuit_state"] != "OPEN" for e in endpoints) and not gateway.views.control.panic["active"]
    admission = gateway.admission
    return {
        "status": "ok" if healthy else "degraded",
        "panic": gateway.views.control.panic,
        "endpoints": endpoints,
        "local_servers": [{"name": s.name, "models": s.models} for s in gateway.local.found],
        "discovery": "done" if gateway.local.done else "running",
        "admission": {
            "max_in_flight": admission.max_in_flight,
            "in_flight": admission.in_flight,
            "max_queued": admission.max_queued,
            "queued": admission.queued,
        },
        "records_store": "ok" if gateway.stores.records.healthy else "unavailable",
        "metrics_exporter": _exporter(gateway),
        "export": _export(gateway),
        "listener": gateway.listener.view() if gateway.listener is not None else {"enabled": False},
        "health_check": gateway.views.health.view() if gateway.views.health is not None else {"enabled": False},
        "warnings": _warnings(gateway),
    }


router = APIRouter(tags=["operations"])


@router.get("/health")
async def health(gateway: Gateway) -> dict[str, Any]:
    """Liveness and a read-only view of endpoints and breakers (never consumes a probe)."""
    return health_view(gateway)
