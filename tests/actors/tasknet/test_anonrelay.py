"""The choice of an anonymous vote's relays (actors/tasknet/anonrelay.py), over many draws: the first
relay is any reachable peer, a node actor or the remote end of a peer link, about equally often;
never the voter's node (even through a link configured back to it); the exit is never the voter's
node nor the first relay, and behind a remote first relay it may be any node with a seal key."""

from __future__ import annotations

import random
from collections import Counter

from actors.tasknet.anonrelay import EXITS_PER_FIRST, MAX_PAIRS, Relay, relay_pairs, relay_peers

ME = "me"
LOCAL = {"a2": "id-a2", "a3": "id-a3"}
LINKS = ["id-b1", ME]  # the second link is configured back to this very node
SEAL_KEYS = {i: f"key-{i}" for i in ("id-a2", "id-a3", "id-b1", "id-b2", "id-c1", ME)}


def test_every_reachable_peer_is_a_first_relay_about_equally_often_and_the_voter_never():
    peers = relay_peers(ME, LOCAL, LINKS)
    assert [p.name for p in peers] == ["a2", "a3", "peer:id-b1"]
    rng = random.Random(24)
    firsts: Counter[str] = Counter()
    for _ in range(3000):
        first, exit_, key = next(relay_pairs(ME, peers, SEAL_KEYS, rng))
        firsts[first.name] += 1
        assert ME not in (first.node_id, exit_.node_id) and exit_.node_id != first.node_id
        assert key == SEAL_KEYS[exit_.node_id]
        if first.remote:  # any node with a seal key but the voter and the first relay
            assert exit_.node_id in {"id-a2", "id-a3", "id-b2", "id-c1"}
        else:  # one of the voter's other peers
            assert exit_.node_id in {p.node_id for p in peers} - {first.node_id}
    assert set(firsts) == {"a2", "a3", "peer:id-b1"}
    assert all(900 <= n <= 1100 for n in firsts.values()), firsts  # 1000 each; 3.9 standard deviations


def test_exits_behind_a_remote_first_relay_are_named_by_their_link_or_actor():
    peers = relay_peers(ME, LOCAL, LINKS)
    rng = random.Random(7)
    behind_remote = {
        exit_.name
        for _ in range(500)
        for first, exit_, _ in [next(relay_pairs(ME, peers, SEAL_KEYS, rng))]
        if first.remote
    }
    assert behind_remote == {"a2", "a3", "peer:id-b2", "peer:id-c1"}


def test_the_pairs_tried_for_one_vote_are_bounded_and_a_first_relay_gets_at_most_a_few_exits():
    peers = [Relay(f"n{i}", f"id-{i}", False) for i in range(20)]
    keys = {p.node_id: "k" for p in peers}
    pairs = list(relay_pairs(ME, peers, keys, random.Random(1)))
    assert len(pairs) == MAX_PAIRS
    assert max(Counter(first.name for first, _, _ in pairs).values()) <= EXITS_PER_FIRST


def test_a_node_without_a_seal_key_is_never_an_exit():
    peers = relay_peers(ME, LOCAL, ["id-b1"])
    keys = {"id-a2": "k"}  # only a2 published a seal key
    for first, exit_, _ in relay_pairs(ME, peers, keys, random.Random(3)):
        assert exit_.node_id == "id-a2" and first.node_id != "id-a2"
