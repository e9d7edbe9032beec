"""Node-local services the API calls through the actor: voting, ratification, tools,
and the agent, upgrade, evolution and signalling subsystems (each in its own module)."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections import deque
from typing import Any, Protocol, TypedDict, cast
from urllib.parse import urlsplit

import httpx

from actors.tasknet.agent import ActionOutcome, Agent
from actors.tasknet.evolution import Analysis, Evolution
from actors.tasknet.ledger import Reject
from actors.tasknet.node import NodeCore
from actors.tasknet.records import Event, ZkpProof
from actors.tasknet.reducer import validate
from actors.tasknet.rules_governance import proposal as find_proposal
from actors.tasknet.sealing import seal
from actors.tasknet.settings import NodeSettings
from actors.tasknet.signalling import Signalling, Transport
from actors.tasknet.upgrades import Upgrades


def _loopback_only(url: str, allowed_hosts: list[str]) -> None:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https"):
        raise Reject("tool endpoint must be http(s)")
    try:
        ok = ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok and host not in allowed_hosts:
        raise Reject("tool endpoint host is not allowed", 403)


class Relayed(TypedDict):
    """How an anonymous vote entered the network (told to the voter only)."""

    relayed_through: str  # the first relay (with one hop, the node that entered it)
    exit_relay: str | None  # the relay that opened and entered it; None with one hop
    relay_hops: int  # 2, or 1 with fewer than MIN_PEERS_TWO_HOPS (anonrelay.py) reachable peers


class Host(Transport, Protocol):
    """What the services use of the node actor (TaskNode): signalling's transport and the Raft proposer."""

    async def raft_propose(self, data: dict[str, Any]) -> dict[str, Any]: ...

    async def relay_anonymous(self, event: Event) -> Relayed: ...


