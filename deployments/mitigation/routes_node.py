"""One node's management API (spec 002 §4 D, port 9999 in the original): served at /nodes/{node_id}."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from deployments.mitigation import schemas
from deployments.mitigation.fleet_client import FleetClient
from rayfleet.metrics import CONTENT_TYPE, METRICS_ROUTE

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": schemas.ErrorBody, "description": "no X-Service-API-Key"},
    403: {"model": schemas.ErrorBody, "description": "wrong X-Service-API-Key"},
    404: {"model": schemas.ErrorBody, "description": "no such node (or rule)"},
    422: {"model": schemas.ErrorBody, "description": "invalid body"},
    503: {"model": schemas.ErrorBody, "description": "the node is dead or unreachable"},
}


def node_id(request: Request) -> str:
    return str(request.scope.get("path_params", {}).get("node_id", ""))


def node_router(client: FleetClient, guard: Any) -> APIRouter:
    router = APIRouter(responses=ERRORS)
    api = APIRouter(prefix="/api/v1", tags=["node"], dependencies=[Depends(guard)])

    @router.get("/health", tags=["node"], summary="Liveness of this node (no key)")
    async def health(request: Request) -> dict[str, Any]:
        status = await client.node(node_id(request), "status")
        return {"status": status["health"], "node_id": status["node_id"]}

    @router.get(
        "/metrics",
        tags=["node"],
        dependencies=[Depends(guard)],
        summary="This node's service_* metrics",
        **METRICS_ROUTE,
    )
    async def metrics(request: Request) -> Response:
        body = await client.node(node_id(request), "metrics_text")
        return Response(body, media_type=CONTENT_TYPE)

    @api.get("/status", response_model=schemas.Status, summary="Mode, uptime, connections, health")
    async def status(request: Request) -> dict[str, Any]:
        return await client.node(node_id(request), "status")

    @api.post(
        "/rules",
        response_model=schemas.RuleCreated,
        status_code=201,
        summary="Add a WAF rule (in effect on the data plane when this answers)",
        responses={409: {"model": schemas.ErrorBody, "description": "the node runs in syn mode"}},
    )
    async def add_rule(body: schemas.RuleIn, request: Request) -> dict[str, Any]:
        rule = await client.node(node_id(request), "add_rule", body.pattern, body.action, body.severity)
        return {"id": rule["id"], "status": rule["status"], "created_at": rule["created_at"]}

    @api.get("/rules", response_model=schemas.RuleList, summary="Custom rules with their hits")
    async def list_rules(request: Request) -> dict[str, Any]:
        return await client.node(node_id(request), "list_rules")

    @api.delete("/rules/{rule_id}", response_model=schemas.Deleted, summary="Remove a rule (no restart)")
    async def delete_rule(rule_id: str, request: Request) -> dict[str, Any]:
        return await client.node(node_id(request), "delete_rule", rule_id)

    @api.post(
        "/blacklist",
        response_model=schemas.BlacklistEntry,
        status_code=201,
        summary="Block a source for duration_seconds",
    )
    async def blacklist(body: schemas.BlacklistIn, request: Request) -> dict[str, Any]:
        return await client.node(node_id(request), "add_blacklist", body.ip, body.reason, body.duration_seconds)

    @api.get("/stats", response_model=schemas.Stats, summary="Counters read from the data plane")
    async def stats(request: Request) -> dict[str, Any]:
        return await client.node(node_id(request), "stats")

    router.include_router(api)
    return router
