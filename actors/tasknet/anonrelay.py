"""Who carries an anonymous vote into the network: the choice of its relays.

The voter's node never enters its own anonymous vote. It hands the vote, sealed to an exit relay,
to a first relay drawn uniformly from every peer it can reach: the node actors of its cluster and
the remote ends of its joined peer links (nodes of other clusters). The first relay forwards the
blob it cannot open to the exit, which opens it and enters the vote after a random delay. The exit
is never the voter's node nor the first relay. With a local first relay the exit is one of the
voter's other peers (as before); with a remote one, any node whose join published a seal key,
since the nodes the remote reaches (its own cluster, its own links) are not known here: a remote
that reaches none of the exits tried says so, and the next pair is tried, within `MAX_PAIRS`.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

MIN_PEERS_TWO_HOPS = 3  # fewer reachable peers: an anonymous vote goes through one relay
MAX_SEALED_CHARS = 16_384  # a sealed vote (base64) larger than this is refused unopened
MAX_PAIRS = 8  # (first relay, exit) pairs one vote tries before the voter is told to retry
EXITS_PER_FIRST = 4  # exits tried with one first relay before another first relay is drawn
MAX_OWN_BLOBS = 10_000  # digests of the blobs a node sealed, kept to refuse them bounced back


def relay_context(exit_id: str) -> str:
    """What a sealed vote is bound to: the exit relay it is sealed for."""
    return f"anon-relay:{exit_id}"


def blob_digest(blob: str) -> str:
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class Relay:
    """A peer that can carry a vote: a node actor of this cluster (`name` is its actor name) or a
    node at the end of a joined peer link (`remote`, `name` is `peer:<node id>`)."""

    name: str
    node_id: str
    remote: bool


def relay_peers(me: str, local: Mapping[str, str], links: Iterable[str]) -> list[Relay]:
    """Every peer a vote can enter through (node actor name -> id, and the joined links' remote ids),
    by node id once, never this node itself (a link configured back to this node included)."""
    peers = {i: Relay(name, i, False) for name, i in local.items() if i and i != me}
    for remote_id in links:
        if remote_id != me and remote_id not in peers:
            peers[remote_id] = Relay(f"peer:{remote_id}", remote_id, True)
    return sorted(peers.values(), key=lambda r: r.name)


def relay_pairs(
    me: str, peers: list[Relay], seal_keys: Mapping[str, str], rng: random.Random
) -> Iterator[tuple[Relay, Relay, str]]:
    """(first relay, exit relay, the exit's seal key) to try in turn. The first relay of the first
    pair is uniform over `peers`; the next pairs are drawn only when one was not taken."""
    known = {p.node_id: p for p in peers}
    tried = 0
    for first in rng.sample(peers, k=len(peers)):
        if first.remote:
            ids = [i for i in sorted(seal_keys) if i not in (me, first.node_id)]
            exits = [known.get(i) or Relay(f"peer:{i}", i, True) for i in ids]
        else:
            exits = [p for p in peers if p.node_id != first.node_id and p.node_id in seal_keys]
        for exit_ in rng.sample(exits, k=min(len(exits), EXITS_PER_FIRST)):
            if tried >= MAX_PAIRS:
                return
            tried += 1
            yield first, exit_, seal_keys[exit_.node_id]