class NodeServices:
    def __init__(self, core: NodeCore, settings: NodeSettings) -> None:
        self.core = core
        self.settings = settings
        self.last_analysis: Analysis = {}
        self.received_at: deque[float] = deque(maxlen=10_000)
        self.propagation_ms: deque[float] = deque(maxlen=5000)
        self.commit_ms: deque[float] = deque(maxlen=1000)
        self.apply_ms: deque[float] = deque(maxlen=5000)
        self.agent = Agent(core, settings.get("llm", {}), settings.get("agent", {}))
        self.upgrades = Upgrades(core, settings.get("upgrades", {}))
        self.evolution = Evolution(core, self, settings.get("llm", {}))
        self.signalling = Signalling(core, settings.get("webrtc", {}))
        self._http: httpx.AsyncClient | None = None

    # ----- observations (metrics the evolution engine reads)
    def observe_propagation(self, fresh: list[Event]) -> None:
        now = time.time()
        for event in fresh:
            self.received_at.append(now)
            self.propagation_ms.append(max(0.0, now * 1000 - event["hlc"][0]))

    def observe_commits(self, waiters: dict[str, float]) -> None:
        done = [pid for pid in waiters if pid in {r["proposal_id"] for r in self.core.state["ratified"]}]
        for pid in done:
            self.commit_ms.append((time.perf_counter() - waiters.pop(pid)) * 1000)

    def message_rate(self) -> float:
        cutoff = time.time() - 60
        return round(sum(1 for t in self.received_at if t >= cutoff) / 60.0, 3)

    # ----- voting
    async def vote(
        self, actor: Host, proposal_id: str, vote: str, anonymous: bool, zkp_proof: ZkpProof | None
    ) -> dict[str, Any]:
        prop = find_proposal(self.core.state, {"proposal_id": proposal_id})
        if vote not in ("yes", "no"):
            raise Reject("vote must be yes or no")
        if not anonymous:
            payload = self.core.public_vote_payload(proposal_id, vote)
            _, result = self.core.submit("vote", payload, prop["channel"])
            return result
        proof = (
            zkp_proof
            if zkp_proof is not None
            else await asyncio.to_thread(self.core.anonymous_proof, proposal_id, vote)
        )
        event, result = self.core.anonymous_event(proposal_id, vote, proof, prop["channel"])
        try:
            relayed = await actor.relay_anonymous(event)
        except Reject:  # no relay took it: the voter may retry with the same key
            self.core.relayed_images.discard(str(proof.get("commitment")))
            raise
        return {**result, **relayed}

    async def zkp_proof(self, actor: Host, proposal_id: str, vote: str) -> dict[str, Any]:
        if vote not in ("yes", "no"):
            raise Reject("vote must be yes or no")
        proof = await asyncio.to_thread(self.core.anonymous_proof, proposal_id, vote)
        record = self.core.state["nodes"].get(self.core.node_id)
        return {
            "proof": proof,
            "current_reputation": record["reputation"]["_total"] if record else 0,
            "message": f"ring signature over the {proof['tier']} tier for a {vote} vote on {proposal_id}",
        }

    # ----- ratification through Raft
    async def ratify(self, actor: Host, proposal_id: str) -> dict[str, Any]:
        state = self.core.state
        if self.core.node_id not in state["config"]["validator_set"]:
            raise Reject("only validators ratify", 403)
        prop = find_proposal(state, {"proposal_id": proposal_id})
        if prop["status"] != "pending_ratification":
            raise Reject(f"proposal is {prop['status']}, not pending_ratification")
        timeout = float(self.settings.get("ratify_timeout_s", 10))
        deadline = time.monotonic() + timeout
        while True:
            answer = await actor.raft_propose(
                {"proposal_id": proposal_id, "channel": prop["channel"], "by": self.core.node_id}
            )
            if "error" not in answer:
                break
            if time.monotonic() > deadline or not answer.get("retry", True):
                raise Reject(answer["error"], answer["status"])
            await asyncio.sleep(0.1)
        while time.monotonic() < deadline:
            prop = find_proposal(self.core.state, {"proposal_id": proposal_id})
            if prop["status"] != "pending_ratification":
                executed = prop["status"] in ("executed", "ratified")
                if executed and prop["proposal_type"] == "code_upgrade":
                    await self.upgrades.apply_ratified(prop)
                return {"proposal_id": proposal_id, "executed": executed, "status": prop["status"]}
            await asyncio.sleep(0.05)
        raise Reject("the ratification did not commit in time; the network may lack a quorum", 503)

    # ----- tools
    def seal_command(self, command: dict[str, Any]) -> dict[str, Any]:
        """Replace `credentials_to_encrypt` by one sealed copy per participant of the tool's channel."""
        params = dict(command.get("params") or {})
        secret = params.pop("credentials_to_encrypt", None)
        if command.get("operation") != "acquire_common_tool" or secret is None:
            return {**command, "params": params}
        if not isinstance(secret, str) or not secret or len(secret) > 2048:
            raise Reject("credentials_to_encrypt must be a non-empty string")
        chan = params.get("channel")
        if not isinstance(chan, str) or chan not in self.core.state["channels"]:
            raise Reject("the tool's channel does not exist", 404)
        tool_id = str(params.get("tool_id", ""))
        nodes = self.core.state["nodes"]
        sealed = {
            member: seal(nodes[member]["seal_key"], secret.encode(), f"tool:{chan}:{tool_id}:{member}")
            for member in self.core.state["channels"][chan]["participants"]
            if member in nodes
        }
        return {**command, "params": {**params, "credentials_sealed": sealed}}

    async def seal_command_service(self, actor: Host, command: dict[str, Any]) -> dict[str, Any]:
        return self.seal_command(command)

    async def tool_execute(self, actor: Host, tool_id: str, task_id: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        state = self.core.state
        chan = state["task_index"].get(task_id)
        if chan is None:
            raise Reject(f"task {task_id} not found", 404)
        payload = {"tool_id": tool_id, "task_id": task_id}
        probe: Event = {
            "author": self.core.node_id,
            "key": "",
            "seq": 0,
            "hlc": [int(time.time() * 1000), 0],
            "channel": chan,
            "type": "tool_executed",
            "payload": payload,
            "prev": "",
            "sig": "",
            "id": "",
        }
        validate(state, probe)
        tool = state["channels"][chan]["tools"][tool_id]
        blob = tool["credentials_sealed"].get(self.core.node_id)
        if blob is None:
            raise Reject("this node holds no sealed copy of the tool's credentials", 403)
        _loopback_only(tool["endpoint"], list(self.settings.get("tool_allowed_hosts", [])))
        credential = self.core.seal_key.open(blob, f"tool:{chan}:{tool_id}:{self.core.node_id}").decode()
        headers = (
            {"Authorization": f"Bearer {credential}"} if tool["type"] != "webhook" else {"X-Webhook-Secret": credential}
        )
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=float(self.settings.get("tool_timeout_s", 10)), trust_env=False)
        try:
            response = await self._http.post(tool["endpoint"], json=tool_input, headers=headers)
        except httpx.HTTPError as exc:
            raise Reject(f"tool endpoint unreachable: {type(exc).__name__}", 503) from exc
        if response.status_code >= 400:
            raise Reject(f"tool endpoint answered {response.status_code}", 503)
        try:
            result: Any = response.json()
        except ValueError:
            result = response.text[:10_000]
        _, billed = self.core.submit("tool_executed", payload, chan)
        return {"result": result, "tool_id": tool_id, "execution_cost_sp": billed["execution_cost_sp"]}

    # ----- delegations
    async def agent_context(self, actor: Host) -> dict[str, Any]:
        return {"system_prompt": self.agent.system_prompt(), "enabled": self.agent.enabled}

    async def agent_record(self, actor: Host, executed: list[ActionOutcome], generated: int) -> dict[str, Any]:
        self.agent.record(executed, generated)
        return {}

    async def agent_objectives(self, actor: Host, objectives: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.agent.objectives(objectives)

    async def agent_status(self, actor: Host) -> dict[str, Any]:
        return self.agent.status()

    async def upgrade(self, actor: Host, action: str, **kwargs: Any) -> dict[str, Any]:
        return cast(dict[str, Any], await getattr(self.upgrades, action)(**kwargs))

    async def evolve(self, actor: Host, action: str, **kwargs: Any) -> dict[str, Any]:
        return cast(dict[str, Any], await getattr(self.evolution, action)(**kwargs))

    async def signal(self, actor: Host, action: str, **kwargs: Any) -> dict[str, Any]:
        return cast(dict[str, Any], await getattr(self.signalling, action)(actor, **kwargs))

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()
        await self.agent.close()
        await self.signalling.close()
