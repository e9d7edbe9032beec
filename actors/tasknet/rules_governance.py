"""State-machine rules of membership, skills, proposals, votes, ratification and tools."""

from __future__ import annotations

import base64
from typing import Any, cast

from actors.tasknet import ring
from actors.tasknet.canonical import canonical
from actors.tasknet.identity import node_id_of, verify
from actors.tasknet.ledger import (
    CHANGEABLE_CONFIG,
    DEFAULT_CHANNEL,
    Reject,
    channel,
    join_channel,
    need,
    node,
    public_weight,
    string_list,
    tier_of,
)
from actors.tasknet.records import Ballot, Event, NetworkState, Payload, Proposal, Result, Snapshot, Tool

PROPOSAL_TYPES = ("generic", "config_change", "command", "code_upgrade", "validator_change")
NEEDS_RATIFICATION = ("config_change", "command", "code_upgrade", "validator_change")
VALIDATOR_ACTIONS = ("add", "remove")
MAX_VALIDATORS = 64
TOOL_TYPES = ("api_key", "oauth_token", "webhook")
_verified: dict[str, bool] = {}


def genesis(state: NetworkState, ev: Event, commit: bool) -> Result:
    if state["genesis"] is not None:
        raise Reject("the network already has a genesis")
    if ev["author"] != state.get("genesis_author"):
        raise Reject("only the pinned bootstrap node writes the genesis", 403)
    validators = string_list(ev["payload"], "validators", limit=MAX_VALIDATORS)
    overrides = need(ev["payload"], "config", dict, default={})
    if not validators:
        raise Reject("a genesis names at least one validator")
    if commit:
        state["genesis"] = {"author": ev["author"], "at": ev["hlc"][0], "id": ev["id"]}
        config = cast(dict[str, Any], state["config"])
        config.update({k: v for k, v in overrides.items() if k in config})
        state["config"]["validator_set"] = sorted(set(validators))
        state["config"]["updated_at"] = ev["hlc"][0]
        state["validator_history"] = [{"from_index": 0, "validators": sorted(set(validators)), "proposal_id": None}]
    return {}


def join(state: NetworkState, ev: Event, commit: bool) -> Result:
    if state["genesis"] is None:
        raise Reject("no genesis yet", 503)
    who = ev["author"]
    if who in state["nodes"]:
        raise Reject("already joined")
    p = ev["payload"]
    ring_key = need(p, "ring_key", str, limit=70)
    seal_key = need(p, "seal_key", str, limit=60)
    ring.point(ring_key)
    try:
        if len(base64.b64decode(seal_key, validate=True)) != 32:
            raise ValueError
    except ValueError as exc:
        raise Reject("seal_key must be a base64 X25519 public key") from exc
    faucet = int(state["config"]["faucet_sp"])
    if commit:
        state["nodes"][who] = {
            "id": who,
            "name": need(p, "name", str, default="", limit=64),
            "public_key": ev["key"],
            "ring_key": ring_key,
            "seal_key": seal_key,
            "reputation": {"_total": 0, "_last_updated": ev["hlc"][0], "tags": {}},
            "balance": faucet,
            "joined_at": ev["hlc"][0],
        }
        state["minted"] += faucet
        join_channel(state, DEFAULT_CHANNEL, who)
    return {"node_id": who}


def skills_set(state: NetworkState, ev: Event, commit: bool) -> Result:
    node(state, ev["author"])
    skills = string_list(ev["payload"], "skills", limit=64)
    bio = need(ev["payload"], "bio", str, default="", limit=2000)
    if commit:
        state["skills"][ev["author"]] = {"skills": skills, "bio": bio}
    return {"node_id": ev["author"], "skills": skills, "bio": bio}


