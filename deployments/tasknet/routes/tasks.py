"""Tasks, auctions, composite (team) tasks and skills profiles."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from pydantic import Field

from deployments.tasknet import schemas
from deployments.tasknet.errors import TasknetError
from deployments.tasknet.routes.common import (
    ERRORS,
    Message,
    Node,
    Open,
    Reader,
    Strict,
    Writer,
    channel_name,
    submit,
    view,
)

router = APIRouter(tags=["tasks"], responses=ERRORS)


class TaskIn(Strict):
    title: str = Field(min_length=1, max_length=200)
    description: str = Field("", max_length=5000)
    tags: list[str] = Field(default_factory=list, max_length=32)
    reward: int = Field(0, ge=0)
    schema_name: str = "task_v1"
    required_tools: list[str] = Field(default_factory=list, max_length=32)
    enable_auction: bool = False
    max_reward: int | None = Field(None, ge=1)
    auction_deadline_hours: int = Field(24, ge=1, le=720)


class TaskOut(Open):
    id: str
    title: str
    status: str
    creator: str
    reward: int
    created_at: int


class ProgressIn(Strict):
    progress_note: str = Field("", max_length=2000)


class BidIn(Strict):
    amount: int = Field(ge=1)
    estimated_days: int = Field(ge=1, le=3650)


class DisputeIn(Strict):
    reason: str = Field("", max_length=2000)


class SelectBidIn(Strict):
    bidder_id: str = Field(min_length=1, max_length=64)


class SubtaskIn(Strict):
    title: str = Field(min_length=1, max_length=200)
    required_skills: list[str] = Field(default_factory=list, max_length=32)
    reward_percentage: int = Field(ge=0, le=100)


class CompositeIn(Strict):
    title: str = Field(min_length=1, max_length=200)
    description: str = Field("", max_length=5000)
    total_reward: int = Field(ge=0)
    required_team_size: int = Field(ge=1, le=50)
    subtasks: list[SubtaskIn] = Field(min_length=1, max_length=50)


class ApplyIn(Strict):
    message: str = Field("", max_length=2000)


class SkillsIn(Strict):
    skills: list[str] = Field(default_factory=list, max_length=64)
    bio: str = Field("", max_length=2000)


@router.post("/tasks", response_model=TaskOut, summary="Create a task; its reward is escrowed from the creator")
async def create_task(node: Writer, body: TaskIn, channel: str = Query("general")) -> Any:
    data = body.model_dump(exclude_none=True)
    if body.schema_name not in schemas.SCHEMAS or not body.schema_name.startswith("task_"):
        raise TasknetError(400, f"unknown task schema {body.schema_name}")
    if body.enable_auction and body.schema_name != "task_v2":
        data["schema_name"] = "task_v2"
    errors = schemas.validate(data["schema_name"], data)
    if errors:
        raise TasknetError(400, "validation error: " + "; ".join(errors))
    return await submit(node, "task_create", data, channel_name(channel))


@router.post("/tasks/{task_id}/progress", response_model=Message)
async def progress_task(node: Writer, task_id: str, body: ProgressIn) -> Any:
    payload = {"task_id": task_id, "progress_note": body.progress_note}
    return await _on_task(node, "task_progress", task_id, "progress recorded", payload)


@router.post("/tasks/{task_id}/dispute", response_model=Message)
async def dispute_task(node: Writer, task_id: str, body: DisputeIn) -> Any:
    """The creator refuses a submitted completion: the task goes back to its assignee."""
    payload = {"task_id": task_id, "reason": body.reason}
    return await _on_task(node, "task_dispute", task_id, "completion disputed", payload)


@router.post("/tasks/{task_id}/bid", response_model=Message)
async def bid(node: Writer, task_id: str, body: BidIn) -> Any:
    payload = {"task_id": task_id, **body.model_dump()}
    return await _on_task(node, "task_bid", task_id, "bid placed", payload)


@router.post("/tasks/{task_id}/select_bid", response_model=Message)
async def select_bid(node: Writer, task_id: str, body: SelectBidIn) -> Any:
    payload = {"task_id": task_id, "bidder_id": body.bidder_id}
    return await _on_task(node, "task_select_bid", task_id, "bid selected", payload)


async def _task_channel(node: Node, task_id: str) -> str:
    return str((await view(node, "task", task_id=task_id))["channel"])


SIMPLE_ACTIONS = (
    # method, path, event type, message, description
    ("POST", "/tasks/{task_id}/claim", "task_claim", "task claimed", ""),
    (
        "POST",
        "/tasks/{task_id}/complete",
        "task_complete",
        "completion submitted; the creator accepts or disputes it",
        "The assignee submits the work; the reward moves when the creator accepts (or nobody disputes in time).",
    ),
    (
        "POST",
        "/tasks/{task_id}/accept",
        "task_accept",
        "task completed",
        "The creator accepts a submitted completion; anyone may once `completion_auto_accept_hours` passed.",
    ),
    (
        "POST",
        "/tasks/{task_id}/expire",
        "task_expire",
        "task expired; escrow refunded",
        "Anyone refunds a claim left unfinished past `claim_timeout_hours`, or an auction left unselected.",
    ),
    ("DELETE", "/tasks/{task_id}", "task_delete", "task deleted; escrow refunded", ""),
    ("DELETE", "/tasks/{task_id}/bid", "task_bid_withdraw", "bid withdrawn", ""),
)


def _task_action(method: str, path: str, type_: str, message: str, doc: str) -> None:
    async def action(node: Writer, task_id: str) -> Any:
        return await _on_task(node, type_, task_id, message)

    router.add_api_route(path, action, methods=[method], response_model=Message, description=doc, name=type_)


async def _on_task(node: Node, type_: str, task_id: str, message: str, payload: dict[str, Any] | None = None) -> Any:
    """Submit the event `type_` about `task_id` in the task's channel; the rule's result with `message`."""
    result = await submit(node, type_, payload or {"task_id": task_id}, await _task_channel(node, task_id))
    return {"message": message, **result}


@router.post("/tasks/composite/create", response_model=Open, summary="Create a team task; total_reward is escrowed")
async def create_composite(node: Writer, body: CompositeIn, channel: str = Query("general")) -> Any:
    return await submit(node, "composite_create", body.model_dump(), channel_name(channel))


@router.post("/tasks/composite/{task_id}/apply", response_model=Message)
async def apply_composite(node: Writer, task_id: str, body: ApplyIn) -> Any:
    result = await submit(node, "composite_apply", {"task_id": task_id, "message": body.message}, "general")
    return {"message": "application sent", **result}


@router.post(
    "/tasks/composite/{task_id}/claim", response_model=Message, summary="Kept for compatibility: same as /apply"
)
async def claim_composite(node: Writer, task_id: str) -> Any:
    result = await submit(node, "composite_apply", {"task_id": task_id, "message": ""}, "general")
    return {"message": "application sent (use /apply)", **result}


@router.post("/tasks/composite/{task_id}/accept/{applicant_id}", response_model=Message)
async def accept_applicant(node: Writer, task_id: str, applicant_id: str) -> Any:
    result = await submit(node, "composite_accept", {"task_id": task_id, "applicant_id": applicant_id}, "general")
    return {"message": "applicant accepted", **result}


@router.post("/tasks/composite/{task_id}/cancel", response_model=Message)
async def cancel_composite(node: Writer, task_id: str) -> Any:
    """The creator calls off a team task still forming: the whole reward is refunded."""
    result = await submit(node, "composite_cancel", {"task_id": task_id}, "general")
    return {"message": "composite task cancelled; escrow refunded", **result}


@router.post("/tasks/composite/{task_id}/subtask/{subtask_id}/complete", response_model=Message)
async def complete_subtask(node: Writer, task_id: str, subtask_id: str) -> Any:
    result = await submit(node, "subtask_complete", {"task_id": task_id, "subtask_id": subtask_id}, "general")
    return {"message": "subtask completed", **result}


@router.get("/tasks/composite", response_model=Open)
async def list_composite(node: Reader) -> Any:
    return await view(node, "composite_list")


@router.get("/tasks/composite/{task_id}", response_model=Open)
async def composite_detail(node: Reader, task_id: str) -> Any:
    return await view(node, "composite_detail", task_id=task_id)


@router.post("/skills/profile", response_model=Message, tags=["skills"])
async def set_skills(node: Writer, body: SkillsIn) -> Any:
    result = await submit(node, "skills_set", body.model_dump(), "general")
    return {"message": "skills profile updated", **result}


@router.get("/skills/profile", response_model=Open, tags=["skills"])
async def get_skills(node: Reader, node_id: str | None = Query(None, max_length=64)) -> Any:
    return await view(node, "skills", node_id=node_id)


for _row in SIMPLE_ACTIONS:
    _task_action(*_row)
