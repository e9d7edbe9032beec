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

Log compaction and InstallSnapshot (the Raft paper §7, as etcd's raft): the owner calls
`compact(index, data)` with its applied state at an applied index; the core keeps a `Snapshot`
(last included index and term, the configuration in force there and every configuration change up
to it, the owner's `data`) in `hard.snapshot` and drops the log prefix it covers. A leader whose
`next_index` for a follower is at or below its snapshot sends the snapshot in chunks
(`install_snapshot`); the follower refuses a stale term, ignores a snapshot at or below its commit
index (it never moves backwards), keeps its log suffix when its entry at the snapshot's index has the
snapshot's term and discards its log otherwise, and hands the snapshot to its owner
(`take_snapshot()`) before the entries committed after it.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

FOLLOWER, PRE_CANDIDATE, CANDIDATE, LEADER = "follower", "pre_candidate", "candidate", "leader"
NOOP: dict[str, Any] = {"noop": True}
SNAPSHOT_CHUNK = 65_536  # characters of a snapshot's JSON per install_snapshot message
MAX_SNAPSHOT = 64 * 1024 * 1024  # characters a follower buffers for one snapshot before it gives up on it


class ChangeRefused(Exception):
    """A membership change the leader does not append; `retry`: it may once a learner caught up."""

    def __init__(self, message: str, retry: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retry = retry


class LogEntry(TypedDict):
    term: int
    data: dict[str, Any]


class ConfChange(TypedDict):
    """One configuration entry a snapshot covers: its index, the voter set it made, its proposal."""

    index: int
    voters: list[str]
    proposal_id: str | None


class Snapshot(TypedDict):
    """The state at `index` (term `term`): the configuration in force, the changes up to it, the owner's data."""

    index: int
    term: int
    voters: list[str]
    conf_history: list[ConfChange]
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
        "last_included_index": int,
        "last_included_term": int,
        "offset": int,
        "chunk": str,
        "done": bool,
    },
    total=False,
)
"""`{type, from, to, term, ...}`: request_vote, append_entries and install_snapshot (and their responses) share one shape."""


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
    snapshot_index: int
    voted_for: str | None
    voters: list[str]
    learners: list[str]


@dataclass
class HardState:
    term: int = 0
    voted_for: str | None = None
    log: list[LogEntry] = field(default_factory=list)  # index = snapshot index + position + 1
    snapshot: Snapshot | None = None  # what the log prefix compacted into (None: the log starts at 1)


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
        snapshot_chunk: int = SNAPSHOT_CHUNK,
    ) -> None:
        self.id = node_id
        self.base_voters = sorted(set(peers))  # the configuration before any configuration entry
        self.hard = hard or HardState()
        self._conf_at = self._conf_indices()
        self._learners: set[str] = set()  # servers the leader replicates to before they count
        self._heard: dict[str, int] = {}  # the leader's tick count when each peer last answered
        self._ticks = 0
        self.election_ticks = election_ticks
        self.heartbeat_ticks = heartbeat_ticks
        self._rng = random.Random(seed)
        self.role = FOLLOWER
        self.leader_id: str | None = None
        self.commit_index = self.last_applied = self.snap_index()  # a snapshot holds only committed entries
        self.snapshot_chunk = max(1, snapshot_chunk)
        self.snapshot_installed = False  # the owner persists an installed snapshot (it replaced the log)
        self._installed: Snapshot | None = self.hard.snapshot  # for the owner: take_snapshot()
        self._incoming: tuple[tuple[str, int, int, int], list[str], int] | None = None  # chunks so far
        self._snap_sent: dict[str, int] = {}  # the leader: how far each follower has its snapshot
        self._blob: tuple[int, str] = (0, "")  # the leader's snapshot serialized, by index
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

    def snap_index(self) -> int:
        return self.hard.snapshot["index"] if self.hard.snapshot else 0

    def last_index(self) -> int:
        return self.snap_index() + len(self.hard.log)

    def entry(self, index: int) -> LogEntry | None:
        """The entry at `index`, None when compacted into the snapshot or beyond the log."""
        pos = index - self.snap_index()
        return self.hard.log[pos - 1] if 0 < pos <= len(self.hard.log) else None

    def entries(self, start: int, end: int) -> list[LogEntry]:
        """The entries `start..end-1` still in the log."""
        base = self.snap_index()
        return self.hard.log[max(0, start - base - 1) : max(0, end - base - 1)]

    def term_at(self, index: int) -> int:
        """The term of the entry at `index`: the snapshot's at its index, 0 when unknown (compacted or absent)."""
        snap = self.hard.snapshot
        if snap is not None and index == snap["index"]:
            return snap["term"]
        found = self.entry(index)
        return found["term"] if found else 0

    def _conf_indices(self) -> list[int]:
        base = self.snap_index()
        return [base + i for i, e in enumerate(self.hard.log, 1) if "conf" in e["data"]]

    def voters(self) -> list[str]:
        """The configuration in force: the latest configuration entry in the log (committed or not),
        else the one the snapshot holds, else the base one."""
        if self._conf_at:
            return list(self._entry(self._conf_at[-1])["data"]["conf"]["voters"])
        if self.hard.snapshot is not None:
            return list(self.hard.snapshot["voters"])
        return list(self.base_voters)

    def _entry(self, index: int) -> LogEntry:
        return self.hard.log[index - self.snap_index() - 1]

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
        del self.hard.log[index - self.snap_index() - 1 :]
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
        self._learners, self._heard, self._snap_sent = set(), {}, {}
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
        if prev < self.snap_index():  # the entries it needs were compacted: send the snapshot
            self._send_snapshot(peer)
            return
        self._send(
            peer,
            "append_entries",
            leader_id=self.id,
            prev_log_index=prev,
            prev_log_term=self.term_at(prev),
            entries=self.entries(nxt, nxt + 64),
            leader_commit=self.commit_index,
        )

    def _send_snapshot(self, peer: str) -> None:
        """The next chunk of the snapshot to `peer` (from where it last said it was)."""
        snap = self.hard.snapshot
        assert snap is not None
        if self._blob[0] != snap["index"]:
            self._blob = (snap["index"], json.dumps(snap, separators=(",", ":"), sort_keys=True))
        blob = self._blob[1]
        offset = min(self._snap_sent.get(peer, 0), len(blob))
        chunk = blob[offset : offset + self.snapshot_chunk]
        self._send(
            peer,
            "install_snapshot",
            leader_id=self.id,
            last_included_index=snap["index"],
            last_included_term=snap["term"],
            offset=offset,
            chunk=chunk,
            done=offset + len(chunk) >= len(blob),
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

    def ticks_until_due(self) -> int | None:
        """How many `tick()` calls until one does something: a leader's next heartbeat or
        check-quorum, a voter's election timeout; None when no tick would (a server that is not a
        voter and does not lead). The owner sleeps that long instead of ticking in vain."""
        if self.role == LEADER:
            return max(1, min(self.heartbeat_ticks - self._elapsed, self.election_ticks - self._since_check))
        if self.id not in self.voters():
            return None
        return max(1, self._timeout - self._elapsed)

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
            leader = msg.get("leader_id") if msg["type"] in ("append_entries", "install_snapshot") else None
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
        if prev >= self.snap_index() and (prev > self.last_index() or self.term_at(prev) != msg["prev_log_term"]):
            self._send(
                msg["from"], "append_entries_response", success=False, match_index=min(prev - 1, self.last_index())
            )
            return {"term": self.term, "success": False}
        index = max(prev, self.snap_index())
        for entry in msg["entries"][index - prev :]:  # those the snapshot covers are committed: they match
            index += 1
            if self.term_at(index) != entry["term"]:
                self._truncate(index)
                self._append({"term": int(entry["term"]), "data": entry["data"]})
        # never backwards: a delayed message may cover less than what is already committed here
        self.commit_index = max(self.commit_index, min(int(msg["leader_commit"]), index))
        self._send(msg["from"], "append_entries_response", success=True, match_index=index)
        return {"term": self.term, "success": True}

    def _answered_leader(self, msg: RaftMessage) -> str | None:
        """The peer that answered this leader in its current term (now heard from, for check-quorum),
        or None when the answer is stale or this node no longer leads."""
        if self.role != LEADER or msg["term"] != self.term:
            return None
        peer: str = msg["from"]
        self._recent.add(peer)
        self._heard[peer] = self._ticks
        return peer

    def _on_append_entries_response(self, msg: RaftMessage) -> None:
        peer = self._answered_leader(msg)
        if peer is None:
            return
        if msg["success"]:
            self._match[peer] = max(self._match.get(peer, 0), int(msg["match_index"]))
            self._next[peer] = self._match[peer] + 1
            self._maybe_commit()
            if self._next[peer] <= self.last_index() and self.role == LEADER:
                self._replicate(peer)  # still behind (catching up): the next batch now, not at the next heartbeat
        else:
            self._next[peer] = max(1, min(self._next.get(peer, 1) - 1, int(msg["match_index"]) + 1))
            self._replicate(peer)

    def _on_install_snapshot(self, msg: RaftMessage) -> RaftReply:
        """A chunk of the leader's snapshot; installed (§7) once the last one arrived."""
        if msg["term"] < self.term:
            self._send(msg["from"], "install_snapshot_response", success=False, offset=0, done=False, match_index=0)
            return {"term": self.term, "success": False}
        self._become_follower(msg["term"], msg["leader_id"])
        index, term = int(msg["last_included_index"]), int(msg["last_included_term"])
        if index <= self.commit_index:  # nothing new: installing it would move the commit index backwards
            self._incoming = None
            self._send(msg["from"], "install_snapshot_response", success=True, done=True, match_index=index, offset=0)
            return {"term": self.term, "success": True}
        key = (str(msg["leader_id"]), self.term, index, term)
        offset, chunk = int(msg["offset"]), str(msg["chunk"])
        if offset == 0 or self._incoming is None or self._incoming[0] != key:
            self._incoming = (key, [], 0)
        held = self._incoming[2]
        if held + len(chunk) > MAX_SNAPSHOT:
            self._incoming = None
            self._send(msg["from"], "install_snapshot_response", success=False, done=False, offset=0, match_index=0)
            return {"term": self.term, "success": False}
        if offset != held:  # a lost or repeated chunk: ask again from where this node is
            self._send(msg["from"], "install_snapshot_response", success=False, done=False, offset=held, match_index=0)
            return {"term": self.term, "success": False}
        self._incoming[1].append(chunk)
        self._incoming = (key, self._incoming[1], held + len(chunk))
        if not msg["done"]:
            self._send(
                msg["from"],
                "install_snapshot_response",
                success=True,
                done=False,
                offset=held + len(chunk),
                match_index=0,
            )
            return {"term": self.term, "success": True}
        snap = _parse_snapshot("".join(self._incoming[1]), index, term)
        self._incoming = None
        if snap is None:
            self._send(msg["from"], "install_snapshot_response", success=False, done=False, offset=0, match_index=0)
            return {"term": self.term, "success": False}
        self._install(snap)
        self._send(msg["from"], "install_snapshot_response", success=True, done=True, match_index=index, offset=0)
        return {"term": self.term, "success": True}

    def _install(self, snap: Snapshot) -> None:
        """Replace state and log with `snap`: keep the suffix after it when the entry at its index
        matches its term (the log matching property), else discard the whole log."""
        keep = self.term_at(snap["index"]) == snap["term"] and snap["index"] <= self.last_index()
        suffix = self.entries(snap["index"] + 1, self.last_index() + 1) if keep else []
        self.hard.snapshot, self.hard.log = snap, suffix
        self._conf_at = self._conf_indices()
        self.commit_index = max(self.commit_index, snap["index"])
        self.last_applied = snap["index"]
        self._installed = snap
        self.snapshot_installed = self.dirty = True

    def _on_install_snapshot_response(self, msg: RaftMessage) -> None:
        peer = self._answered_leader(msg)
        if peer is None:
            return
        if msg["done"] and msg["success"]:
            self._snap_sent.pop(peer, None)
            self._match[peer] = max(self._match.get(peer, 0), int(msg["match_index"]))
            self._next[peer] = max(self._next.get(peer, 1), self._match[peer] + 1)
            self._maybe_commit()
        else:
            self._snap_sent[peer] = int(msg["offset"])
            if self._next.get(peer, 1) - 1 >= self.snap_index():
                return  # the snapshot moved on meanwhile
        self._replicate(peer)

    def compact(self, index: int, data: dict[str, Any]) -> Snapshot:
        """Snapshot the owner's applied state `data` at the applied `index` and drop the log up to it."""
        base = self.snap_index()
        if not base < index <= self.last_applied:
            raise ValueError(f"can only compact an applied index above {base}, up to {self.last_applied}")
        history = list(self.hard.snapshot["conf_history"]) if self.hard.snapshot else []
        for i in self._conf_at:
            if i <= index:
                entry = self._entry(i)["data"]
                pid = entry.get("proposal_id")
                history.append({"index": i, "voters": list(entry["conf"]["voters"]), "proposal_id": pid})
        voters = history[-1]["voters"] if history else list(self.base_voters)
        snap: Snapshot = {
            "index": index,
            "term": self.term_at(index),
            "voters": voters,
            "conf_history": history,
            "data": data,
        }
        self.hard.log = self.entries(index + 1, self.last_index() + 1)
        self.hard.snapshot = snap
        self._conf_at = self._conf_indices()
        self.dirty = True
        return snap

    def take_snapshot(self) -> Snapshot | None:
        """The snapshot the owner must load before the next committed entries (installed from the
        leader, or the one the core started from); None when there is none new."""
        out, self._installed = self._installed, None
        return out

    def take_messages(self, to: str | None = None) -> list[RaftMessage]:
        """The queued messages (with `to`: only those for that node, the others stay queued)."""
        if to is None:
            out, self._outbox = self._outbox, []
            return out
        out = [m for m in self._outbox if m["to"] == to]
        self._outbox = [m for m in self._outbox if m["to"] != to]
        return out

    def take_committed(self) -> list[tuple[int, dict[str, Any]]]:
        """Entries newly committed since the last call: (index, data), no-ops included."""
        out = [(i, self._entry(i)["data"]) for i in range(self.last_applied + 1, self.commit_index + 1)]
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
            "snapshot_index": self.snap_index(),
            "voted_for": self.hard.voted_for,
            "voters": self.voters(),
            "learners": sorted(self._learners),
        }


def _parse_snapshot(blob: str, index: int, term: int) -> Snapshot | None:
    """The snapshot a leader sent, when it is well formed and is the one its header named."""
    try:
        snap = parse_snapshot(json.loads(blob))
    except ValueError:
        return None
    if snap is None or (snap["index"], snap["term"]) != (index, term):
        return None
    return snap


def parse_snapshot(raw: Any) -> Snapshot | None:
    """`raw` as a Snapshot when it has the shape of one (a voter set, indices and terms that are numbers)."""
    try:
        voters = [str(v) for v in raw["voters"]]
        history: list[ConfChange] = [
            {"index": int(c["index"]), "voters": [str(v) for v in c["voters"]], "proposal_id": c.get("proposal_id")}
            for c in raw["conf_history"]
        ]
        snap: Snapshot = {
            "index": int(raw["index"]),
            "term": int(raw["term"]),
            "voters": voters,
            "conf_history": history,
            "data": dict(raw["data"]),
        }
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not voters or snap["index"] < 1 or snap["term"] < 0:
        return None
    return snap
