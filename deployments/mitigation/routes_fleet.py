"""The orchestrator API (spec 002 §4 D, port 3030 in the original) and the fleet's health and metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import JSONResponse, Response

from actors.mitigation.node_metrics import FLEET_COMPONENT
from deployments.mitigation import schemas
from deployments.mitigation.fleet_client import FleetClient
from rayfleet.metrics import CONTENT_TYPE, METRICS_ROUTE, Metrics

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": schemas.ErrorBody, "description": "no X-Service-API-Key"},
    403: {"model": schemas.ErrorBody, "description": "wrong X-Service-API-Key"},
    422: {"model": schemas.ErrorBody, "description": "invalid body"},
}


def public_router(client: FleetClient) -> APIRouter:
    router = APIRouter(tags=["fleet"])

    @router.get(
        "/health",
        response_model=schemas.Health,
        summary="Fleet liveness (no key)",
        responses={503: {"model": schemas.Health, "description": "degraded: nodes registered, none healthy"}},
    )
    async def health() -> JSONResponse:
        nodes = (await client.call("list_nodes"))["nodes"]
        healthy = sum(1 for n in nodes if n["status"] == "healthy")
        body = {
            "status": "healthy" if healthy or not nodes else "degraded",
            "nodes": len(nodes),
            "healthy_nodes": healthy,
            "data_plane": [n["address"] for n in nodes if n["status"] == "healthy"],
        }
        return JSONResponse(body, status_code=200 if body["status"] == "healthy" else 503)

    return router


def fleet_router(client: FleetClient) -> APIRouter:
    router = APIRouter(tags=["orchestrator"], responses=ERRORS)
    api = APIRouter(prefix="/api/v1")
    metrics = Metrics(FLEET_COMPONENT)

    @router.get("/metrics", summary="service_* metrics of every node (label `node`)", **METRICS_ROUTE)
    async def fleet_metrics() -> Response:
        await client.ensure_started()
        return Response(await metrics.render(), media_type=CONTENT_TYPE)

    @api.get("/nodes", response_model=schemas.NodeList, summary="Registered nodes and their health")
    async def nodes() -> dict[str, Any]:
        return await client.call("list_nodes")

    @api.post(
        "/policy",
        response_model=schemas.PolicyDeployed,
        summary="Deploy a policy to every node (and to nodes added later)",
        responses={503: {"model": schemas.ErrorBody, "description": "geo_block: the ASN API is unreachable"}},
    )
    async def policy(body: schemas.PolicyIn) -> dict[str, Any]:
        return await client.call_unwrapped("apply_policy", body.model_dump())

    @api.post(
        "/scale",
        response_model=schemas.Scaled,
        summary="Create or drain node actors",
        responses={409: {"model": schemas.ErrorBody, "description": "beyond max_nodes or the nodes there are"}},
    )
    async def scale(body: schemas.ScaleIn) -> dict[str, Any]:
        return await client.call_unwrapped("scale", body.action, body.count)

    @api.get("/threats", response_model=schemas.Threats, summary="Threats summed over the fleet")
    async def threats() -> dict[str, Any]:
        return await client.call("threats")

    @api.post("/rules", response_model=schemas.FleetRule, status_code=201, summary="Add a WAF rule on every node")
    async def add_rule(body: schemas.RuleIn) -> dict[str, Any]:
        return await client.call_unwrapped("add_rule", body.pattern, body.action, body.severity)

    @api.get("/rules", response_model=schemas.RuleList, summary="Fleet-wide rules")
    async def list_rules() -> dict[str, Any]:
        return await client.call("list_rules")

    @api.delete(
        "/rules/{rule_id}",
        response_model=schemas.Deleted,
        summary="Remove a fleet-wide rule everywhere",
        responses={404: {"model": schemas.ErrorBody, "description": "no such fleet-wide rule"}},
    )
    async def delete_rule(rule_id: str) -> dict[str, Any]:
        return await client.call_unwrapped("delete_rule", rule_id)

    @api.post("/blacklist", response_model=schemas.BlacklistEntry, status_code=201, summary="Block a source fleet-wide")
    async def blacklist(body: schemas.BlacklistIn) -> dict[str, Any]:
        return await client.call_unwrapped("add_blacklist", body.ip, body.reason, body.duration_seconds)

    router.include_router(api)
    return router