def _check_command(command: dict[str, Any]) -> None:
    operation = need(command, "operation", str, limit=64)
    params = need(command, "params", dict)
    if operation == "acquire_common_tool":
        need(params, "channel", str, limit=64)
        need(params, "tool_id", str, limit=64)
        if need(params, "type", str) not in TOOL_TYPES:
            raise Reject(f"tool type must be one of {', '.join(TOOL_TYPES)}")
        if need(params, "monthly_cost_sp", int) < 0 or need(params, "execution_cost_sp", int, default=1) < 0:
            raise Reject("tool costs cannot be negative")
        need(params, "endpoint", str, limit=500)
        if "credentials_to_encrypt" in params:
            raise Reject("credentials travel sealed, never in plaintext")
        sealed = need(params, "credentials_sealed", dict)
        if not all(isinstance(v, str) and len(v) < 4096 for v in sealed.values()):
            raise Reject("credentials_sealed maps node ids to ciphertexts")
    elif operation == "deprecate_common_tool":
        need(params, "channel", str, limit=64)
        need(params, "tool_id", str, limit=64)
    else:
        raise Reject("command operation must be acquire_common_tool or deprecate_common_tool")


def changed_set(state: NetworkState, params: Payload) -> list[str]:
    """The validator set after the one-validator change `params` (`{action, node_id, public_key}`),
    checked against the set in force now: an addition names a node that joined with that key and is
    not a validator, a removal a validator, and the set keeps at least `min_validators`."""
    action = need(params, "action", str)
    node_id = need(params, "node_id", str, limit=64)
    key = need(params, "public_key", str, limit=64)
    if action not in VALIDATOR_ACTIONS:
        raise Reject(f"a validator change is one of {', '.join(VALIDATOR_ACTIONS)} (one validator at a time)")
    try:
        derived = node_id_of(key)
    except ValueError as exc:
        raise Reject("public_key must be a base64 Ed25519 public key") from exc
    if derived != node_id:
        raise Reject("node_id does not derive from public_key")
    current = set(state["config"]["validator_set"])
    if action == "add":
        record = state["nodes"].get(node_id)
        if record is None or record["public_key"] != key:
            raise Reject("only a node that joined the network with that key can become a validator")
        if node_id in current:
            raise Reject(f"{node_id} is already a validator")
        if len(current) >= MAX_VALIDATORS:
            raise Reject(f"the validator set holds at most {MAX_VALIDATORS}")
        return sorted(current | {node_id})
    if node_id not in current:
        raise Reject(f"{node_id} is not a validator")
    floor = int(state["config"].get("min_validators", 1))
    if len(current) - 1 < floor:
        raise Reject(f"the validator set cannot shrink below min_validators ({floor})", 403)
    return sorted(current - {node_id})


def validators_at(state: NetworkState, index: int) -> list[str]:
    """The validator set in force at Raft index `index` (the reduced history of changes)."""
    for epoch in reversed(state.get("validator_history") or []):
        if epoch["from_index"] <= index:
            return epoch["validators"]
    return state["config"]["validator_set"]


def ratifying_set(state: NetworkState, prop: Proposal, index: int) -> list[str]:
    """Whose majority ratifies the Raft entry at `index` for `prop`: a pending validator change's own
    entry is committed under the configuration it creates (Raft uses a configuration as soon as it is
    appended), so the new set; any other entry the set in force at its index."""
    if prop["proposal_type"] == "validator_change" and prop["status"] == "pending_ratification":
        return changed_set(state, prop["params"])
    return validators_at(state, index)


def _check_params(state: NetworkState, kind: str, params: dict[str, Any], command: dict[str, Any] | None) -> None:
    if kind == "validator_change":
        changed_set(state, params)
    elif kind == "config_change":
        key = need(params, "key", str)
        if key not in CHANGEABLE_CONFIG:
            raise Reject(f"config key must be one of {', '.join(sorted(CHANGEABLE_CONFIG))}")
        kind_, low, high = CHANGEABLE_CONFIG[key]
        value = need(params, "value", (int, float) if kind_ is float else int)
        if not low <= value <= high:
            raise Reject(f"{key} must be between {low} and {high}")
    elif kind == "command":
        if command is None:
            raise Reject("a command proposal carries a command object")
        _check_command(command)
    elif kind == "code_upgrade":
        need(params, "version", str, limit=64)
        digest_hex = need(params, "package_hash", str, limit=64)
        if len(digest_hex) != 64 or any(c not in "0123456789abcdef" for c in digest_hex):
            raise Reject("package_hash must be 64 lowercase hex digits (sha256)")
        need(params, "package_b64", str, limit=48_000)


