"""HTTP peering with nodes of other clusters: signed envelopes, the peer registry, its defences.

Every peer request is an envelope `{route, from, key, to, ts, nonce, body, sig}`: `sig` is the
sender's Ed25519 signature over the RFC 8785 JSON of the rest, `from` must derive from `key`
(so nobody presents another node's id), `to` names the receiving node and `route` the route
(an envelope is good for one route of one node), `ts` is within `REPLAY_WINDOW_MS` of the
receiver's clock and `nonce` is used once per peer inside that window. The events a push
carries are each still verified by the node's log: the envelope only says who relayed them.

The registry is bounded: a join records a peer unconfirmed (expires after `UNCONFIRMED_TTL_S`
unless it pushes or pulls), the oldest unconfirmed entry makes room for a new one, and a full
registry of confirmed peers refuses joins; joins of ids not yet known share one token bucket (fresh
keys cost nothing to make, so a bucket per id would not bound them). Each peer has a token bucket
(429 when empty) and a
score that every forged or broken event it relays lowers; below `DROP_BELOW` it is dropped and
refused (403) from then on.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from actors.tasknet.canonical import canonical
from actors.tasknet.identity import Identity, node_id_of, verify
from actors.tasknet.ledger import Reject
from actors.tasknet.raft import SNAPSHOT_CHUNK, RaftMessage

REPLAY_WINDOW_MS = 30_000
MAX_PEERS = 64
UNCONFIRMED_TTL_S = 600.0
MAX_PUSH_EVENTS = 256
MAX_PULL_EVENTS = 500
MAX_PUSH_CHECKPOINTS = 16
MAX_ATTESTATIONS = 64
MAX_RAFT_ENTRIES = 64  # what RaftCore puts in one append_entries
MAX_RAFT_ANSWER = 16  # Raft messages one /peer/raft answer carries back
SCORE_START = 100
PENALTY_PER_INVALID = 10
DROP_BELOW = 1
MAX_NONCES_PER_PEER = 4096


def check_peer_url(url: str) -> str:
    """A peer's base URL: http(s), a host, no credentials, query or fragment; without a trailing '/'."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError("peer url must be http:// or https://")
    if not parts.hostname:
        raise ValueError("peer url needs a host")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValueError("peer url must not carry credentials")
    if parts.query or parts.fragment:
        raise ValueError("peer url must not have a query or fragment")
    try:
        parts.port  # noqa: B018 - parsing the port validates it
    except ValueError as exc:
        raise ValueError("peer url has an invalid port") from exc
    return url.rstrip("/")


def envelope(identity: Identity, route: str, to: str, body: dict[str, Any], now_ms: int) -> dict[str, Any]:
    """`body` for `route` of the node `to`, signed by `identity`."""
    unsigned = {
        "route": route,
        "from": identity.node_id,
        "key": identity.public_key,
        "to": to,
        "ts": now_ms,
        "nonce": secrets.token_hex(12),
        "body": body,
    }
    return {**unsigned, "sig": identity.sign(canonical(unsigned))}


@dataclass(frozen=True)
class Opened:
    """A verified envelope: who sent it and what it carries."""

    sender: str
    key: str
    nonce: str
    ts: int
    body: dict[str, Any]
    received_ms: int


def open_envelope(raw: Any, route: str, me: str, now_ms: int) -> Opened:
    """Check an envelope's shape, route, recipient, clock, id and signature (not its nonce: see the registry)."""
    if not isinstance(raw, dict) or set(raw) != {"route", "from", "key", "to", "ts", "nonce", "body", "sig"}:
        raise Reject("a peer message is {route, from, key, to, ts, nonce, body, sig}")
    if not all(isinstance(raw[k], str) for k in ("route", "from", "key", "to", "nonce", "sig")):
        raise Reject("peer message fields route, from, key, to, nonce and sig are strings")
    if not isinstance(raw["ts"], int) or isinstance(raw["ts"], bool) or not isinstance(raw["body"], dict):
        raise Reject("peer message ts is an integer (ms) and body an object")
    if raw["route"] != route:
        raise Reject(f"peer message is for route {raw['route']!r}, not {route!r}", 403)
    if raw["to"] != me and not (route == "join" and raw["to"] == ""):
        raise Reject("peer message is addressed to another node", 403)
    if abs(now_ms - raw["ts"]) > REPLAY_WINDOW_MS:
        raise Reject("peer message timestamp outside the replay window", 403)
    try:
        derived = node_id_of(raw["key"])
    except ValueError:
        raise Reject("peer key is not an Ed25519 public key", 403) from None
    if derived != raw["from"]:
        raise Reject("peer id does not derive from its key", 403)
    unsigned = {k: v for k, v in raw.items() if k != "sig"}
    if not verify(raw["key"], canonical(unsigned), raw["sig"]):
        raise Reject("peer message signature invalid", 403)
    return Opened(raw["from"], raw["key"], raw["nonce"], raw["ts"], raw["body"], now_ms)


