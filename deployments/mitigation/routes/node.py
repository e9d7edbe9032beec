"""One node's management API (spec 002 §4 D, port 9999 in the original): served at /nodes/{node_id}.

`public_router` (liveness) needs no key; `router` is included behind the API key guard (app.py).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from deployments.mitigation import schemas
from deployments.mitigation.routes.common import KEY_ERRORS, NodeId, State
from rayfleet.metrics import CONTENT_TYPE, METRICS_ROUTE

ERRORS: dict[int | str, dict[str, Any]] = {
    **KEY_ERRORS,
    404: {"model": schemas.ErrorBody, "description": "no such node (or rule)"},
    422: {"model": schemas.ErrorBody, "description": "invalid body"},
    503: {"model": schemas.ErrorBody, "description": "the node is dead or unreachable"},
}

public_router = APIRouter(responses=ERRORS, tags=["node"])
router = APIRouter(responses=ERRORS, tags=["node"])
api = APIRouter(prefix="/api/v1")


@public_router.get("/health", response_model=schemas.NodeHealth, summary="Liveness of this node (no key)")
async def health(state: State, node_id: NodeId) -> dict[str, Any]:
    status = await state.node(node_id, "status")
    return {"status": status["health"], "node_id": status["node_id"], "children": status["children"]}


@router.get("/metrics", summary="This node's service_* metrics", **METRICS_ROUTE)
async def metrics(state: State, node_id: NodeId) -> Response:
    return Response(await state.node(node_id, "metrics_text"), media_type=CONTENT_TYPE)


@api.get("/status", response_model=schemas.Status, summary="Mode, uptime, connections, health")
async def status(state: State, node_id: NodeId) -> Any:
    return await state.node(node_id, "status")


@api.post(
    "/rules",
    response_model=schemas.RuleCreated,
    status_code=201,
    summary="Add a WAF rule (in effect on the data plane when this answers)",
    responses={409: {"model": schemas.ErrorBody, "description": "the node runs in syn mode"}},
)
async def add_rule(state: State, node_id: NodeId, body: schemas.RuleIn) -> dict[str, Any]:
    rule = await state.node(node_id, "add_rule", body.pattern, body.action, body.severity)
    return {"id": rule["id"], "status": rule["status"], "created_at": rule["created_at"]}


@api.get("/rules", response_model=schemas.RuleList, summary="Custom rules with their hits")
async def list_rules(state: State, node_id: NodeId) -> Any:
    return await state.node(node_id, "list_rules")


@api.delete("/rules/{rule_id}", response_model=schemas.Deleted, summary="Remove a rule (no restart)")
async def delete_rule(state: State, node_id: NodeId, rule_id: str) -> Any:
    return await state.node(node_id, "delete_rule", rule_id)


@api.post(
    "/blacklist",
    response_model=schemas.BlacklistEntry,
    status_code=201,
    summary="Block a source for duration_seconds",
)
async def blacklist(state: State, node_id: NodeId, body: schemas.BlacklistIn) -> Any:
    return await state.node(node_id, "add_blacklist", body.ip, body.reason, body.duration_seconds)


@api.get("/blacklist", response_model=schemas.BanList, summary="Bans in force, with reason, source and expiry")
async def list_blacklist(state: State, node_id: NodeId) -> Any:
    return await state.node(node_id, "list_blacklist")


@api.delete("/blacklist/{ip:path}", response_model=schemas.Removed, summary="Lift a ban (an IP or a CIDR)")
async def delete_blacklist(state: State, node_id: NodeId, ip: str) -> Any:
    return await state.node(node_id, "delete_blacklist", ip)


@api.post(
    "/allowlist",
    response_model=schemas.AllowEntry,
    status_code=201,
    summary="Allow a source: checked first, it skips bans, limits and the WAF",
)
async def add_allow(state: State, node_id: NodeId, body: schemas.AllowIn) -> Any:
    return await state.node(node_id, "add_allow", body.ip, body.reason)


@api.get("/allowlist", response_model=schemas.AllowList, summary="Allowed sources")
async def list_allow(state: State, node_id: NodeId) -> Any:
    return await state.node(node_id, "list_allow")


@api.delete("/allowlist/{ip:path}", response_model=schemas.Removed, summary="Remove a source from the allowlist")
async def delete_allow(state: State, node_id: NodeId, ip: str) -> Any:
    return await state.node(node_id, "delete_allow", ip)


@api.get("/stats", response_model=schemas.Stats, summary="Counters read from the data plane")
async def stats(state: State, node_id: NodeId) -> Any:
    return await state.node(node_id, "stats")


@api.get("/tls/certificate", response_model=schemas.Certificate, summary="The certificate the listener serves")
async def certificate(state: State, node_id: NodeId) -> Any:
    return await state.node(node_id, "certificate_view")


@api.put(
    "/tls/certificate",
    response_model=schemas.Certificate,
    summary="Serve a new certificate (runtime API: no reload, no dropped connection; kept across restarts)",
    responses={409: {"model": schemas.ErrorBody, "description": "the node has no TLS listener"}},
)
async def replace_certificate(state: State, node_id: NodeId, body: schemas.CertificateIn) -> Any:
    return await state.node(node_id, "replace_certificate", body.cert_pem, body.key_pem)


router.include_router(api)
