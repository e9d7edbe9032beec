"""Peer envelopes and the peer registry: every way a remote node could cheat is refused."""

from __future__ import annotations

import pytest

from actors.tasknet.canonical import canonical
from actors.tasknet.identity import Identity
from actors.tasknet.ledger import Reject
from actors.tasknet.peering import (
    DROP_BELOW,
    MAX_PEERS,
    PENALTY_PER_INVALID,
    REPLAY_WINDOW_MS,
    SCORE_START,
    UNCONFIRMED_TTL_S,
    PeerRegistry,
    check_peer_url,
    envelope,
    open_envelope,
)

NOW = 1_800_000_000_000
ME = Identity.generate()


def _open(raw: dict, route: str = "events", now: int = NOW):
    return open_envelope(raw, route, ME.node_id, now)


def test_a_signed_envelope_opens_with_its_sender_and_body():
    peer = Identity.generate()
    opened = _open(envelope(peer, "events", ME.node_id, {"events": []}, NOW))
    assert (opened.sender, opened.key, opened.body) == (peer.node_id, peer.public_key, {"events": []})


@pytest.mark.parametrize(
    "tamper, message",
    [
        (lambda e, o: e.update(body={"events": [1]}), "signature invalid"),
        (lambda e, o: e.update(route="pull"), "for route"),
        (lambda e, o: e.update(to=o.node_id), "addressed to another node"),
        (lambda e, o: e.update(ts=NOW - REPLAY_WINDOW_MS - 1), "replay window"),
        (lambda e, o: e.update(ts=NOW + REPLAY_WINDOW_MS + 1), "replay window"),
        (lambda e, o: e.update(**{"from": o.node_id}), "does not derive"),
        (lambda e, o: e.update(key=o.public_key), "does not derive"),
        (lambda e, o: e.update(key="not base64!"), "not an Ed25519"),
    ],
)
def test_a_tampered_misaddressed_stale_or_impersonating_envelope_is_403(tamper, message):
    peer, other = Identity.generate(), Identity.generate()
    raw = envelope(peer, "events", ME.node_id, {"events": []}, NOW)
    tamper(raw, other)
    with pytest.raises(Reject) as err:
        _open(raw)
    assert err.value.status == 403 and message in err.value.message


def test_claiming_another_peers_id_needs_its_key_a_re_signed_envelope_still_fails():
    victim, attacker = Identity.generate(), Identity.generate()
    raw = envelope(attacker, "events", ME.node_id, {"events": []}, NOW)
    unsigned = {k: v for k, v in raw.items() if k != "sig"} | {"from": victim.node_id, "key": victim.public_key}
    raw = {**unsigned, "sig": attacker.sign(canonical(unsigned))}
    with pytest.raises(Reject, match="signature invalid"):
        _open(raw)


@pytest.mark.parametrize("raw", [None, [], {"route": "events"}, {**dict.fromkeys("abcdefgh", "")}])
def test_a_malformed_envelope_is_400(raw):
    with pytest.raises(Reject) as err:
        _open(raw)
    assert err.value.status == 400


def test_a_join_may_be_addressed_to_nobody_in_particular_other_routes_may_not():
    peer = Identity.generate()
    assert _open(envelope(peer, "join", "", {}, NOW), route="join").sender == peer.node_id
    with pytest.raises(Reject, match="addressed"):
        _open(envelope(peer, "events", "", {}, NOW))


@pytest.mark.parametrize(
    "url",
    [
        "ftp://h/tasknet",
        "http:///tasknet",
        "http://user:pw@h/tasknet",
        "http://user@h/tasknet",
        "http://h/tasknet?x=1",
        "http://h/t#f",
        "http://h:99999/",
        "h/tasknet",
    ],
)
def test_peer_urls_are_http_with_a_host_and_no_credentials(url):
    with pytest.raises(ValueError):
        check_peer_url(url)


def test_a_good_peer_url_loses_its_trailing_slash():
    assert check_peer_url("https://peer.example:8443/tasknet/n1/") == "https://peer.example:8443/tasknet/n1"


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _joined(registry: PeerRegistry, peer: Identity, now: int = NOW):
    return registry.join(_open(envelope(peer, "join", ME.node_id, {}, now), route="join"), "http://p/tasknet/n1")


