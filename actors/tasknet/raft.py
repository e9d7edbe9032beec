"""Raft among the validator set, as a deterministic core with no I/O (modelled on etcd's raft).

The owner drives it with `tick()` and `step(message)`, sends what `take_messages()`
returns, persists `hard_state()` before sending (term, vote and log must survive a crash)
and applies what `take_committed()` returns, in order. Randomness comes from a seeded
generator, so a test replays a fault schedule exactly.

Membership changes one server at a time (Ongaro's thesis §4.1, as etcd's raft does): a
configuration entry `{..., "conf": {"op": "add"|"remove", "node": id, "voters": [...]}}` carries
the whole new voter set, and every server uses the latest one in its log as soon as it is appended
(a truncated one stops being in force). The leader appends one only when the previous one has
committed and it has committed an entry of its own term; adds a server only once that server has
caught up as a learner (it replicates to it without counting it); refuses a change after which the
servers it heard from within an election timeout would not be a majority of the new set (etcd's
strict reconfiguration check); and, once the entry that removes it commits, steps down. A server
that is not a voter of its latest configuration never campaigns.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

FOLLOWER, PRE_CANDIDATE, CANDIDATE, LEADER = "follower", "pre_candidate", "candidate", "leader"
NOOP: dict[str, Any] = {"noop": True}


class ChangeRefused(Exception):
    """A membership change the leader does not append; `retry`: it may once a learner caught up."""

    def __init__(self, message: str, retry: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retry = retry


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
    voters: list[str]
    learners: list[str]


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
        self.base_voters = sorted(set(peers))  # the configuration before any configuration entry
        self.hard = hard or HardState()
        self._conf_at = [i for i, e in enumerate(self.hard.log, 1) if "conf" in e["data"]]
        self._learners: set[str] = set()  # servers the leader replicates to before they count
        self._heard: dict[str, int] = {}  # the leader's tick count when each peer last answered
        self._ticks = 0
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

    def voters(self) -> list[str]:
        """The configuration in force: the latest configuration entry in the log (committed or not)."""
        if self._conf_at:
            return list(self.hard.log[self._conf_at[-1] - 1]["data"]["conf"]["voters"])
        return list(self.base_voters)

    @property
    def peers(self) -> list[str]:
        """The other voters (those whose votes and acknowledgements count)."""
        return [v for v in self.voters() if v != self.id]

    def _targets(self) -> list[str]:
        """Whom the leader replicates to: the other voters and the learners."""
        return sorted(set(self.peers) | self._learners)

    def _quorum(self) -> int:
        return len(self.voters()) // 2 + 1

    def _counted(self, ids: set[str]) -> int:
        return len(ids & set(self.voters()))

    def _append(self, entry: LogEntry) -> None:
        self.hard.log.append(entry)
        if "conf" in entry["data"]:
            self._conf_at.append(self.last_index())
        self.dirty = True

    def _truncate(self, index: int) -> None:
        """Drop the entries from `index` on (a configuration among them stops being in force)."""
        del self.hard.log[index - 1 :]
        self._conf_at = [i for i in self._conf_at if i < index]

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
        if self._counted(self._votes) >= self._quorum():
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
        self._learners, self._heard = set(), {}
        self._next = {p: self.last_index() + 1 for p in self.peers}
        self._match = {p: 0 for p in self.peers}
        self._append({"term": self.term, "data": NOOP})
        self._elapsed = 0
        self._maybe_commit()
        self._broadcast()

    def _broadcast(self) -> None:
        for peer in self._targets():
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
            replicated = {self.id} | {p for p in self.peers if self._match.get(p, 0) >= n}
            if self._counted(replicated) >= self._quorum():
                self.commit_index = n
                break
        removed = bool(self._conf_at) and self.id not in self.voters()
        if self.role == LEADER and removed and self._conf_at[-1] <= self.commit_index:
            self._broadcast()  # tell the others the removal committed, then step down
            self._become_follower(self.term, None)

    # ----- driving interface
    def tick(self) -> None:
        self._elapsed += 1
        self._ticks += 1
        if self.role == LEADER:
            self._since_check += 1
            if self._since_check >= self.election_ticks:  # check-quorum
                self._since_check = 0
                if self._counted(self._recent | {self.id}) < self._quorum():
                    self._become_follower(self.term, None)
                    return
                self._recent = set()
            if self._elapsed >= self.heartbeat_ticks:
                self._elapsed = 0
                self._broadcast()
        elif self._elapsed >= self._timeout and self.id in self.voters():
            self._pre_campaign()

    def propose(self, data: dict[str, Any]) -> int | None:
        """Append `data` when leader; the index it will commit at, else None."""
        if self.role != LEADER:
            return None
        self._append({"term": self.term, "data": data})
        self._maybe_commit()
        self._broadcast()
        return self.last_index()

    def propose_change(self, op: str, node: str, data: dict[str, Any]) -> int:
        """Append a configuration entry adding or removing `node` (with `data`); its index.

        Raises ChangeRefused: not the leader, a change still uncommitted, no entry of this term
        committed yet, a no-op change, the live servers not a majority of the new set, or (retry)
        a new server still catching up, which the leader now replicates to as a learner."""
        if self.role != LEADER:
            raise ChangeRefused("only the Raft leader appends a membership change")
        if self._conf_at and self._conf_at[-1] > self.commit_index:
            raise ChangeRefused("a membership change is still uncommitted; one change at a time")
        if self.term_at(self.commit_index) != self.term:
            raise ChangeRefused("the leader has not committed an entry of its term yet", retry=True)
        voters = set(self.voters())
        if op == "add" and node not in voters:
            if not self._caught_up(node):
                raise ChangeRefused(f"{node} is catching up as a learner", retry=True)
            new = voters | {node}
        elif op == "remove" and node in voters and len(voters) > 1:
            new = voters - {node}
        else:
            raise ChangeRefused(f"cannot {op} {node} in a configuration of {len(voters)}")
        live = {v for v in new if v == self.id or self._heard_lately(v)}
        if len(live) < len(new) // 2 + 1:
            raise ChangeRefused(
                f"only {len(live)} of the {len(new)} servers of the new configuration are live; "
                "the change would lose the quorum"
            )
        self._learners.discard(node)
        return int(self.propose({**data, "conf": {"op": op, "node": node, "voters": sorted(new)}}) or 0)

    def _caught_up(self, node: str) -> bool:
        """Whether the learner `node` holds everything committed; starts replicating to it if new."""
        if node not in self._learners:
            self._learners.add(node)
            self._next.setdefault(node, self.last_index() + 1)
            self._match.setdefault(node, 0)
            self._replicate(node)
            return False
        return self._match.get(node, 0) >= self.commit_index and self._heard_lately(node)

    def _heard_lately(self, peer: str) -> bool:
        """Whether `peer` answered this leader within the last election timeout."""
        return peer in self._heard and self._heard[peer] >= self._ticks - self.election_ticks

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
        if self._counted(self._votes) >= self._quorum():
            self._campaign()

    def _on_request_vote_response(self, msg: RaftMessage) -> None:
        if self.role != CANDIDATE or msg["term"] != self.term or not msg["vote_granted"]:
            return
        self._votes.add(msg["from"])
        if self._counted(self._votes) >= self._quorum():
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
                self._truncate(index)
                self._append({"term": int(entry["term"]), "data": entry["data"]})
        if msg["leader_commit"] > self.commit_index:
            self.commit_index = min(int(msg["leader_commit"]), index)
        self._send(msg["from"], "append_entries_response", success=True, match_index=index)
        return {"term": self.term, "success": True}

    def _on_append_entries_response(self, msg: RaftMessage) -> None:
        if self.role != LEADER or msg["term"] != self.term:
            return
        peer = msg["from"]
        self._recent.add(peer)
        self._heard[peer] = self._ticks
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
            "voters": self.voters(),
            "learners": sorted(self._learners),
        }
