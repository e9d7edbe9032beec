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

ROUTES = ("join", "joined", "events", "pull", "checkpoint")
REPLAY_WINDOW_MS = 30_000
MAX_PEERS = 64
UNCONFIRMED_TTL_S = 600.0
MAX_PUSH_EVENTS = 256
MAX_PULL_EVENTS = 500
MAX_PUSH_CHECKPOINTS = 16
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