def _snapshot(state: NetworkState, tags: list[str]) -> Snapshot:
    tiers: dict[str, list[list[str]]] = {name: [] for name in state["config"]["tiers"]}
    weights: dict[str, float] = {}
    for node_id, record in sorted(state["nodes"].items()):
        rep = record["reputation"]
        tiers[tier_of(state, rep["_total"])].append([node_id, record["ring_key"]])
        tag_sum = sum(rep["tags"].get(t, 0) for t in tags) if tags else None
        weights[node_id] = public_weight(rep["_total"], tag_sum)
    return {"tiers": tiers, "weights": weights}


def proposal_create(state: NetworkState, ev: Event, commit: bool) -> Result:
    p = ev["payload"]
    node(state, ev["author"])
    title = need(p, "title", str, limit=200).strip()
    kind = need(p, "proposal_type", str, default="generic")
    if not title or kind not in PROPOSAL_TYPES:
        raise Reject(f"a proposal needs a title and proposal_type in {', '.join(PROPOSAL_TYPES)}")
    params = need(p, "params", dict, default={})
    command = p.get("command")
    if command is not None and not isinstance(command, dict):
        raise Reject("command must be an object")
    _check_params(state, kind, params, command)
    tags = string_list(p, "tags")
    pid = ev["id"][:16]
    votes: dict[str, Ballot] = {}
    result: Result = {"id": pid, "title": title, "proposer": ev["author"], "status": "open", "votes": votes}
    result["created_at"] = ev["hlc"][0]
    if commit:
        period_ms = int(state["config"]["proposal_voting_period"]) * 1000
        channel(state, ev["channel"])["proposals"][pid] = {
            "id": pid,
            "title": title,
            "proposer": ev["author"],
            "status": "open",
            "votes": votes,
            "created_at": ev["hlc"][0],
            "description": need(p, "description", str, default="", limit=5000),
            "proposal_type": kind,
            "params": params,
            "command": command,
            "tags": tags,
            "schema_name": need(p, "schema_name", str, default="proposal_v1", limit=64),
            "closes_at": ev["hlc"][0] + period_ms,
            "closed_at": None,
            "outcome": None,
            "anonymous_votes": [],
            "snapshot": _snapshot(state, tags),
            "channel": ev["channel"],
        }
        state["proposal_index"][pid] = ev["channel"]
        state["nullifiers"][pid] = []
    return result


def proposal(state: NetworkState, payload: Payload) -> Proposal:
    pid = need(payload, "proposal_id", str, limit=64)
    chan = state["proposal_index"].get(pid)
    if chan is None:
        raise Reject(f"proposal {pid} not found", 404)
    return state["channels"][chan]["proposals"][pid]


def _vote_value(payload: Payload) -> str:
    vote = need(payload, "vote", str)
    if vote not in ("yes", "no"):
        raise Reject("vote must be yes or no")
    return str(vote)


def _open(prop: Proposal) -> None:
    if prop["status"] != "open":
        raise Reject(f"proposal is {prop['status']}")


def _in_period(prop: Proposal, ev: Event) -> None:
    _open(prop)
    if ev["hlc"][0] >= prop["closes_at"]:
        raise Reject("the voting period is over", 403)


def _fresh_image(state: NetworkState, prop: Proposal, image: str) -> None:
    """One identity, one vote: a key image (public or anonymous) is used once per proposal."""
    if image in state["nullifiers"][prop["id"]]:
        raise Reject("this key already voted on the proposal (nullifier used)", 403)


def _verified_ring(key: str, members: list[str], context: str, message: bytes, signature: dict[str, Any]) -> bool:
    ok = _verified.get(key)
    if ok is None:
        ok = bool(members) and ring.verify(members, context.encode(), message, signature)
        if len(_verified) > 100_000:
            _verified.clear()
        _verified[key] = ok
    return ok


