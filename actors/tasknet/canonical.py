"""Canonical JSON (RFC 8785, JCS) for the values events carry.

Objects are serialised with keys sorted by their UTF-16 code units, no whitespace,
strings escaped minimally, numbers in ECMAScript form. Signatures and hashes are
always computed over these bytes, so two nodes agree on them whatever their dict order.
"""

from __future__ import annotations

import hashlib
import json
import math
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


def _encode(value: Any, out: list[str]) -> None:
    if value is None or value is True or value is False:
        out.append(json.dumps(value))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_number(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        for i, key in enumerate(keys):
            if not isinstance(key, str):
                raise TypeError("object keys must be strings")
            if i:
                out.append(",")
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(":")
            _encode(value[key], out)
        out.append("}")
    else:
        raise TypeError(f"{type(value).__name__} has no canonical JSON form")


def canonical(value: Any) -> bytes:
    """The RFC 8785 bytes of `value`."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out).encode("utf-8")


def digest(value: Any) -> str:
    """Hex SHA-256 of the canonical bytes."""
    return hashlib.sha256(canonical(value)).hexdigest()
