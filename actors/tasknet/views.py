"""Read-only views of a node's folded state, in the spec's response shapes.

Each view takes the node actor (for its core and its transport statistics). Sealed
credentials and ring snapshots never leave through a view.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypedDict

from actors.tasknet.canonical import digest
from actors.tasknet.ledger import Reject
from actors.tasknet.node import NodeCore
from actors.tasknet.pacing import Backoff
from actors.tasknet.records import ConfigChange, NodeRecord, Proposal, Skills, Task, Tool
from actors.tasknet.rules_governance import proposal as find_proposal
from actors.tasknet.rules_governance import tally
from actors.tasknet.services import NodeServices

PUBLIC_CONFIG = (
    "task_completion_tax",
    "proposal_voting_period",
    "proposal_quorum",
    "min_anonymity_set",
    "min_validators",
    "validator_set",
    "updated_at",
)


class Host(Protocol):
    """What a view reads of the node actor (TaskNode): its core, services and transport counters."""

    @property
    def core(self) -> NodeCore: ...
    @property
    def services(self) -> NodeServices: ...
    @property
    def peers(self) -> Mapping[str, object]: ...
    @property
    def messages_sent(self) -> int: ...
    @property
    def messages_received(self) -> int: ...
    @property
    def anonymous_relayed(self) -> int: ...
    @property
    def anonymous_forwarded(self) -> int: ...
    @property
    def anonymous_refused(self) -> int: ...
    @property
    def backoff(self) -> Backoff: ...
    @property
    def anti_entropy_rounds(self) -> int: ...
    @property
    def anti_entropy_pulls(self) -> int: ...
    @property
    def raft_timer_wakes(self) -> int: ...
    def _reachable(self) -> Mapping[str, object]: ...


class TreasuryView(TypedDict):
    channel_id: str
    balance: int
    reserved: int
    available: int


class CompositeSummary(TypedDict):
    id: str
    title: str
    status: str
    team_size: int
    required_team_size: int


def _node_record(record: NodeRecord) -> dict[str, object]:
    return {
        "id": record["id"],
        "name": record["name"],
        "public_key": record["public_key"],
        "reputation": record["reputation"],
        "balance": record["balance"],
        "joined_at": record["joined_at"],
    }


def _proposal_record(prop: Proposal) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in prop.items() if k not in ("snapshot",)}
    out["votes"] = {voter: ballot["vote"] for voter, ballot in prop["votes"].items()}
    out["anonymous_votes"] = [
        {"vote": b["vote"], "tier": b["tier"], "nullifier": b["nullifier"]} for b in prop["anonymous_votes"]
    ]
    out["yes_votes"], out["no_votes"] = tally(prop)
    out["params"] = _strip_secrets(prop["params"])
    out["command"] = _strip_secrets(prop["command"]) if prop["command"] else None
    return out


def _strip_secrets(value: object) -> object:
    if isinstance(value, dict):
        return {k: _strip_secrets(v) for k, v in value.items() if k not in ("credentials_sealed", "package_b64")}
    return value


def _tool_record(tool: Tool) -> dict[str, object]:
    return {k: v for k, v in tool.items() if k != "credentials_sealed"}


def _task_record(task: Task) -> Task:
    return copy.deepcopy(task)


def state_view(actor: Host) -> dict[str, Any]:
    state = actor.core.state
    analysis = actor.services.last_analysis
    out: dict[str, Any] = {
        "global": {
            "nodes": {nid: _node_record(rec) for nid, rec in state["nodes"].items()},
            "immune_system": {
                "enabled": True,
                "active_issues": analysis.get("inefficiencies", []),
                "last_scan": analysis.get("at"),
            },
            "config": config_view(actor),
            "escrow_total": sum(state["escrow"].values()),
            "minted": state["minted"],
            "burned": state["burned"],
            "ratified": state["ratified"],
            "validator_history": state.get("validator_history", []),
            "events_applied": state["applied"],
            "events_rejected": state["rejected"],
        }
    }
    for name, chan in sorted(state["channels"].items()):
        out[name] = {
            "participants": list(chan["participants"]),
            "tasks": {tid: _task_record(t) for tid, t in chan["tasks"].items()},
            "proposals": {pid: _proposal_record(p) for pid, p in chan["proposals"].items()},
            "treasury_balance": state["treasuries"].get(name, 0),
            "composite_tasks": copy.deepcopy(chan["composite_tasks"]),
            "tools": {tid: _tool_record(t) for tid, t in chan["tools"].items()},
        }
    return out


def channels_view(actor: Host) -> list[str]:
    return sorted(actor.core.state["channels"])


def network_stats(actor: Host) -> dict[str, float]:
    return {
        "total_peers": len(actor.peers),
        "reachable_peers": len(actor._reachable()),
        "messages_sent": actor.messages_sent,
        "messages_received": actor.messages_received,
        "anonymous_votes_relayed": actor.anonymous_relayed,
        "anonymous_blobs_forwarded": actor.anonymous_forwarded,
        "anonymous_blobs_refused": actor.anonymous_refused,
        "uptime_seconds": round(time.time() - actor.core.started, 3),
        "events_in_log": len(actor.core.log),
        "pending_out_of_order": len(actor.core.log.pending),
        "anti_entropy_interval_s": actor.backoff.interval,
        "anti_entropy_rounds": actor.anti_entropy_rounds,
        "anti_entropy_pulls": actor.anti_entropy_pulls,
        "anti_entropy_resets": actor.backoff.resets,
        "raft_timer_wakes": actor.raft_timer_wakes,
        **actor.core.stats,
    }


def pubsub_stats(actor: Host) -> dict[str, object]:
    me = actor.core.node_id
    channels = [n for n, ch in actor.core.state["channels"].items() if me in ch["participants"]]
    return {
        "total_messages": len(actor.core.log),
        "subscribed_channels": sorted(channels),
        "message_rate": actor.services.message_rate(),
    }


def composite_list(actor: Host) -> dict[str, list[CompositeSummary]]:
    out: list[CompositeSummary] = []
    for chan in actor.core.state["channels"].values():
        for task in chan["composite_tasks"].values():
            out.append(
                {
                    "id": task["id"],
                    "title": task["title"],
                    "status": task["status"],
                    "team_size": len(task["team_members"]),
                    "required_team_size": task["required_team_size"],
                }
            )
    return {"composite_tasks": sorted(out, key=lambda t: t["id"])}


def composite_detail(actor: Host, task_id: str) -> dict[str, object]:
    state = actor.core.state
    chan = state["composite_index"].get(task_id)
    if chan is None:
        raise Reject(f"composite task {task_id} not found", 404)
    task = copy.deepcopy(state["channels"][chan]["composite_tasks"][task_id])
    return {**task, "applicants": sorted(task["applicants"])}


def skills_view(actor: Host, node_id: str | None = None) -> dict[str, object]:
    who = node_id or actor.core.node_id
    profile: Skills = actor.core.state["skills"].get(who, {"skills": [], "bio": ""})
    return {"node_id": who, **profile}


def proposal_details(actor: Host, proposal_id: str) -> dict[str, Any]:
    return _proposal_record(find_proposal(actor.core.state, {"proposal_id": proposal_id}))


def treasury_view(actor: Host, channel_id: str) -> TreasuryView:
    state = actor.core.state
    if channel_id not in state["channels"]:
        raise Reject(f"channel {channel_id} not found", 404)
    balance = state["treasuries"].get(channel_id, 0)
    now = state["last_hlc"][0]
    reserved = sum(
        t["monthly_cost_sp"]
        for t in state["channels"][channel_id]["tools"].values()
        if t["status"] == "active" and t["paid_until"] <= now + 7 * 86_400_000
    )
    reserved = min(balance, reserved)
    return {"channel_id": channel_id, "balance": balance, "reserved": reserved, "available": balance - reserved}


def treasuries_view(actor: Host) -> dict[str, dict[str, int]]:
    return {"treasuries": dict(sorted(actor.core.state["treasuries"].items()))}


def config_view(actor: Host) -> dict[str, object]:
    config: Mapping[str, object] = actor.core.state["config"]
    out = {k: config[k] for k in PUBLIC_CONFIG}
    out.update({k: v for k, v in config.items() if k not in PUBLIC_CONFIG})
    return out


def config_history(actor: Host) -> dict[str, list[ConfigChange]]:
    return {"changes": list(actor.core.state["config_history"])}


def task_view(actor: Host, task_id: str) -> Task:
    state = actor.core.state
    chan = state["task_index"].get(task_id)
    if chan is None:
        raise Reject(f"task {task_id} not found", 404)
    return _task_record(state["channels"][chan]["tasks"][task_id])


def economy_view(actor: Host) -> dict[str, int]:
    state = actor.core.state
    return {
        "minted": state["minted"],
        "burned": state["burned"],
        "balances": sum(n["balance"] for n in state["nodes"].values()),
        "treasuries": sum(state["treasuries"].values()),
        "escrow": sum(state["escrow"].values()),
    }


def digest_view(actor: Host) -> dict[str, object]:
    state = actor.core.state
    return {
        "digest": digest({k: v for k, v in state.items() if k not in ("applied", "rejected")}),
        "events": len(actor.core.log),
    }


VIEWS: dict[str, Callable[..., Any]] = {
    "state": state_view,
    "channels": channels_view,
    "network_stats": network_stats,
    "pubsub_stats": pubsub_stats,
    "composite_list": composite_list,
    "composite_detail": composite_detail,
    "skills": skills_view,
    "proposal_details": proposal_details,
    "treasury": treasury_view,
    "treasuries": treasuries_view,
    "config": config_view,
    "config_history": config_history,
    "task": task_view,
    "economy": economy_view,
    "digest": digest_view,
}
