"""The outbound side of HTTP peering: one link per configured remote node (`peers` in the settings).

A link joins the remote node (`POST <url>/peer/join`, answered by an envelope the remote signs,
so a pinned `node_id` is checked), then carries the node's pushes (`/peer/events`) and pulls
(`/peer/pull`); when the remote node is a validator, Raft messages (`/peer/raft`, answered by
the remote's Raft answers) and attestations (`/peer/attest`); and sealed anonymous votes, for the
remote as their first relay (`/peer/forward`) or as their exit (`/peer/anonymous`). The node actor
decides what to send (its gossip and anti-entropy code); the link only signs, posts and reads the answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from actors.tasknet.identity import Identity
from actors.tasknet.ledger import Reject
from actors.tasknet.peering import (
    MAX_ATTESTATIONS,
    MAX_PULL_EVENTS,
    MAX_RAFT_ANSWER,
    check_propose_answer,
    check_raft_message,
    envelope,
    open_envelope,
)
from actors.tasknet.raft import RaftMessage

MAX_ANSWER_BYTES = MAX_PULL_EVENTS * 80 * 1024
"""A pull answer holds at most MAX_PULL_EVENTS events of at most 64 KiB each (with JSON overhead)."""


@dataclass(frozen=True)
class Pulled:
    events: list[Any]
    vector: dict[str, int] | None
    anon_ids: list[str]


class PeerLink:
    def __init__(
        self, url: str, pinned_id: str | None, identity: Identity, now_ms: Callable[[], int], timeout_s: float = 5.0
    ) -> None:
        self.url = url
        self.pinned_id = pinned_id
        self.identity = identity
        self.now_ms = now_ms
        self.remote_id: str | None = None
        self.genesis_author: str | None = None
        self.client = httpx.AsyncClient(timeout=timeout_s, trust_env=False)
        self.last_error = ""
        self.pushed = 0
        self.pulled = 0
        self.failures = 0
        self.raft_sent = 0
        self.proposed = 0

    @property
    def name(self) -> str:
        """The sender name its events are forwarded under (`peer:<remote id>`), the URL until joined."""
        return f"peer:{self.remote_id or self.url}"

    async def _post(self, route: str, to: str, body: dict[str, Any]) -> Any:
        """POST a signed envelope; the JSON answer, or None (recorded in `last_error`) for a failure, a
        non-200 answer or one over MAX_ANSWER_BYTES (read no further)."""
        signed = envelope(self.identity, route, to, body, self.now_ms())
        try:
            async with self.client.stream("POST", f"{self.url}/peer/{route}", json=signed) as response:
                data = bytearray()
                async for chunk in response.aiter_bytes():
                    data += chunk
                    if len(data) > MAX_ANSWER_BYTES:
                        return self.failed(route, f"answer over {MAX_ANSWER_BYTES} bytes")
        except httpx.HTTPError as exc:
            return self.failed(route, type(exc).__name__)
        if response.status_code != 200:
            return self.failed(route, f"{response.status_code} {bytes(data[:200]).decode(errors='replace')}")
        try:
            return json.loads(data)
        except ValueError:
            return self.failed(route, "answer is not JSON")

    def failed(self, route: str, why: str) -> None:
        self.failures += 1
        self.last_error = f"{route}: {why}"
        return None

    async def join(self, own_url: str | None, genesis_author: str | None) -> bool:
        """Present this node to the remote one; True once the remote's signed answer checks out and
        names the same genesis author (a node of another network is not peered with)."""
        answer = await self._post("join", self.pinned_id or "", {"url": own_url})
        if answer is None:
            return False
        try:
            opened = open_envelope(answer, "joined", self.identity.node_id, self.now_ms())
        except Reject as exc:
            self.last_error = f"join answer refused: {exc.message}"
            return False
        if self.pinned_id and opened.sender != self.pinned_id:
            self.last_error = "join answer signed by another node than the pinned node_id"
            return False
        genesis = opened.body.get("genesis_author")
        self.genesis_author = genesis if isinstance(genesis, str) else None
        if genesis_author and self.genesis_author and self.genesis_author != genesis_author:
            self.last_error = f"the remote node belongs to another network (genesis author {self.genesis_author})"
            return False
        self.remote_id = opened.sender
        self.last_error = ""
        return True

    async def push(self, events: list[Any], checkpoints: list[Any] | None = None) -> bool:
        """Events (and checkpoint signatures, the validators' own) for the remote node."""
        if self.remote_id is None:
            return False
        body: dict[str, Any] = {"events": events}
        if checkpoints:
            body["checkpoints"] = checkpoints
        answer = await self._post("events", self.remote_id, body)
        if answer is not None:
            self.pushed += len(events)
        return answer is not None

    async def checkpoint_after(self, horizon: int) -> Any:
        """The remote's certified checkpoint when newer than `horizon` (checked by the caller), else None."""
        if self.remote_id is None:
            return None
        answer = await self._post("checkpoint", self.remote_id, {"horizon": horizon})
        return answer.get("checkpoint") if isinstance(answer, dict) else None

    async def pull(self, vector: dict[str, int], anon_ids: list[str], heads: dict[str, str]) -> Pulled:
        """What this node lacks from the remote one, and the remote's own version vector and anonymous ids
        (so this node can push back what the remote lacks: push-pull anti-entropy)."""
        if self.remote_id is None:
            return Pulled([], None, [])
        answer = await self._post("pull", self.remote_id, {"vector": vector, "anon_ids": anon_ids, "heads": heads})
        if not isinstance(answer, dict) or not isinstance(answer.get("events"), list):
            return Pulled([], None, [])
        events: list[Any] = answer["events"]
        self.pulled += len(events)
        theirs, their_anon = answer.get("vector"), answer.get("anon_ids")
        valid = isinstance(theirs, dict) and all(isinstance(k, str) and type(v) is int for k, v in theirs.items())
        anon: list[str] = (
            their_anon if isinstance(their_anon, list) and all(isinstance(i, str) for i in their_anon) else []
        )
        return Pulled(events, theirs if valid else None, anon)

    async def raft(self, message: RaftMessage) -> list[RaftMessage] | None:
        """A Raft message for the remote node (a validator, or one catching up as a learner); the
        messages the remote's Raft answered with, in an envelope the remote signed, each checked (well
        formed, from that node, for this one: the others are left out and recorded), or None when it
        did not answer."""
        body = await self._signed_answer("raft", "raft_answer", {"message": dict(message)})
        if body is None:
            return None
        self.raft_sent += 1
        messages = body.get("messages")
        checked = []
        for raw in messages[:MAX_RAFT_ANSWER] if isinstance(messages, list) else []:
            try:
                checked.append(check_raft_message(raw, str(self.remote_id), self.identity.node_id))
            except Reject as exc:
                self.failed("raft", f"answer refused: {exc.message}")
        return checked

    async def _signed_answer(self, route: str, answer_route: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """POST `body` to `route`; the body of the answer envelope (route `answer_route`) when the joined
        remote node signed it for this node, else None (recorded in `last_error`)."""
        if self.remote_id is None:
            return None
        answer = await self._post(route, self.remote_id, body)
        if answer is None:
            return None
        try:
            opened = open_envelope(answer, answer_route, self.identity.node_id, self.now_ms())
        except Reject as exc:
            self.failed(route, f"answer refused: {exc.message}")
            return None
        if opened.sender != self.remote_id:
            self.failed(route, "answer signed by another node than the joined one")
            return None
        return opened.body

    async def propose(self, data: dict[str, Any]) -> dict[str, Any] | None:
        """Forward a proposal to the remote node, the Raft leader: its signed answer, `{index, leader}`
        or the refusal `{error, status, retry}` it gives a local proposal; None when it did not answer."""
        body = await self._signed_answer("propose", "propose_answer", {"data": data})
        if body is None:
            return None
        answer = check_propose_answer(body.get("answer"))
        if answer is None:
            self.failed("propose", "answer is not a proposal answer")
            return None
        self.proposed += 1
        return answer

    async def attest(self, attestations: list[Any]) -> bool:
        """This node's attestations (signatures over committed Raft entries) for a remote validator."""
        if self.remote_id is None:
            return False
        sent = False
        for start in range(0, len(attestations), MAX_ATTESTATIONS):
            batch = attestations[start : start + MAX_ATTESTATIONS]
            sent = await self._post("attest", self.remote_id, {"attestations": batch}) is not None or sent
        return sent

    async def anonymous(self, blob: str) -> bool:
        """A vote sealed to the remote node, which enters it as the exit relay; whether it took it."""
        if self.remote_id is None:
            return False
        answer = await self._post("anonymous", self.remote_id, {"blob": blob})
        return isinstance(answer, dict) and answer.get("accepted") is True

    async def forward(self, exit_id: str, blob: str) -> bool:
        """A vote sealed to `exit_id` for the remote node to pass on as the first relay; whether the exit took it."""
        if self.remote_id is None:
            return False
        answer = await self._post("forward", self.remote_id, {"exit_id": exit_id, "blob": blob})
        return isinstance(answer, dict) and answer.get("forwarded") is True

    def public(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "node_id": self.remote_id,
            "pinned": self.pinned_id is not None,
            "joined": self.remote_id is not None,
            "genesis_author": self.genesis_author,
            "events_pushed": self.pushed,
            "events_pulled": self.pulled,
            "raft_sent": self.raft_sent,
            "proposals_forwarded": self.proposed,
            "failures": self.failures,
            "last_error": self.last_error,
        }

    async def close(self) -> None:
        await self.client.aclose()
