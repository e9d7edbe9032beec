"""Small security primitives shared by every component."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Sequence


def constant_time_equals(supplied: str | bytes | None, expected: str | bytes | None) -> bool:
    """Compare two secrets in time independent of where they differ.

    ``None`` or an empty expected value never matches: a service without a
    configured key must not accept an empty one.
    """
    if supplied is None or not expected:
        return False
    a = supplied.encode() if isinstance(supplied, str) else supplied
    b = expected.encode() if isinstance(expected, str) else expected
    return hmac.compare_digest(a, b)


def match_key(supplied: str | None, keys: Sequence[str]) -> int | None:
    """The index of the key `supplied` equals; every key is compared, whichever matches."""
    found: int | None = None
    for index, key in enumerate(keys):
        if constant_time_equals(supplied, key) and found is None:
            found = index
    return found


def matches_any(supplied: str | None, keys: Sequence[str]) -> bool:
    """Constant-time membership: every key is compared, whichever matches."""
    return match_key(supplied, keys) is not None


def new_token(nbytes: int = 24) -> str:
    """A URL-safe random token (hex, so it survives any shell or header)."""
    return secrets.token_hex(nbytes)
