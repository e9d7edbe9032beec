"""The orchestrator API (spec 002 §4 D, port 3030 in the original) and the fleet's health and metrics.

`public_router` needs no key; `router` is included behind the API key guard (app.py).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import JSONResponse, Response

from actors.mitigation.fleet import MitigationFleet
from deployments.mitigation import schemas
from deployments.mitigation.errors import unwrap
from deployments.mitigation.routes.common import KEY_ERRORS, State
from rayfleet.metrics import CONTENT_TYPE, METRICS_ROUTE
from rayfleet.state import call

ERRORS: dict[int | str, dict[str, Any]] = {
    **KEY_ERRORS,
    422: {"model": schemas.ErrorBody, "description": "invalid body"},
}

public_router = APIRouter(tags=["fleet"])
router = APIRouter(tags=["orchestrator"], responses=ERRORS)
api = APIRouter(prefix="/api/v1")


@public_router.get(
    "/health",
    response_model=schemas.Health,
    summary="Fleet liveness (no key)",
    responses={503: {"model": schemas.Health, "description": "degraded: nodes registered, none healthy"}},
)
async def health(state: State) -> JSONResponse:
    nodes = (await call(await state.ready(), MitigationFleet.list_nodes))["nodes"]
    healthy = sum(1 for n in nodes if n["status"] == "healthy")
    body = {
        "status": "healthy" if healthy or not nodes else "degraded",
        "nodes": len(nodes),
        "healthy_nodes": healthy,
        "data_plane": [n["address"] for n in nodes if n["status"] == "healthy"],
        "children": [child for n in nodes for child in n.get("children", [])],
    }
    return JSONResponse(body, status_code=200 if body["status"] == "healthy" else 503)


@router.get("/metrics", summary="service_* metrics of every node (label `node`)", **METRICS_ROUTE)
async def fleet_metrics(state: State) -> Response:
    await state.ready()
    return Response(await state.metrics.render(), media_type=CONTENT_TYPE)


@api.get("/nodes", response_model=schemas.NodeList, summary="Registered nodes and their health")
async def nodes(state: State) -> dict[str, Any]:
    return await call(await state.ready(), MitigationFleet.list_nodes)


@api.post(
    "/policy",
    response_model=schemas.PolicyDeployed,
    summary="Deploy a policy to every node (and to nodes added later)",
    responses={503: {"model": schemas.ErrorBody, "description": "geo_block: the ASN API is unreachable"}},
)
async def policy(state: State, body: schemas.PolicyIn) -> Any:
    return unwrap(await call(await state.ready(), MitigationFleet.apply_policy, body.model_dump()))


@api.post(
    "/scale",
    response_model=schemas.Scaled,
    summary="Create or drain node actors",
    responses={409: {"model": schemas.ErrorBody, "description": "beyond max_nodes or the nodes there are"}},
)
async def scale(state: State, body: schemas.ScaleIn) -> Any:
    return unwrap(await call(await state.ready(), MitigationFleet.scale, body.action, body.count))


@api.get("/threats", response_model=schemas.Threats, summary="Threats summed over the fleet")
async def threats(state: State) -> dict[str, Any]:
    return await call(await state.ready(), MitigationFleet.threats)


@api.post("/rules", response_model=schemas.FleetRule, status_code=201, summary="Add a WAF rule on every node")
async def add_rule(state: State, body: schemas.RuleIn) -> Any:
    return unwrap(await call(await state.ready(), MitigationFleet.add_rule, body.pattern, body.action, body.severity))


@api.get("/rules", response_model=schemas.RuleList, summary="Fleet-wide rules")
async def list_rules(state: State) -> dict[str, Any]:
    return await call(await state.ready(), MitigationFleet.list_rules)


@api.delete(
    "/rules/{rule_id}",
    response_model=schemas.Deleted,
    summary="Remove a fleet-wide rule everywhere",
    responses={404: {"model": schemas.ErrorBody, "description": "no such fleet-wide rule"}},
)
async def delete_rule(state: State, rule_id: str) -> Any:
    return unwrap(await call(await state.ready(), MitigationFleet.delete_rule, rule_id))


@api.post("/blacklist", response_model=schemas.BlacklistEntry, status_code=201, summary="Block a source fleet-wide")
async def blacklist(state: State, body: schemas.BlacklistIn) -> Any:
    fleet = await state.ready()
    return unwrap(await call(fleet, MitigationFleet.add_blacklist, body.ip, body.reason, body.duration_seconds))


router.include_router(api)