def test_a_peer_must_join_before_it_pushes_and_its_first_push_confirms_it():
    registry = PeerRegistry(now=Clock())
    peer = Identity.generate()
    with pytest.raises(Reject, match="join first") as err:
        registry.admit(_open(envelope(peer, "events", ME.node_id, {}, NOW)))
    assert err.value.status == 403
    assert not _joined(registry, peer).confirmed
    assert registry.admit(_open(envelope(peer, "events", ME.node_id, {}, NOW))).confirmed


def test_a_replayed_envelope_is_refused_even_inside_the_window():
    registry = PeerRegistry(now=Clock())
    peer = Identity.generate()
    _joined(registry, peer)
    raw = envelope(peer, "events", ME.node_id, {}, NOW)
    registry.admit(_open(raw))
    with pytest.raises(Reject, match="replayed"):
        registry.admit(_open(raw, now=NOW + REPLAY_WINDOW_MS // 2))


def test_the_token_bucket_refuses_with_429_and_refills_with_time():
    clock = Clock()
    registry = PeerRegistry(rate=2, burst=3, now=clock)
    peer = Identity.generate()
    _joined(registry, peer)  # takes one token
    for _ in range(2):
        registry.admit(_open(envelope(peer, "events", ME.node_id, {}, NOW)))
    with pytest.raises(Reject) as err:
        registry.admit(_open(envelope(peer, "events", ME.node_id, {}, NOW)))
    assert err.value.status == 429
    clock.t += 0.5  # one token at 2/s
    registry.admit(_open(envelope(peer, "events", ME.node_id, {}, NOW)))


def test_joins_of_new_ids_share_one_bucket_fresh_keys_do_not_buy_more():
    registry = PeerRegistry(rate=1, burst=3, now=Clock())
    for _ in range(3):
        _joined(registry, Identity.generate())
    with pytest.raises(Reject) as err:
        _joined(registry, Identity.generate())
    assert err.value.status == 429 and len(registry.peers) == 3


def test_one_peers_rate_does_not_spend_anothers():
    registry = PeerRegistry(rate=1, burst=2, now=Clock())
    noisy, quiet = Identity.generate(), Identity.generate()
    _joined(registry, noisy)
    _joined(registry, quiet)
    registry.admit(_open(envelope(noisy, "events", ME.node_id, {}, NOW)))
    with pytest.raises(Reject):
        registry.admit(_open(envelope(noisy, "events", ME.node_id, {}, NOW)))
    registry.admit(_open(envelope(quiet, "events", ME.node_id, {}, NOW)))


def test_invalid_events_lower_the_score_and_a_peer_below_the_floor_is_dropped_for_good():
    registry = PeerRegistry(now=Clock())
    peer = Identity.generate()
    record = _joined(registry, peer)
    registry.penalize(record, 1)
    assert record.score == SCORE_START - PENALTY_PER_INVALID and not record.dropped
    registry.penalize(record, (SCORE_START - DROP_BELOW) // PENALTY_PER_INVALID)
    assert record.dropped
    for route in ("events", "join"):
        with pytest.raises(Reject, match="dropped") as err:
            admit = registry.join if route == "join" else registry.admit
            opened = _open(envelope(peer, route, ME.node_id, {}, NOW), route=route)
            admit(opened, None) if route == "join" else admit(opened)  # type: ignore[call-arg]
        assert err.value.status == 403


def test_the_registry_is_bounded_the_oldest_unconfirmed_entry_makes_room_and_confirmed_ones_stay():
    registry = PeerRegistry(rate=1000, burst=1000, now=Clock())
    for peer in [Identity.generate() for _ in range(MAX_PEERS - 1)]:
        _joined(registry, peer)
        registry.admit(_open(envelope(peer, "pull", ME.node_id, {}, NOW), route="pull"))
    stranger, newcomer = Identity.generate(), Identity.generate()
    _joined(registry, stranger)
    _joined(registry, newcomer)  # the full registry evicts the oldest unconfirmed entry: the stranger
    assert stranger.node_id not in registry.peers and newcomer.node_id in registry.peers
    registry.admit(_open(envelope(newcomer, "pull", ME.node_id, {}, NOW), route="pull"))
    with pytest.raises(Reject) as err:
        _joined(registry, Identity.generate())
    assert err.value.status == 503 and len(registry.peers) == MAX_PEERS


def test_an_unconfirmed_entry_expires():
    clock = Clock()
    registry = PeerRegistry(now=clock)
    peer = Identity.generate()
    _joined(registry, peer)
    clock.t += UNCONFIRMED_TTL_S + 1
    with pytest.raises(Reject, match="join first"):
        registry.admit(_open(envelope(peer, "pull", ME.node_id, {}, NOW), route="pull"))
