"""Raft among the validator set, as a deterministic core with no I/O (modelled on etcd's raft).

The owner drives it with `tick()` and `step(message)`, sends what `take_messages()`
returns, persists `hard_state()` before sending (term, vote and log must survive a crash)
and applies what `take_committed()` returns, in order. Randomness comes from a seeded
generator, so a test replays a fault schedule exactly.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

FOLLOWER, PRE_CANDIDATE, CANDIDATE, LEADER = "follower", "pre_candidate", "candidate", "leader"
NOOP: dict[str, Any] = {"noop": True}


class LogEntry(TypedDict):
    term: int
    data: dict[str, Any]


RaftMessage = TypedDict(
    "RaftMessage",
    {
        "type": str,
        "from": str,
        "to": str,
        "term": int,
        "candidate_id": str,
        "last_log_index": int,
        "last_log_term": int,
        "vote_granted": bool,
        "leader_id": str,
        "prev_log_index": int,
        "prev_log_term": int,
        "entries": list[LogEntry],
        "leader_commit": int,
        "success": bool,
        "match_index": int,
    },
    total=False,
)
"""`{type, from, to, term, ...}`: request_vote(_response) and append_entries(_response) share one shape."""


class RaftReply(TypedDict, total=False):
    """The answer of a request/response transport: `{term, vote_granted}` or `{term, success}`."""

    term: int
    vote_granted: bool
    success: bool


class RaftStatus(TypedDict):
    node_id: str
    role: str
    term: int
    leader_id: str | None
    commit_index: int
    last_index: int
    voted_for: str | None


@dataclass
class HardState:
    term: int = 0
    voted_for: str | None = None
    log: list[LogEntry] = field(default_factory=list)  # index = position + 1


class RaftCore:
    def __init__(
        self,
        node_id: str,
        peers: list[str],
        *,
        hard: HardState | None = None,
        election_ticks: int = 10,
        heartbeat_ticks: int = 2,
        seed: int | None = None,
    ) -> None:
        self.id = node_id
        self.peers = sorted(p for p in peers if p != node_id)
        self.hard = hard or HardState()
        self.election_ticks = election_ticks
        self.heartbeat_ticks = heartbeat_ticks
        self._rng = random.Random(seed)
        self.role = FOLLOWER
        self.leader_id: str | None = None
        self.commit_index = 0
        self.last_applied = 0
        self._elapsed = 0
        self._timeout = self._new_timeout()
        self._votes: set[str] = set()
        self._next: dict[str, int] = {}
        self._match: dict[str, int] = {}
        self._outbox: list[RaftMessage] = []
        self._recent: set[str] = set()  # peers heard from since the leader's last quorum check
        self._since_check = 0
        self.dirty = False

    # ----- helpers
    def _new_timeout(self) -> int:
        return self.election_ticks + self._rng.randrange(self.election_ticks)

    @property
    def term(self) -> int:
        return self.hard.term

    def last_index(self) -> int:
        return len(self.hard.log)

    def term_at(self, index: int) -> int:
        return self.hard.log[index - 1]["term"] if 0 < index <= len(self.hard.log) else 0

    def _quorum(self) -> int:
        return (len(self.peers) + 1) // 2 + 1

    def _send(self, to: str, msg_type: str, **body: Any) -> None:
        self._outbox.append(cast(RaftMessage, {"type": msg_type, "from": self.id, "to": to, "term": self.term, **body}))

    def _become_follower(self, term: int, leader: str | None) -> None:
        if term > self.hard.term:
            self.hard.term, self.hard.voted_for = term, None
            self.dirty = True
        self.role, self.leader_id = FOLLOWER, leader
        self._elapsed, self._timeout = 0, self._new_timeout()

    def _solicit(self, role: str, msg_type: str, term: int) -> bool:
        """Become `role` and ask every peer for its vote in `term`; True when this node alone is a quorum."""
        self.role, self.leader_id = role, None
        self._votes = {self.id}
        self._elapsed, self._timeout = 0, self._new_timeout()
        if len(self._votes) >= self._quorum():
            return True
        last = {"last_log_index": self.last_index(), "last_log_term": self.term_at(self.last_index())}
        for peer in self.peers:
            body = {"type": msg_type, "from": self.id, "to": peer, "term": term, "candidate_id": self.id, **last}
            self._outbox.append(cast(RaftMessage, body))
        return False

    def _pre_campaign(self) -> None:
        """Pre-vote: ask whether a campaign could win before raising the term, so a node that was
        cut off does not come back with an inflated term and depose a working leader."""
        if self._solicit(PRE_CANDIDATE, "pre_vote", self.term + 1):
            self._campaign()

    def _campaign(self) -> None:
        self.hard.term += 1
        self.hard.voted_for = self.id
        self.dirty = True
        if self._solicit(CANDIDATE, "request_vote", self.term):
            self._become_leader()

    def _become_leader(self) -> None:
        self.role, self.leader_id = LEADER, self.id
        self._recent, self._since_check = set(), 0
        self._next = {p: self.last_index() + 1 for p in self.peers}
        self._match = {p: 0 for p in self.peers}
        self.hard.log.append({"term": self.term, "data": NOOP})
        self.dirty = True
        self._elapsed = 0
        self._maybe_commit()
        self._broadcast()

    def _broadcast(self) -> None:
        for peer in self.peers:
            self._replicate(peer)

    def _replicate(self, peer: str) -> None:
        nxt = self._next.get(peer, self.last_index() + 1)
        prev = nxt - 1
        self._send(
            peer,
            "append_entries",
            leader_id=self.id,
            prev_log_index=prev,
            prev_log_term=self.term_at(prev),
            entries=self.hard.log[prev : prev + 64],
            leader_commit=self.commit_index,
        )

    def _maybe_commit(self) -> None:
        for n in range(self.last_index(), self.commit_index, -1):
            if self.term_at(n) != self.term:
                break
            replicated = 1 + sum(1 for p in self.peers if self._match.get(p, 0) >= n)
            if replicated >= self._quorum():
                self.commit_index = n
                break

    # ----- driving interface
    def tick(self) -> None:
        self._elapsed += 1
        if self.role == LEADER:
            self._since_check += 1
            if self._since_check >= self.election_ticks:  # check-quorum
                self._since_check = 0
                if len(self._recent) + 1 < self._quorum():
                    self._become_follower(self.term, None)
                    return
                self._recent = set()
            if self._elapsed >= self.heartbeat_ticks:
                self._elapsed = 0
                self._broadcast()
        elif self._elapsed >= self._timeout:
            self._pre_campaign()

    def propose(self, data: dict[str, Any]) -> int | None:
        """Append `data` when leader; the index it will commit at, else None."""
        if self.role != LEADER:
            return None
        self.hard.log.append({"term": self.term, "data": data})
        self.dirty = True
        self._maybe_commit()
        self._broadcast()
        return self.last_index()

    def step(self, msg: RaftMessage) -> RaftReply | None:
        """Handle one message; the reply for request/response transports (also queued in the outbox)."""
        term = int(msg["term"])
        prevote = msg["type"] == "pre_vote" or (msg["type"] == "pre_vote_response" and msg.get("vote_granted"))
        if term > self.term and not prevote:
            leader = msg.get("leader_id") if msg["type"] == "append_entries" else None
            self._become_follower(term, leader)
        handler = getattr(self, "_on_" + msg["type"])
        reply: RaftReply | None = handler(msg)
        return reply

    def _on_request_vote(self, msg: RaftMessage) -> RaftReply:
        candidate = msg["candidate_id"]
        up_to_date = (msg["last_log_term"], msg["last_log_index"]) >= (
            self.term_at(self.last_index()),
            self.last_index(),
        )
        granted = (
            msg["term"] == self.term and self.hard.voted_for in (None, candidate) and up_to_date
        ) and self.role != LEADER
        if granted:
            self.hard.voted_for = candidate
            self.dirty = True
            self._elapsed = 0
        self._send(msg["from"], "request_vote_response", vote_granted=granted)
        return {"term": self.term, "vote_granted": granted}

    def _on_pre_vote(self, msg: RaftMessage) -> RaftReply:
        """Grant when the campaign could win: a later term, a log at least as up to date, and no
        leader heard from within the election timeout (its lease)."""
        up_to_date = (msg["last_log_term"], msg["last_log_index"]) >= (
            self.term_at(self.last_index()),
            self.last_index(),
        )
        in_lease = self.role == LEADER or (self.leader_id is not None and self._elapsed < self.election_ticks)
        granted = int(msg["term"]) > self.term and up_to_date and not in_lease
        term = int(msg["term"]) if granted else self.term
        self._outbox.append(
            cast(
                RaftMessage,
                {
                    "type": "pre_vote_response",
                    "from": self.id,
                    "to": msg["from"],
                    "term": term,
                    "vote_granted": granted,
                },
            )
        )
        return {"term": term, "vote_granted": granted}

    def _on_pre_vote_response(self, msg: RaftMessage) -> None:
        if self.role != PRE_CANDIDATE or msg["term"] != self.term + 1 or not msg["vote_granted"]:
            return
        self._votes.add(msg["from"])
        if len(self._votes) >= self._quorum():
            self._campaign()

    def _on_request_vote_response(self, msg: RaftMessage) -> None:
        if self.role != CANDIDATE or msg["term"] != self.term or not msg["vote_granted"]:
            return
        self._votes.add(msg["from"])
        if len(self._votes) >= self._quorum():
            self._become_leader()

    def _on_append_entries(self, msg: RaftMessage) -> RaftReply:
        if msg["term"] < self.term:
            self._send(msg["from"], "append_entries_response", success=False, match_index=0)
            return {"term": self.term, "success": False}
        self._become_follower(msg["term"], msg["leader_id"])
        prev = int(msg["prev_log_index"])
        if prev > self.last_index() or self.term_at(prev) != msg["prev_log_term"]:
            self._send(
                msg["from"], "append_entries_response", success=False, match_index=min(prev - 1, self.last_index())
            )
            return {"term": self.term, "success": False}
        index = prev
        for entry in msg["entries"]:
            index += 1
            if self.term_at(index) != entry["term"]:
                del self.hard.log[index - 1 :]
                self.hard.log.append({"term": int(entry["term"]), "data": entry["data"]})
                self.dirty = True
        if msg["leader_commit"] > self.commit_index:
            self.commit_index = min(int(msg["leader_commit"]), index)
        self._send(msg["from"], "append_entries_response", success=True, match_index=index)
        return {"term": self.term, "success": True}

    def _on_append_entries_response(self, msg: RaftMessage) -> None:
        if self.role != LEADER or msg["term"] != self.term:
            return
        peer = msg["from"]
        self._recent.add(peer)
        if msg["success"]:
            self._match[peer] = max(self._match.get(peer, 0), int(msg["match_index"]))
            self._next[peer] = self._match[peer] + 1
            self._maybe_commit()
        else:
            self._next[peer] = max(1, min(self._next.get(peer, 1) - 1, int(msg["match_index"]) + 1))
            self._replicate(peer)

    def take_messages(self) -> list[RaftMessage]:
        out, self._outbox = self._outbox, []
        return out

    def take_committed(self) -> list[tuple[int, dict[str, Any]]]:
        """Entries newly committed since the last call: (index, data), no-ops included."""
        out = [(i, self.hard.log[i - 1]["data"]) for i in range(self.last_applied + 1, self.commit_index + 1)]
        self.last_applied = self.commit_index
        return out

    def status(self) -> RaftStatus:
        return {
            "node_id": self.id,
            "role": self.role,
            "term": self.term,
            "leader_id": self.leader_id,
            "commit_index": self.commit_index,
            "last_index": self.last_index(),
            "voted_for": self.hard.voted_for,
        }
