"""The agent, self-upgrades and the evolution engine."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import APIRouter, Request
from pydantic import Field
from starlette.types import ASGIApp

from actors.tasknet import llm
from actors.tasknet.agent import Action, ActionOutcome, parse_actions, request_for
from actors.tasknet.ledger import Reject
from deployments.tasknet.errors import TasknetError
from deployments.tasknet.routes.common import ERRORS, Ctx, Message, Open, Reader, Strict, Writer, service
from deployments.tasknet.state import TOKEN_HEADER

router = APIRouter(tags=["agent"], responses=ERRORS)


class PromptIn(Strict):
    prompt: str = Field(min_length=1, max_length=4000)


class ObjectivesIn(Strict):
    maximize_sp: float = Field(ge=0, le=1)
    build_reputation: float = Field(ge=0, le=1)
    contribute_to_network: float = Field(ge=0, le=1)
    focus_areas: list[str] = Field(default_factory=list, max_length=20)


class UpgradeIn(Strict):
    version: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._-]+$")
    package_b64: str = Field(min_length=4, max_length=48_000)
    package_hash: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    title: str = Field("", max_length=200)
    description: str = Field("", max_length=5000)


class GenerateIn(Strict):
    inefficiency_id: str = Field(max_length=16)
    language: str = "python"
    target_component: str = Field("node", max_length=64)


class EvolutionProposeIn(Strict):
    title: str = Field(min_length=1, max_length=200)
    generated_code_id: str = Field(max_length=32)
    rationale: str = Field("", max_length=5000)


async def _execute(app: ASGIApp, token: str, actions: list[Action]) -> list[ActionOutcome]:
    """Run each action through this node's own API with its token, so it passes every check."""
    transport = httpx.ASGITransport(app=app)
    out: list[ActionOutcome] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://node") as client:
        for action in actions:
            try:
                method, path, body = request_for(action)
            except Reject as exc:
                out.append({**action, "status": "invalid", "detail": exc.message})
                continue
            response = await client.request(method, path, json=body, headers={TOKEN_HEADER: token})
            status = "executed" if response.status_code < 400 else "failed"
            entry: ActionOutcome = {
                "action": action["action"],
                "params": action["params"],
                "reasoning": action["reasoning"],
                "status": status,
            }
            if status == "failed":
                entry["detail"] = response.json().get("detail", "")
            out.append(entry)
    return out


@router.post("/agent/prompt", response_model=Message)
async def prompt(node: Writer, ctx: Ctx, request: Request, body: PromptIn) -> Any:
    context = await service(node, "agent_context")
    if not context["enabled"]:
        raise TasknetError(503, "the agent is disabled on this node")
    raw = await llm.chat(ctx.config.llm.params(), context["system_prompt"], body.prompt)
    actions = parse_actions(raw)
    executed = await _execute(request.app, ctx.token(), actions)
    await service(node, "agent_record", executed=executed, generated=len(actions))
    return {
        "message": f"{len(actions)} actions generated, {sum(a['status'] == 'executed' for a in executed)} executed",
        "prompt": body.prompt,
        "actions_generated": len(actions),
        "actions_executed": executed,
        "raw_llm_response": raw,
    }


@router.get("/agent/objectives", response_model=Open)
async def get_objectives(node: Reader) -> Any:
    return await service(node, "agent_objectives")


@router.post("/agent/objectives", response_model=Message)
async def set_objectives(node: Writer, body: ObjectivesIn) -> Any:
    result = await service(node, "agent_objectives", objectives=body.model_dump())
    return {"message": "objectives updated", "objectives": result["objectives"]}


@router.get("/agent/status", response_model=Open)
async def agent_status(node: Reader) -> Any:
    return await service(node, "agent_status")


@router.post("/upgrades/propose", response_model=Message, tags=["upgrades"])
async def propose_upgrade(node: Writer, body: UpgradeIn) -> Any:
    return await service(node, "upgrade", action="propose", **body.model_dump())


@router.post("/upgrades/{proposal_id}/test", response_model=Message, tags=["upgrades"])
async def test_upgrade(node: Writer, proposal_id: str) -> Any:
    return await service(node, "upgrade", action="test", proposal_id=proposal_id)


@router.get("/upgrades/status", response_model=Open, tags=["upgrades"])
async def upgrade_status(node: Reader) -> Any:
    return await service(node, "upgrade", action="status")


@router.get("/upgrades/history", response_model=Open, tags=["upgrades"])
async def upgrade_history(node: Reader) -> Any:
    return await service(node, "upgrade", action="history_view")


@router.post("/upgrades/{proposal_id}/rollback", response_model=Message, tags=["upgrades"])
async def rollback(node: Writer, proposal_id: str) -> Any:
    return await service(node, "upgrade", action="rollback", proposal_id=proposal_id)


@router.post("/evolution/analyze", response_model=Message, tags=["evolution"])
async def analyze(node: Writer) -> Any:
    return await service(node, "evolve", action="analyze")


@router.post("/evolution/generate", response_model=Message, tags=["evolution"])
async def generate(node: Writer, body: GenerateIn) -> Any:
    return await service(node, "evolve", action="generate", **body.model_dump())


@router.post("/evolution/propose", response_model=Message, tags=["evolution"])
async def propose_evolution(node: Writer, body: EvolutionProposeIn) -> Any:
    return await service(node, "evolve", action="propose", **body.model_dump())


@router.get("/evolution/status", response_model=Open, tags=["evolution"])
async def evolution_status(node: Reader) -> Any:
    return await service(node, "evolve", action="status")