def vote(state: NetworkState, ev: Event, commit: bool) -> Result:
    """A public vote: it carries the voter's key image for the proposal and a ring-of-one proof
    that the image is the voter's, so an anonymous vote by the same key is refused and vice versa."""
    p = ev["payload"]
    prop = proposal(state, p)
    value = _vote_value(p)
    voter = ev["author"]
    _in_period(prop, ev)
    weight = prop["snapshot"]["weights"].get(voter)
    if weight is None:
        raise Reject("only nodes known when the proposal opened may vote", 403)
    if voter in prop["votes"]:
        raise Reject("already voted")
    image = need(p, "key_image", str, limit=70)
    proof = need(p, "proof", dict)
    if image in state["nullifiers"][prop["id"]]:
        raise Reject("already voted on this proposal (its key image is used)", 403)
    signature = {"key_image": image, "c0": need(proof, "challenge", str), "s": need(proof, "response", list)}
    own = [state["nodes"][voter]["ring_key"]]
    if not _verified_ring(ev["id"], own, prop["id"], public_message(prop["id"], value, voter), signature):
        raise Reject("the key image proof does not verify for this voter and vote", 403)
    if commit:
        state["nullifiers"][prop["id"]].append(image)
        ballot: Ballot = {"vote": value, "weight": weight, "anonymous": False, "at": ev["hlc"][0], "key_image": image}
        prop["votes"][voter] = ballot
    return {"proposal_id": prop["id"], "voter": voter, "vote": value}


def anonymous_message(proposal_id: str, value: str, tier: str) -> bytes:
    return canonical({"proposal_id": proposal_id, "vote": value, "tier": tier})


def public_message(proposal_id: str, value: str, voter: str) -> bytes:
    return canonical({"proposal_id": proposal_id, "vote": value, "voter": voter, "public": True})


def ring_for(prop: Proposal, tier: str) -> list[str]:
    return [key for _node, key in prop["snapshot"]["tiers"].get(tier, [])]


def anon_vote(state: NetworkState, ev: Event, commit: bool) -> Result:
    prop = proposal(state, ev["payload"])
    value = _vote_value(ev["payload"])
    proof = need(ev["payload"], "zkp_proof", dict)
    tier = need(proof, "tier", str, limit=32)
    _in_period(prop, ev)
    if tier not in state["config"]["tiers"]:
        raise Reject("unknown tier")
    weight = float(state["config"]["tiers"][tier][1])
    if need(proof, "tier_weight", (int, float)) != weight:
        raise Reject("tier_weight does not match the tier", 403)
    image = need(proof, "commitment", str, limit=70)
    if image in state["nullifiers"][prop["id"]]:
        raise Reject("already voted on this proposal (nullifier used)", 403)
    members = ring_for(prop, tier)
    floor = int(state["config"]["min_anonymity_set"])
    if len(members) < floor:
        raise Reject(f"the anonymity set of the {tier} tier has {len(members)} members, fewer than {floor}", 403)
    signature = {"key_image": image, "c0": need(proof, "challenge", str), "s": need(proof, "response", list)}
    if not _verified_ring(ev["id"], members, prop["id"], anonymous_message(prop["id"], value, tier), signature):
        raise Reject("the zero-knowledge proof does not verify for that tier", 403)
    if commit:
        state["nullifiers"][prop["id"]].append(image)
        prop["anonymous_votes"].append({"vote": value, "tier": tier, "weight": weight, "nullifier": image})
    return {"proposal_id": prop["id"], "voter": "anonymous", "vote": value}


def tally(prop: Proposal) -> tuple[float, float]:
    ballots = list(prop["votes"].values()) + prop["anonymous_votes"]
    yes = sum(b["weight"] for b in ballots if b["vote"] == "yes")
    no = sum(b["weight"] for b in ballots if b["vote"] == "no")
    return round(yes, 6), round(no, 6)


def turnout(prop: Proposal) -> float:
    """The weight of the ballots cast, as a share of the proposal's snapshot weight."""
    total = sum(prop["snapshot"]["weights"].values())
    yes, no = tally(prop)
    return round((yes + no) / total, 6) if total > 0 else 0.0


def proposal_close(state: NetworkState, ev: Event, commit: bool) -> Result:
    """Anyone closes once the voting period is over, the proposer included, nobody before it.
    Approval needs the quorum (a share of the snapshot weight) and more yes than no."""
    prop = proposal(state, ev["payload"])
    node(state, ev["author"])
    _open(prop)
    if ev["hlc"][0] < prop["closes_at"]:
        raise Reject("the voting period is not over; nobody closes a proposal early (the proposer may withdraw)", 403)
    yes, no = tally(prop)
    share = turnout(prop)
    quorum = share >= float(state["config"]["proposal_quorum"])
    consent = _validator_consent(state, prop)
    result = "approved" if quorum and yes > no and consent else "rejected"
    if commit:
        prop.update({"outcome": result, "closed_at": ev["hlc"][0], "turnout": share, "quorum_reached": quorum})
        if prop["proposal_type"] == "generic":
            prop["status"] = "closed"
        else:
            prop["status"] = "pending_ratification" if result == "approved" else "rejected"
    out: Result = {"proposal_id": prop["id"], "result": result, "yes_votes": yes, "no_votes": no}
    return {**out, "turnout": share, "quorum_reached": quorum}