_VOTE = {"term": int, "candidate_id": str, "last_log_index": int, "last_log_term": int}
_VOTE_ANSWER = {"term": int, "vote_granted": bool}
RAFT_FIELDS: dict[str, dict[str, type]] = {
    "pre_vote": _VOTE,
    "request_vote": _VOTE,
    "pre_vote_response": _VOTE_ANSWER,
    "request_vote_response": _VOTE_ANSWER,
    "append_entries": {
        "term": int,
        "leader_id": str,
        "prev_log_index": int,
        "prev_log_term": int,
        "entries": list,
        "leader_commit": int,
    },
    "append_entries_response": {"term": int, "success": bool, "match_index": int},
    "install_snapshot": {
        "term": int,
        "leader_id": str,
        "last_included_index": int,
        "last_included_term": int,
        "offset": int,
        "chunk": str,
        "done": bool,
    },
    "install_snapshot_response": {"term": int, "success": bool, "done": bool, "offset": int, "match_index": int},
}
"""Every Raft message type RaftCore sends, and the fields (beyond type, from, to) each carries."""


def check_raft_message(raw: Any, sender: str, me: str) -> RaftMessage:
    """A Raft message that came over HTTP: its shape (Reject 400), and that it is from `sender` (the
    envelope's signer; as candidate or leader too) and for `me` (Reject 403)."""
    if not isinstance(raw, dict) or raw.get("type") not in RAFT_FIELDS:
        raise Reject(f"a Raft message is an object whose type is one of {', '.join(RAFT_FIELDS)}")
    fields = RAFT_FIELDS[raw["type"]]
    if set(raw) != {"type", "from", "to", *fields}:
        raise Reject(f"a {raw['type']} message has exactly the fields type, from, to, {', '.join(fields)}")
    for key, kind in {"from": str, "to": str, **fields}.items():
        value = raw[key]
        if kind is int and (type(value) is not int or value < 0):
            raise Reject(f"Raft message field {key} is a non-negative integer")
        if kind is not int and not isinstance(value, kind):
            raise Reject(f"Raft message field {key} is a {kind.__name__}")
    if len(raw.get("chunk", "")) > SNAPSHOT_CHUNK:
        raise Reject(f"a snapshot chunk holds at most {SNAPSHOT_CHUNK} characters", 413)
    entries = raw.get("entries", [])
    if len(entries) > MAX_RAFT_ENTRIES:
        raise Reject(f"an append_entries message holds at most {MAX_RAFT_ENTRIES} entries", 413)
    for entry in entries:
        if not (
            isinstance(entry, dict)
            and set(entry) == {"term", "data"}
            and type(entry["term"]) is int
            and entry["term"] >= 0
            and isinstance(entry["data"], dict)
        ):
            raise Reject("a Raft log entry is {term: integer, data: object}")
    if raw["from"] != sender or raw.get("candidate_id", sender) != sender or raw.get("leader_id", sender) != sender:
        raise Reject("a Raft message must be from the node that signed it", 403)
    if raw["to"] != me:
        raise Reject("the Raft message is addressed to another node", 403)
    message: RaftMessage = raw  # type: ignore[assignment]
    return message


def check_attestation_batch(body: dict[str, Any], _sender: str) -> list[Any]:
    """The attestations a `/peer/attest` envelope carries: `{attestations: [1..MAX_ATTESTATIONS]}`
    (Reject 400, 413 over the bound); each one's signatures are checked where it is merged."""
    attestations = body.get("attestations")
    if set(body) != {"attestations"} or not isinstance(attestations, list) or not attestations:
        raise Reject("body is {attestations: [attestation]}")
    if len(attestations) > MAX_ATTESTATIONS:
        raise Reject(f"a batch holds at most {MAX_ATTESTATIONS} attestations", 413)
    return attestations


PROPOSE_FIELDS = ("proposal_id", "channel", "by")
"""What a forwarded proposal (`/peer/propose`) carries: the proposal to ratify, its channel, the proposer."""


def check_proposal_request(body: dict[str, Any], sender: str) -> dict[str, Any]:
    """The proposal a `/peer/propose` envelope forwards to the Raft leader: `{data: {proposal_id,
    channel, by}}`, strings of at most 128 characters (Reject 400), `by` the node that signed it (403)."""
    data = body.get("data")
    if set(body) != {"data"} or not isinstance(data, dict) or set(data) != set(PROPOSE_FIELDS):
        raise Reject(f"body is {{data: {{{', '.join(PROPOSE_FIELDS)}}}}}")
    if not all(isinstance(data[k], str) and 0 < len(data[k]) <= 128 for k in PROPOSE_FIELDS):
        raise Reject(f"proposal fields {', '.join(PROPOSE_FIELDS)} are strings of 1..128 characters")
    if data["by"] != sender:
        raise Reject("a forwarded proposal must be by the node that signed it", 403)
    return dict(data)


