"""Canonical JSON (RFC 8785, JCS) for the values events carry.

Objects are serialised with keys sorted by their UTF-16 code units, no whitespace,
strings escaped minimally, numbers in ECMAScript form. Signatures and hashes are
always computed over these bytes, so two nodes agree on them whatever their dict order.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from typing import Any


def _number(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError("non-finite numbers have no canonical form")
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    exp = int(exponent)
    if -7 < exp < 21:
        return format(value, "f").rstrip("0").rstrip(".")
    return f"{mantissa}e{'+' if exp > 0 else '-'}{abs(exp)}"


_string = json.encoder.encode_basestring  # what json.dumps(s, ensure_ascii=False) does, without its overhead
_CONSTANTS = {None: "null", True: "true", False: "false"}


def _sorted_keys(value: dict[str, Any]) -> list[str]:
    """Keys in UTF-16 code unit order (for ASCII keys, the same as Python's code point order)."""
    keys = sorted(value)
    if all(isinstance(k, str) and k.isascii() for k in keys):
        return keys
    return sorted(value, key=lambda k: k.encode("utf-16-be"))


def _encode(value: Any, out: list[str], flush: Callable[[], None] | None = None) -> None:
    if value is None or value is True or value is False:
        out.append(_CONSTANTS[value])
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_number(value))
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out, flush)
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        if not all(isinstance(k, str) for k in value):
            raise TypeError("object keys must be strings")
        for i, key in enumerate(_sorted_keys(value)):
            if i:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _encode(value[key], out, flush)
        out.append("}")
    else:
        raise TypeError(f"{type(value).__name__} has no canonical JSON form")
    if flush is not None and len(out) >= 4096:
        flush()


def canonical(value: Any) -> bytes:
    """The RFC 8785 bytes of `value`."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out).encode("utf-8")


def digest(value: Any) -> str:
    """Hex SHA-256 of the canonical bytes, hashed as they are produced (a large state is never
    held twice, once as objects and once as its encoding)."""
    hasher = hashlib.sha256()
    out: list[str] = []

    def flush() -> None:
        hasher.update("".join(out).encode("utf-8"))
        out.clear()

    _encode(value, out, flush)
    flush()
    return hasher.hexdigest()
