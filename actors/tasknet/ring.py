"""Linkable ring signatures (LSAG, Liu-Wei-Wong 2004) over secp256k1 (libsecp256k1 via coincurve).

An anonymous vote proves "I hold the secret key of one of these public keys" without
saying which, and carries a key image I = x * Hp(context). The image is the same for
the same key and context (the proposal), so it is the vote's nullifier: a second vote
by the same key on the same proposal is detected, while votes on different proposals
cannot be linked to each other or to a key.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from coincurve import PrivateKey, PublicKey

ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
DOMAIN = b"tasknet-lsag-v1"


class RingError(ValueError):
    """A key, image or signature that is not well formed."""


def _scalar_bytes(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _hash_scalar(*parts: bytes) -> int:
    h = hashlib.sha512()
    for part in parts:
        h.update(len(part).to_bytes(4, "big") + part)
    return int.from_bytes(h.digest(), "big") % ORDER


def hash_to_point(context: bytes) -> PublicKey:
    """A point whose discrete log nobody knows (try-and-increment on the x coordinate)."""
    counter = 0
    while True:
        x = hashlib.sha256(DOMAIN + b":hp:" + context + counter.to_bytes(4, "big")).digest()
        try:
            return PublicKey(b"\x02" + x)
        except ValueError:
            counter += 1


def point(data: str) -> PublicKey:
    try:
        return PublicKey(bytes.fromhex(data))
    except ValueError as exc:
        raise RingError("not a point of the curve") from exc


def _mul(p: PublicKey, k: int) -> PublicKey:
    return p.multiply(_scalar_bytes(k))


def _base(k: int) -> PublicKey:
    return PrivateKey(_scalar_bytes(k)).public_key


def _add(a: PublicKey, b: PublicKey) -> PublicKey:
    return PublicKey.combine_keys([a, b])


@dataclass(frozen=True)
class RingKey:
    """A secret scalar and its public point (hex of the compressed encoding)."""

    secret: int

    @classmethod
    def from_seed(cls, seed: bytes) -> RingKey:
        return cls(_hash_scalar(DOMAIN, b"key", seed) or 1)

    @property
    def public(self) -> str:
        return _base(self.secret).format().hex()

    def key_image(self, context: bytes) -> str:
        return _mul(hash_to_point(context), self.secret).format().hex()


def _challenge(ring: list[str], image: str, message: bytes, left: PublicKey, right: PublicKey) -> int:
    return _hash_scalar(DOMAIN, "|".join(ring).encode(), bytes.fromhex(image), message, left.format(), right.format())


class RingSignature(TypedDict):
    """An LSAG signature: the key image (the signer's nullifier for this context), c0 and the s values (hex)."""

    key_image: str
    c0: str
    s: list[str]


def _nonzero_random() -> int:
    while True:
        k = secrets.randbelow(ORDER)
        if k:
            return k


def sign(key: RingKey, ring: list[str], context: bytes, message: bytes) -> RingSignature:
    """Sign `message` as one anonymous member of `ring` (public keys in hex, own key included)."""
    own = key.public
    if own not in ring:
        raise RingError("the signer's key is not in the ring")
    n, pi = len(ring), ring.index(own)
    points = [point(p) for p in ring]
    hp = hash_to_point(context)
    image = key.key_image(context)
    image_point = point(image)
    while True:
        u = _nonzero_random()
        c = [0] * n
        s = [0] * n
        c[(pi + 1) % n] = _challenge(ring, image, message, _base(u), _mul(hp, u))
        i = (pi + 1) % n
        while i != pi:
            s[i] = _nonzero_random()
            left = _add(_base(s[i]), _mul(points[i], c[i]))
            right = _add(_mul(hp, s[i]), _mul(image_point, c[i]))
            c[(i + 1) % n] = _challenge(ring, image, message, left, right)
            i = (i + 1) % n
        s[pi] = (u - key.secret * c[pi]) % ORDER
        if s[pi] and all(c):
            return {"key_image": image, "c0": format(c[0], "064x"), "s": [format(v, "064x") for v in s]}


def verify(ring: list[str], context: bytes, message: bytes, signature: Mapping[str, object]) -> bool:
    """True when `signature` was made by the holder of one key of `ring` for this context and message."""
    try:
        image = str(signature["key_image"])
        c0 = int(str(signature["c0"]), 16)
        s_values = [int(str(v), 16) for v in signature["s"]]  # type: ignore[attr-defined]
        if len(s_values) != len(ring) or not ring or len(set(ring)) != len(ring):
            return False
        if not 0 < c0 < ORDER or not all(0 < v < ORDER for v in s_values):
            return False
        points = [point(p) for p in ring]
        image_point = point(image)
        hp = hash_to_point(context)
        c = c0
        for i, s_i in enumerate(s_values):
            left = _add(_base(s_i), _mul(points[i], c))
            right = _add(_mul(hp, s_i), _mul(image_point, c))
            c = _challenge(ring, image, message, left, right)
            if c == 0:
                return False
        return c == c0
    except (RingError, ValueError, KeyError, TypeError):
        return False
