"""Linkable ring signatures: members sign anonymously, forgeries and outsiders fail, images link."""

from actors.tasknet.ring import RingKey, sign, verify

KEYS = [RingKey.from_seed(bytes([i]) * 32) for i in range(5)]
RING = [k.public for k in KEYS]
CTX = b"proposal-1"


def test_a_member_signs_and_everyone_verifies():
    sig = sign(KEYS[2], RING, CTX, b"yes")
    assert verify(RING, CTX, b"yes", sig)


def test_the_message_is_bound():
    sig = sign(KEYS[2], RING, CTX, b"yes")
    assert not verify(RING, CTX, b"no", sig)


def test_a_forged_response_fails():
    sig = sign(KEYS[1], RING, CTX, b"yes")
    s = list(sig["s"])
    s[0] = format((int(s[0], 16) + 1), "064x")
    assert not verify(RING, CTX, b"yes", {**sig, "s": s})


def test_a_non_member_cannot_sign_and_a_swapped_ring_fails():
    outsider = RingKey.from_seed(b"x" * 32)
    ring_with_outsider = [*RING[:4], outsider.public]
    sig = sign(outsider, ring_with_outsider, CTX, b"yes")
    assert verify(ring_with_outsider, CTX, b"yes", sig)
    assert not verify(RING, CTX, b"yes", sig)


def test_key_image_is_stable_per_proposal_and_unlinkable_across():
    a = sign(KEYS[3], RING, CTX, b"yes")
    b = sign(KEYS[3], RING, CTX, b"no")
    c = sign(KEYS[3], RING, b"proposal-2", b"yes")
    assert a["key_image"] == b["key_image"]
    assert a["key_image"] != c["key_image"]
    assert not verify(RING, b"proposal-2", b"yes", a)


def test_a_replayed_image_with_a_different_key_fails():
    a = sign(KEYS[0], RING, CTX, b"yes")
    b = sign(KEYS[1], RING, CTX, b"yes")
    assert not verify(RING, CTX, b"yes", {**b, "key_image": a["key_image"]})


def test_malformed_signatures_fail():
    assert not verify(RING, CTX, b"yes", {"key_image": "zz", "c0": "1", "s": ["1"] * 5})
    assert not verify(RING, CTX, b"yes", {"c0": "1"})
    assert not verify([], CTX, b"yes", {"key_image": RING[0], "c0": "1", "s": []})