def _validator_consent(state: NetworkState, prop: Proposal) -> bool:
    """A validator change also needs public yes votes of a majority of the validators in force: new
    identities are free to make, so votes of fresh sybils alone never change who orders commands."""
    if prop["proposal_type"] != "validator_change":
        return True
    validators = state["config"]["validator_set"]
    yes = sum(1 for v in validators if v in prop["votes"] and prop["votes"][v]["vote"] == "yes")
    return yes > len(validators) // 2


def proposal_withdraw(state: NetworkState, ev: Event, commit: bool) -> Result:
    prop = proposal(state, ev["payload"])
    if ev["author"] != prop["proposer"]:
        raise Reject("only the proposer withdraws a proposal", 403)
    _open(prop)
    if commit:
        prop.update({"status": "withdrawn", "closed_at": ev["hlc"][0], "outcome": "withdrawn"})
    return {"proposal_id": prop["id"], "status": "withdrawn"}


def _change_validators(state: NetworkState, prop: Proposal, ev: Event, proof: dict[str, str]) -> None:
    """Apply a ratified validator change; the epoch keeps the signatures that ratified it (with the
    signers' keys), so a node with no state can follow the set from the genesis (checkpoint.py)."""
    index, term, at = int(ev["payload"]["raft_index"]), int(ev["payload"]["term"]), ev["hlc"][0]
    old = state["config"]["validator_set"]
    new = changed_set(state, prop["params"])
    history = state.setdefault("validator_history", [{"from_index": 0, "validators": old, "proposal_id": None}])
    signed = {s: [state["nodes"][s]["public_key"], sig] for s, sig in sorted(proof.items())}
    history.append({"from_index": index, "validators": new, "proposal_id": prop["id"], "term": term, "proof": signed})
    state["config"]["validator_set"] = new
    state["config"]["updated_at"] = at
    state["config_history"].append(
        {"key": "validator_set", "old_value": old, "new_value": new, "changed_at": at, "changed_by": prop["id"]}
    )


def _execute(state: NetworkState, prop: Proposal, at: int) -> bool:
    kind = prop["proposal_type"]
    if kind == "config_change":
        key, value = prop["params"]["key"], prop["params"]["value"]
        config = cast(dict[str, Any], state["config"])  # a changeable key, checked at proposal time
        old = config[key]
        config[key] = value
        state["config"]["updated_at"] = at
        state["config_history"].append(
            {"key": key, "old_value": old, "new_value": value, "changed_at": at, "changed_by": prop["id"]}
        )
        return True
    if kind == "code_upgrade":
        return True
    command = prop["command"]
    if command is None:
        return False
    params = command["params"]
    tools = channel(state, params["channel"])["tools"]
    if command["operation"] == "deprecate_common_tool":
        if params["tool_id"] not in tools:
            return False
        tools[params["tool_id"]]["status"] = "deprecated"
        return True
    if params["tool_id"] in tools and tools[params["tool_id"]]["status"] != "deprecated":
        return False
    tools[params["tool_id"]] = {
        "tool_id": params["tool_id"],
        "channel": params["channel"],
        "description": params.get("description", ""),
        "type": params["type"],
        "endpoint": params["endpoint"],
        "monthly_cost_sp": params["monthly_cost_sp"],
        "execution_cost_sp": params.get("execution_cost_sp", 1),
        "credentials_sealed": params["credentials_sealed"],
        "status": "inactive_funding_issue",
        "paid_until": at,
        "executions": 0,
    }
    bill_tool(state, tools[params["tool_id"]], at)
    return True


MONTH_MS = 30 * 86_400_000


def bill_tool(state: NetworkState, tool: Tool, at: int) -> None:
    """Charge the monthly cost from the channel treasury when the paid period is over."""
    if tool["status"] == "deprecated" or at < tool["paid_until"]:
        return
    cost = tool["monthly_cost_sp"]
    if state["treasuries"].get(tool["channel"], 0) < cost:
        tool["status"] = "inactive_funding_issue"
        return
    state["treasuries"][tool["channel"]] -= cost
    state["burned"] += cost
    tool["paid_until"] = at + MONTH_MS
    tool["status"] = "active"


