"""Limits checked on raw request bytes, before any JSON parse.

``nesting_depth_exceeds`` walks the body once with one compiled pattern that skips
string literals whole (a bracket inside a string does not nest) and stops at the first
bracket past the limit, so a body of ``[[[[...`` costs at most ``limit`` steps and a
normal body one linear pass in C-speed regex matching. ``parse_object`` then parses with
non-finite numbers (``NaN``, ``Infinity``, ``1e999``) refused: a client's bad number is a
400, never an upstream error.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_STRUCTURE = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
# Bodies are parsed only after the depth check; this bounds the C parser's recursion
# when a deployment turns the security pipeline's depth limit off.
HARD_DEPTH_LIMIT = 512


class NonFiniteNumber(ValueError):
    pass


def nesting_depth_exceeds(raw: bytes, limit: int) -> bool:
    """True when ``raw`` opens more than ``limit`` nested arrays/objects at some point."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    for match in _STRUCTURE.finditer(raw):
        first = match.group()[0]
        if first in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif first in _CLOSE:
            depth -= 1
    return False


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NonFiniteNumber(f"number {text[:32]!r} is out of range")
    return value


def _constant(name: str) -> Any:
    raise NonFiniteNumber(f"{name} is not a valid JSON number")


def loads(raw: bytes) -> Any:
    """``json.loads`` refusing non-finite numbers; raises ``ValueError`` on any bad input."""
    try:
        return json.loads(raw, parse_float=_finite, parse_constant=_constant)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