def check_propose_answer(raw: Any) -> dict[str, Any] | None:
    """The leader's answer to a forwarded proposal, `{index, leader}` or `{error, status, retry}`
    (what a local proposal answers); None when it is neither."""
    if not isinstance(raw, dict):
        return None
    if set(raw) == {"index", "leader"} and type(raw["index"]) is int and isinstance(raw["leader"], str):
        return raw
    if (
        set(raw) == {"error", "status", "retry"}
        and isinstance(raw["error"], str)
        and type(raw["status"]) is int
        and 400 <= raw["status"] <= 599
        and isinstance(raw["retry"], bool)
    ):
        return raw
    return None


class TokenBucket:
    """`rate` requests per second on average, `burst` at once."""

    def __init__(self, rate: float, burst: float, now: Callable[[], float]) -> None:
        self.rate, self.burst, self._now = rate, burst, now
        self.tokens = burst
        self.updated = now()

    def take(self) -> bool:
        now = self._now()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


@dataclass
class Peer:
    node_id: str
    public_key: str
    url: str | None
    bucket: TokenBucket
    expires: float
    confirmed: bool = False
    score: int = SCORE_START
    dropped: bool = False
    events_invalid: int = 0
    nonces: dict[str, int] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "url": self.url,
            "confirmed": self.confirmed,
            "score": self.score,
            "dropped": self.dropped,
            "events_invalid": self.events_invalid,
        }


class PeerRegistry:
    """The peers of other clusters this node has heard from (bounded; see the module docstring)."""

    def __init__(
        self,
        rate: float = 20.0,
        burst: float = 40.0,
        max_peers: int = MAX_PEERS,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate, self.burst, self.max_peers, self._now = rate, burst, max_peers, now
        self.peers: dict[str, Peer] = {}
        self.new_joins = TokenBucket(rate, burst, now)  # one bucket for every id not yet known

    def _sweep(self) -> None:
        now = self._now()
        for node_id in [i for i, p in self.peers.items() if not p.confirmed and not p.dropped and p.expires < now]:
            del self.peers[node_id]

    def join(self, opened: Opened, url: str | None) -> Peer:
        """Record a peer that presented a verified join (a dropped peer stays dropped)."""
        self._sweep()
        peer = self.peers.get(opened.sender)
        if peer is not None:
            self._admit(peer, opened)
            if url:
                peer.url = url
            return peer
        if not self.new_joins.take():
            raise Reject("too many joins of new peers; retry shortly", 429)
        if len(self.peers) >= self.max_peers:
            unconfirmed = [i for i, p in self.peers.items() if not p.confirmed and not p.dropped]
            if not unconfirmed:
                raise Reject("peer registry full", 503)
            del self.peers[unconfirmed[0]]  # the oldest unconfirmed entry goes first
        peer = Peer(
            opened.sender,
            opened.key,
            url,
            TokenBucket(self.rate, self.burst, self._now),
            expires=self._now() + UNCONFIRMED_TTL_S,
        )
        self._admit(peer, opened)
        self.peers[opened.sender] = peer
        return peer

    def admit(self, opened: Opened) -> Peer:
        """A push or pull from a joined peer: not dropped, within its rate, a fresh nonce; it confirms the peer."""
        self._sweep()
        peer = self.peers.get(opened.sender)
        if peer is None:
            raise Reject("unknown peer: join first (POST /peer/join)", 403)
        self._admit(peer, opened)
        peer.confirmed = True
        return peer

    def _admit(self, peer: Peer, opened: Opened) -> None:
        if peer.dropped:
            raise Reject("peer dropped for relaying invalid events", 403)
        if not peer.bucket.take():
            raise Reject("peer rate limit exceeded; retry shortly", 429)
        horizon = opened.received_ms - REPLAY_WINDOW_MS
        peer.nonces = {n: ts for n, ts in peer.nonces.items() if ts >= horizon}
        if opened.nonce in peer.nonces:
            raise Reject("peer message replayed", 403)
        if len(peer.nonces) >= MAX_NONCES_PER_PEER:
            raise Reject("peer rate limit exceeded; retry shortly", 429)
        peer.nonces[opened.nonce] = opened.ts

    def penalize(self, peer: Peer, invalid: int) -> None:
        """Lower the score of a peer that relayed `invalid` forged or broken events; drop it below the floor."""
        if invalid <= 0:
            return
        peer.events_invalid += invalid
        peer.score -= invalid * PENALTY_PER_INVALID
        if peer.score < DROP_BELOW:
            peer.dropped = True
