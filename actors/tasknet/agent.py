"""The node's agent: objectives, status and the parsing of model output into allow-listed actions.

The model is reached through the LLM gateway (llm.py); the actions it
proposes are executed by the API layer through the node's own HTTP API with the node's
token (deployments/tasknet/routes/agent.py), so they pass the same checks as any client.
"""

from __future__ import annotations

import json
import re
from typing import Any, NotRequired, TypedDict

from actors.tasknet.ledger import Reject
from actors.tasknet.node import NodeCore
from actors.tasknet.settings import AgentParams, LlmParams

# action -> (HTTP method, path template, body fields taken from params)
ACTIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "create_task": ("POST", "/tasks", ("title", "description", "reward", "tags")),
    "claim_task": ("POST", "/tasks/{task_id}/claim", ()),
    "progress_task": ("POST", "/tasks/{task_id}/progress", ("progress_note",)),
    "complete_task": ("POST", "/tasks/{task_id}/complete", ()),
    "accept_task": ("POST", "/tasks/{task_id}/accept", ()),
    "dispute_task": ("POST", "/tasks/{task_id}/dispute", ("reason",)),
    "bid_on_task": ("POST", "/tasks/{task_id}/bid", ("amount", "estimated_days")),
    "vote": ("POST", "/proposals/{proposal_id}/vote", ("vote",)),
    "update_skills": ("POST", "/skills/profile", ("skills", "bio")),
}
MAX_ACTIONS = 5


class Action(TypedDict):
    """One allow-listed action parsed from the model's reply."""

    action: str
    params: dict[str, Any]
    reasoning: str


class ActionOutcome(Action):
    """An action after the node's own API ran it: `executed`, `failed` or `invalid` (with the detail)."""

    status: str
    detail: NotRequired[str]


_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def parse_actions(text: str) -> list[Action]:
    """Actions from the model's reply: a JSON list, `{"actions": [...]}` or one action object.

    Anything else (prose, unknown actions, malformed params) yields no action.
    """
    candidates: list[Any] = []
    for match in re.finditer(r"(\[.*\]|\{.*\})", text, re.S):
        try:
            candidates.append(json.loads(match.group(1)))
            break
        except ValueError:
            continue
    if not candidates:
        return []
    data = candidates[0]
    if isinstance(data, dict):
        data = data.get("actions", [data])
    if not isinstance(data, list):
        return []
    out: list[Action] = []
    for item in data[:MAX_ACTIONS]:
        if (
            not isinstance(item, dict)
            or item.get("action") not in ACTIONS
            or not isinstance(item.get("params", {}), dict)
        ):
            continue
        out.append(
            {
                "action": item["action"],
                "params": item.get("params", {}),
                "reasoning": str(item.get("reasoning", ""))[:500],
            }
        )
    return out


def request_for(action: Action) -> tuple[str, str, dict[str, Any]]:
    """The HTTP request that carries out one parsed action."""
    method, template, fields = ACTIONS[action["action"]]
    params = action["params"]
    path_args = {}
    for name in re.findall(r"\{(\w+)\}", template):
        value = params.get(name)
        if not isinstance(value, str) or not _ID.match(value):
            raise Reject(f"{name} missing or malformed")
        path_args[name] = value
    body = {k: params[k] for k in fields if k in params}
    return method, template.format(**path_args), body


class Agent:
    def __init__(self, core: NodeCore, llm: LlmParams, settings: AgentParams) -> None:
        self.core = core
        self.llm = llm
        self.enabled = bool(settings.get("enabled", True))
        self._objectives: dict[str, Any] = {
            "maximize_sp": 0.3,
            "build_reputation": 0.4,
            "contribute_to_network": 0.3,
            "focus_areas": [],
        }
        self.stats = {"prompts": 0, "actions_generated": 0, "actions_executed": 0, "actions_failed": 0}
        self.last_action: ActionOutcome | None = None
        self.pending_actions = 0

    def objectives(self, update: dict[str, Any] | None) -> dict[str, Any]:
        if update is not None:
            weights = {k: update[k] for k in ("maximize_sp", "build_reputation", "contribute_to_network")}
            if not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1 for v in weights.values()
            ):
                raise Reject("objective weights are numbers between 0 and 1")
            areas = update.get("focus_areas", [])
            if (
                not isinstance(areas, list)
                or not all(isinstance(a, str) and len(a) <= 64 for a in areas)
                or len(areas) > 20
            ):
                raise Reject("focus_areas is a list of up to 20 short strings")
            self._objectives = {**weights, "focus_areas": areas}
        return {"objectives": dict(self._objectives), "stats": dict(self.stats)}

    def status(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "model_loaded": bool(self.llm.get("base_url")),
            "model": self.llm.get("model"),
            "last_action": self.last_action,
            "pending_actions": self.pending_actions,
        }

    def context(self) -> str:
        state = self.core.state
        me = state["nodes"].get(self.core.node_id)
        open_tasks = [
            {"task_id": t["id"], "title": t["title"], "reward": t["reward"], "creator": t["creator"]}
            for ch in state["channels"].values()
            for t in ch["tasks"].values()
            if t["status"] == "open"
        ][:20]
        return json.dumps(
            {
                "node_id": self.core.node_id,
                "balance": me["balance"] if me else 0,
                "reputation": me["reputation"]["_total"] if me else 0,
                "objectives": self._objectives,
                "open_tasks": open_tasks,
            }
        )

    def system_prompt(self) -> str:
        names = ", ".join(sorted(ACTIONS))
        return (
            "You act for one node of a task network. Reply with a JSON list of actions, each "
            '{"action": <one of ' + names + '>, "params": {...}, "reasoning": "..."}. '
            "Node state: " + self.context()
        )

    def record(self, executed: list[ActionOutcome], generated: int) -> None:
        self.stats["prompts"] += 1
        self.stats["actions_generated"] += generated
        self.stats["actions_executed"] += sum(1 for a in executed if a["status"] == "executed")
        self.stats["actions_failed"] += sum(1 for a in executed if a["status"] != "executed")
        if executed:
            self.last_action = executed[-1]

    async def close(self) -> None:
        return None
