"""The orchestrator API (spec 002 §4 D, port 3030 in the original) and the fleet's health and metrics.

`public_router` needs no key; `router` is included behind the API key guard (app.py).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from starlette.responses import JSONResponse, Response

from actors.mitigation.fleet import MitigationFleet
from actors.mitigation.settings import AutoscaleSettings
from deployments.mitigation import schemas
from deployments.mitigation.errors import unwrap
from deployments.mitigation.routes.common import KEY_ERRORS, State
from rayfleet.metrics import CONTENT_TYPE, METRICS_ROUTE
from rayfleet.state import call

ERRORS: dict[int | str, dict[str, Any]] = {
    **KEY_ERRORS,
    422: {"model": schemas.ErrorBody, "description": "invalid body"},
}


def refusal(status: int, description: str) -> dict[int | str, dict[str, Any]]:
    """An error answer for an operation's OpenAPI `responses`."""
    return {status: {"model": schemas.ErrorBody, "description": description}}


NO_NODE = refusal(503, "no node could apply it")

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
    responses={
        409: {"model": schemas.ErrorBody, "description": "geo_block while no ASN API is configured"},
        503: {
            "model": schemas.ErrorBody,
            "description": "geo_block: the ASN API is unreachable; or no node applied it",
        },
    },
)
async def policy(state: State, body: schemas.PolicyIn) -> Any:
    return await state.fleet_call(MitigationFleet.apply_policy, body.model_dump())


@api.post(
    "/scale",
    response_model=schemas.Scaled,
    summary="Create or drain node actors",
    responses={
        202: {"model": schemas.Scaled, "description": "a node added did not start in time: it is `starting`"},
        409: {
            "model": schemas.ErrorBody,
            "description": "beyond max_nodes or the nodes there are, or outside autoscale's bounds while it is on",
        },
    },
)
async def scale(state: State, body: schemas.ScaleIn, response: Response) -> Any:
    value = await state.fleet_call(MitigationFleet.scale, body.action, body.count)
    if value["starting"]:  # accepted: the node is in the fleet and joins once it answers
        response.status_code = 202
    return value


@api.get("/autoscale", response_model=schemas.Autoscale, summary="Autoscaling: settings and decisions")
async def autoscale(state: State) -> dict[str, Any]:
    return await call(await state.ready(), MitigationFleet.autoscale_view)


@api.put("/autoscale", response_model=schemas.Autoscale, summary="Change the autoscale settings")
async def set_autoscale(state: State, body: AutoscaleSettings) -> Any:
    return await state.fleet_call(MitigationFleet.set_autoscale, body.model_dump())


@api.get("/threats", response_model=schemas.Threats, summary="Threats summed over the fleet")
async def threats(state: State) -> dict[str, Any]:
    return await call(await state.ready(), MitigationFleet.threats)


@api.post(
    "/rules",
    response_model=schemas.FleetRule,
    status_code=201,
    summary="Add a WAF rule on every node",
    responses=NO_NODE,
)
async def add_rule(state: State, body: schemas.RuleIn) -> Any:
    return await state.fleet_call(MitigationFleet.add_rule, body.pattern, body.action, body.severity)


@api.get("/rules", response_model=schemas.RuleList, summary="Fleet-wide rules")
async def list_rules(state: State) -> dict[str, Any]:
    return await call(await state.ready(), MitigationFleet.list_rules)


@api.delete(
    "/rules/{rule_id}",
    response_model=schemas.Deleted,
    summary="Remove a fleet-wide rule everywhere",
    responses=refusal(404, "no such fleet-wide rule"),
)
async def delete_rule(state: State, rule_id: str) -> Any:
    return await state.fleet_call(MitigationFleet.delete_rule, rule_id)


@api.post(
    "/blacklist",
    response_model=schemas.BlacklistEntry,
    status_code=201,
    summary="Block a source fleet-wide",
    responses=NO_NODE,
)
async def blacklist(state: State, body: schemas.BlacklistIn) -> Any:
    fleet = await state.ready()
    return unwrap(await call(fleet, MitigationFleet.add_blacklist, body.ip, body.reason, body.duration_seconds))


@api.get("/blacklist", response_model=schemas.BanList, summary="Fleet-wide bans, with reason, source and expiry")
async def list_blacklist(state: State) -> dict[str, Any]:
    return await call(await state.ready(), MitigationFleet.list_blacklist)


@api.delete(
    "/blacklist/{ip:path}",
    response_model=schemas.Removed,
    summary="Lift a fleet-wide ban on every node",
    responses=refusal(404, "not banned fleet-wide"),
)
async def delete_blacklist(state: State, ip: str) -> Any:
    return await state.fleet_call(MitigationFleet.delete_blacklist, ip)


@api.put(
    "/tls/certificate",
    response_model=schemas.Certificate,
    summary="Serve a new certificate on every node (runtime API: no reload)",
    responses={**NO_NODE, **refusal(409, "the nodes have no TLS listener, or no node is live")},
)
async def replace_certificate(state: State, body: schemas.CertificateIn) -> Any:
    return await state.fleet_call(MitigationFleet.replace_certificate, body.cert_pem, body.key_pem)


@api.post(
    "/allowlist",
    response_model=schemas.AllowEntry,
    status_code=201,
    summary="Allow a source on every node (and on nodes added later)",
    responses=NO_NODE,
)
async def add_allow(state: State, body: schemas.AllowIn) -> Any:
    return await state.fleet_call(MitigationFleet.add_allow, body.ip, body.reason)


@api.get("/allowlist", response_model=schemas.AllowList, summary="The fleet's allowlist")
async def list_allow(state: State) -> dict[str, Any]:
    return await call(await state.ready(), MitigationFleet.list_allow)


@api.delete(
    "/allowlist/{ip:path}",
    response_model=schemas.Removed,
    summary="Remove a source from the fleet's allowlist",
    responses=refusal(404, "not on the fleet's allowlist"),
)
async def delete_allow(state: State, ip: str) -> Any:
    return await state.fleet_call(MitigationFleet.delete_allow, ip)


@api.get("/policy", response_model=schemas.PolicyView, summary="The policy in force")
async def get_policy(state: State) -> dict[str, Any]:
    return await call(await state.ready(), MitigationFleet.get_policy)


@api.delete(
    "/policy/{kind}",
    response_model=schemas.PolicyView,
    summary="Remove the rate limit, the geo block, or the client-address, TLS or WAF settings from every node",
    responses=refusal(404, "none in force"),
)
async def remove_policy(state: State, kind: Literal["rate_limit", "geo_block", "client_address", "tls", "waf"]) -> Any:
    return await state.fleet_call(MitigationFleet.remove_policy, kind)


router.include_router(api)
