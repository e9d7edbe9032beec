"""Proposals, votes (public and anonymous), ratification, zero-knowledge proofs, config,
schemas, treasuries and shared tools."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Body, Query
from pydantic import Field

from deployments.tasknet import schemas
from deployments.tasknet.errors import TasknetError
from deployments.tasknet.routes.common import (
    ERRORS,
    Message,
    Open,
    Reader,
    Strict,
    Writer,
    channel_name,
    service,
    submit,
    view,
)

router = APIRouter(tags=["governance"], responses=ERRORS)


class ProposalIn(Strict):
    title: str = Field(min_length=1, max_length=200)
    description: str = Field("", max_length=5000)
    proposal_type: Literal["generic", "config_change", "command", "code_upgrade", "validator_change"] = "generic"
    params: dict[str, Any] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list, max_length=32)
    schema_name: str = "proposal_v1"
    command: dict[str, Any] | None = None


class ZkpProof(Strict):
    commitment: str = Field(max_length=70)
    challenge: str = Field(max_length=70)
    response: list[str] = Field(max_length=1000)
    tier: str = Field(max_length=32)
    tier_weight: float


class VoteIn(Strict):
    vote: Literal["yes", "no"]
    anonymous: bool = False
    zkp_proof: ZkpProof | None = None


class ProposalOut(Open):
    id: str
    title: str
    proposer: str
    status: str
    votes: dict[str, Any]
    created_at: int


class ValidateIn(Strict):
    schema_name: str
    data: Any


@router.post("/proposals", response_model=ProposalOut)
async def create_proposal(node: Writer, body: ProposalIn, channel: str = Query("general")) -> Any:
    if body.schema_name not in schemas.SCHEMAS:
        raise TasknetError(400, f"unknown schema {body.schema_name}")
    errors = schemas.validate(body.schema_name, body.model_dump(exclude={"command", "schema_name"}))
    if errors:
        raise TasknetError(400, "validation error: " + "; ".join(errors))
    if body.proposal_type == "code_upgrade":
        raise TasknetError(400, "upgrade proposals are filed through POST /upgrades/propose")
    payload = body.model_dump(exclude_none=True)
    if body.command is not None:
        payload["command"] = await service(node, "seal_command_service", command=body.command)
    return await submit(node, "proposal_create", payload, channel_name(channel))


@router.post("/proposals/{proposal_id}/vote", response_model=Message)
async def vote(node: Writer, proposal_id: str, body: VoteIn) -> Any:
    proof = body.zkp_proof.model_dump() if body.zkp_proof else None
    if proof and not body.anonymous:
        raise TasknetError(400, "a zkp_proof goes with anonymous: true")
    result = await service(
        node, "vote", proposal_id=proposal_id, vote=body.vote, anonymous=body.anonymous, zkp_proof=proof
    )
    return {"message": "vote recorded", **result}


@router.post("/proposals/{proposal_id}/close", response_model=Message)
async def close(node: Writer, proposal_id: str) -> Any:
    details = await view(node, "proposal_details", proposal_id=proposal_id)
    result = await submit(node, "proposal_close", {"proposal_id": proposal_id}, details["channel"])
    return {"message": f"proposal closed: {result['result']}", **result}


@router.post("/proposals/{proposal_id}/withdraw", response_model=Message)
async def withdraw(node: Writer, proposal_id: str) -> Any:
    """The proposer takes back an open proposal (nobody closes one before its voting period ends)."""
    details = await view(node, "proposal_details", proposal_id=proposal_id)
    result = await submit(node, "proposal_withdraw", {"proposal_id": proposal_id}, details["channel"])
    return {"message": "proposal withdrawn", **result}


@router.get("/proposals/{proposal_id}/details", response_model=Open)
async def details(node: Reader, proposal_id: str) -> Any:
    return await view(node, "proposal_details", proposal_id=proposal_id)


@router.post(
    "/governance/ratify/{proposal_id}",
    response_model=Message,
    summary="Validators only: order the command through Raft",
)
async def ratify(node: Writer, proposal_id: str) -> Any:
    result = await service(node, "ratify", proposal_id=proposal_id)
    return {"message": "ratified and executed" if result["executed"] else "ratified; execution failed", **result}


@router.get("/zkp/generate_proof", response_model=Open, summary="A linkable ring signature for an anonymous vote")
async def generate_proof(
    node: Writer, proposal_id: str = Query(..., max_length=64), vote: Literal["yes", "no"] = Query("yes")
) -> Any:
    return await service(node, "zkp_proof", proposal_id=proposal_id, vote=vote)


@router.get("/config", response_model=Open, tags=["config"])
async def config(node: Reader) -> Any:
    return await view(node, "config")


@router.get("/config/history", response_model=Open, tags=["config"])
async def config_history(node: Reader) -> Any:
    return await view(node, "config_history")


@router.get("/schemas", response_model=Open, tags=["schemas"])
async def list_schemas() -> Any:
    return {"schemas": schemas.SCHEMAS}


@router.get("/schemas/{schema_name}", response_model=Open, tags=["schemas"])
async def get_schema(schema_name: str) -> Any:
    if schema_name not in schemas.SCHEMAS:
        raise TasknetError(404, f"schema {schema_name} not found")
    return schemas.SCHEMAS[schema_name]


@router.post("/schemas/validate", response_model=Open, tags=["schemas"])
async def validate_data(body: ValidateIn) -> Any:
    if body.schema_name not in schemas.SCHEMAS:
        raise TasknetError(404, f"schema {body.schema_name} not found")
    errors = schemas.validate(body.schema_name, body.data)
    return {"valid": not errors, "errors": errors}


@router.get("/treasury/{channel_id}", response_model=Open, tags=["treasury"])
async def treasury(node: Reader, channel_id: str) -> Any:
    return await view(node, "treasury", channel_id=channel_id)


@router.get("/treasuries", response_model=Open, tags=["treasury"])
async def treasuries(node: Reader) -> Any:
    return await view(node, "treasuries")


@router.post(
    "/tools/{tool_id}/execute", response_model=Open, tags=["tools"], summary="Assignees only; billed to the treasury"
)
async def execute_tool(
    node: Writer,
    tool_id: str,
    task_id: str = Query(..., max_length=64),
    tool_input: dict[str, Any] = Body(default_factory=dict),
) -> Any:
    return await service(node, "tool_execute", tool_id=tool_id, task_id=task_id, tool_input=tool_input)
