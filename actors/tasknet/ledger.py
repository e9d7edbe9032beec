"""The folded network state and the helpers every rule uses (balances, escrow, reputation).

Economy invariant, checked after every applied event:
    sum(balances) + sum(treasuries) + sum(escrow) == minted - burned
Points are minted only by the faucet of a new identity's join; tool costs are burned.
"""

from __future__ import annotations

import math
from typing import Any

from actors.tasknet.records import Channel, NetworkConfig, NetworkState, NodeRecord, Payload

DEFAULT_CHANNEL = "general"

DEFAULT_CONFIG: NetworkConfig = {
    "task_completion_tax": 0.02,
    "proposal_voting_period": 86_400,
    "validator_set": [],
    "updated_at": None,
    "faucet_sp": 1000,
    "task_completion_reputation_reward": 10,
    "reputation_reward_per_sp": 10,
    "tiers": {"novice": [0, 1.0], "intermediate": [50, 1.5], "expert": [150, 2.0]},
    "max_auction_deadline_hours": 720,
    "proposal_quorum": 0.5,
    "min_anonymity_set": 3,
    "min_validators": 1,
    "claim_timeout_hours": 168,
    "completion_auto_accept_hours": 72,
    "auction_select_window_hours": 72,
}
CHANGEABLE_CONFIG = {
    "task_completion_tax": (float, 0.0, 0.5),
    "proposal_voting_period": (int, 60, 30 * 86_400),
    "task_completion_reputation_reward": (int, 0, 100),
    "reputation_reward_per_sp": (int, 1, 1_000_000),
    "proposal_quorum": (float, 0.0, 1.0),
    "min_anonymity_set": (int, 1, 100_000),
    "min_validators": (int, 1, 64),
    "claim_timeout_hours": (int, 1, 8760),
    "completion_auto_accept_hours": (int, 1, 8760),
    "auction_select_window_hours": (int, 1, 8760),
}


class Reject(Exception):
    """An event (or request) the state machine refuses; `status` is the API status for it."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def new_state() -> NetworkState:
    return {
        "genesis": None,
        "config": DEFAULT_CONFIG.copy(),
        "config_history": [],
        "nodes": {},
        "channels": {},
        "treasuries": {},
        "escrow": {},
        "minted": 0,
        "burned": 0,
        "skills": {},
        "nullifiers": {},
        "proposal_index": {},
        "task_index": {},
        "composite_index": {},
        "ratified": [],
        "last_ratified_index": 0,
        "validator_history": [],
        "applied": 0,
        "rejected": 0,
        "last_hlc": [0, 0],
    }


def channel(state: NetworkState, name: str) -> Channel:
    ch = state["channels"].get(name)
    if ch is None:
        ch = {"participants": [], "tasks": {}, "proposals": {}, "composite_tasks": {}, "tools": {}}
        state["channels"][name] = ch
        state["treasuries"].setdefault(name, 0)
    return ch


def join_channel(state: NetworkState, name: str, node_id: str) -> None:
    ch = channel(state, name)
    if node_id not in ch["participants"]:
        ch["participants"].append(node_id)
        ch["participants"].sort()


def node(state: NetworkState, node_id: str) -> NodeRecord:
    record = state["nodes"].get(node_id)
    if record is None:
        raise Reject("unknown node: it has not joined the network", 403)
    return record


def need(payload: Payload, name: str, kind: type | tuple[type, ...], *, default: Any = ..., limit: int = 0) -> Any:
    """A payload field of the right type (bools are not integers), else Reject."""
    value = payload.get(name, default)
    if value is ...:
        raise Reject(f"{name} is required")
    if value is default and default is not ...:
        return value
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise Reject(f"{name} must be a number")
    if not isinstance(value, kind):
        raise Reject(f"{name} has the wrong type")
    if limit and isinstance(value, (str, list, dict)) and len(value) > limit:
        raise Reject(f"{name} is too long (at most {limit})")
    return value


def string_list(payload: Payload, name: str, limit: int = 32) -> list[str]:
    values = need(payload, name, list, default=[], limit=limit)
    if not all(isinstance(v, str) and 0 < len(v) <= 64 for v in values):
        raise Reject(f"{name} must be a list of short strings")
    return list(values)


def tax_of(state: NetworkState, amount: int) -> int:
    if amount <= 0:
        return 0
    return min(amount, max(1, round(amount * state["config"]["task_completion_tax"])))


def debit(state: NetworkState, node_id: str, amount: int, escrow_key: str) -> None:
    record = node(state, node_id)
    if amount < 0:
        raise Reject("amounts cannot be negative")
    if record["balance"] < amount:
        raise Reject(f"insufficient balance: {record['balance']} SP available, {amount} SP needed")
    record["balance"] -= amount
    state["escrow"][escrow_key] = state["escrow"].get(escrow_key, 0) + amount


def release(state: NetworkState, escrow_key: str, amount: int, to_node: str | None, to_treasury: str | None) -> None:
    held = state["escrow"].get(escrow_key, 0)
    if amount > held:
        raise Reject("escrow does not hold that much")
    state["escrow"][escrow_key] = held - amount
    if state["escrow"][escrow_key] == 0:
        del state["escrow"][escrow_key]
    if to_node is not None:
        state["nodes"][to_node]["balance"] += amount
    elif to_treasury is not None:
        state["treasuries"][to_treasury] = state["treasuries"].get(to_treasury, 0) + amount


def pay_out(state: NetworkState, escrow_key: str, amount: int, assignee: str, chan: str) -> tuple[int, int]:
    """Move `amount` from escrow: the tax to the channel treasury, the rest to the assignee."""
    tax = tax_of(state, amount)
    release(state, escrow_key, tax, None, chan)
    release(state, escrow_key, amount - tax, assignee, None)
    return amount - tax, tax


def reward_reputation(state: NetworkState, node_id: str, reward: int, tags: list[str], now: int) -> None:
    """Reputation grows with the reward paid for the work, so zero-reward tasks farm nothing."""
    cfg = state["config"]
    gain = min(cfg["task_completion_reputation_reward"], reward // cfg["reputation_reward_per_sp"])
    if gain <= 0:
        return
    rep = state["nodes"][node_id]["reputation"]
    rep["_total"] += gain
    rep["_last_updated"] = now
    for tag in tags:
        rep["tags"][tag] = rep["tags"].get(tag, 0) + gain


def tier_of(state: NetworkState, total: int) -> str:
    best = "novice"
    for name, (floor, _weight) in sorted(state["config"]["tiers"].items(), key=lambda kv: kv[1][0]):
        if total >= floor:
            best = name
    return best


def public_weight(total: int, tag_sum: int | None) -> float:
    weight = 1 + math.log2(total + 1)
    if tag_sum is not None:
        weight += math.log2(tag_sum + 1)
    return round(weight, 6)


def check_invariant(state: NetworkState) -> None:
    held = sum(n["balance"] for n in state["nodes"].values())
    held += sum(state["treasuries"].values()) + sum(state["escrow"].values())
    if held != state["minted"] - state["burned"]:
        raise AssertionError(f"economy invariant broken: {held} held, {state['minted'] - state['burned']} supply")