def ratify_message(proposal_id: str, raft_index: int, term: int) -> bytes:
    """What each validator signs once the Raft entry for `proposal_id` committed at (index, term)."""
    return canonical(
        {"purpose": "tasknet-ratify-v1", "proposal_id": proposal_id, "raft_index": raft_index, "term": term}
    )


def majority_signers(
    state: NetworkState, validators: list[str], message: bytes, signatures: dict[str, Any]
) -> list[str]:
    """The `validators` whose signature over `message` verifies; Reject unless they are a majority."""
    signers = sorted(
        v
        for v, sig in signatures.items()
        if v in validators
        and v in state["nodes"]
        and isinstance(sig, str)
        and verify(state["nodes"][v]["public_key"], message, sig)
    )
    if len(signers) <= len(validators) // 2:
        raise Reject(
            f"a ratification needs signatures of a majority of the {len(validators)} validators; "
            f"{len(signers)} verified",
            403,
        )
    return signers


def ratified(state: NetworkState, ev: Event, commit: bool) -> Result:
    """A Raft entry ratified: signatures of a majority of the validator set in force at its index."""
    p = ev["payload"]
    index = need(p, "raft_index", int)
    term = need(p, "term", int)
    signatures = need(p, "signatures", dict, limit=256)
    prop = proposal(state, p)
    validators = ratifying_set(state, prop, index)
    if ev["author"] not in validators:
        raise Reject("only validators write ratifications", 403)
    signers = majority_signers(state, validators, ratify_message(prop["id"], index, term), signatures)
    if index <= state["last_ratified_index"]:
        raise Reject("this Raft entry was already applied")
    if prop["status"] != "pending_ratification":
        raise Reject(f"proposal is {prop['status']}, not pending_ratification")
    if not commit:
        return {"proposal_id": prop["id"], "executed": False}
    state["last_ratified_index"] = index
    if prop["proposal_type"] == "validator_change":
        _change_validators(state, prop, ev, {s: signatures[s] for s in signers})
        executed = True
    else:
        executed = _execute(state, prop, ev["hlc"][0])
    prop["status"] = ("ratified" if prop["proposal_type"] == "code_upgrade" else "executed") if executed else "failed"
    prop["ratified_at"] = ev["hlc"][0]
    prop["ratified_by"] = ev["payload"].get("ratified_by", ev["author"])
    state["ratified"].append(
        {"raft_index": index, "proposal_id": prop["id"], "executed": executed, "at": ev["hlc"][0], "signers": signers}
    )
    return {"proposal_id": prop["id"], "executed": executed}


def tool_executed(state: NetworkState, ev: Event, commit: bool) -> Result:
    p = ev["payload"]
    tool_id = need(p, "tool_id", str, limit=64)
    task_id = need(p, "task_id", str, limit=64)
    chan = state["task_index"].get(task_id)
    if chan is None:
        raise Reject(f"task {task_id} not found", 404)
    task = state["channels"][chan]["tasks"][task_id]
    tool = state["channels"][chan]["tools"].get(tool_id)
    if tool is None:
        raise Reject(f"tool {tool_id} not found in channel {chan}", 404)
    if task["assignee"] != ev["author"] or task["status"] not in ("claimed", "in_progress"):
        raise Reject("only the assignee of a claimed task uses its tools", 403)
    if tool_id not in task["required_tools"]:
        raise Reject("the task does not list this tool in required_tools", 403)
    if tool["status"] == "deprecated":
        raise Reject("tool is deprecated", 403)
    cost = tool["execution_cost_sp"]
    monthly_due = tool["monthly_cost_sp"] if ev["hlc"][0] >= tool["paid_until"] else 0
    if state["treasuries"].get(chan, 0) < cost + monthly_due:
        raise Reject("the channel treasury cannot pay for this tool", 403)
    if commit:
        bill_tool(state, tool, ev["hlc"][0])
        state["treasuries"][chan] -= cost
        state["burned"] += cost
        tool["executions"] += 1
    return {"tool_id": tool_id, "execution_cost_sp": cost}
