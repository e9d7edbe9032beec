"""Conditional requests: parse `If-None-Match` (RFC 9110 §13.1.2).

The field is `*` or a comma-separated list of entity tags, each optionally
weak (`W/"..."`). If-None-Match uses the weak comparison: opaque tags are
compared with any `W/` prefix ignored.
"""

from __future__ import annotations


def quote(tag: str) -> str:
    return f'"{tag}"'


def _tags(value: str) -> list[str]:
    tags: list[str] = []
    i, n = 0, len(value)
    while i < n:
        while i < n and value[i] in " \t,":
            i += 1
        if i >= n:
            break
        if value.startswith("W/", i):
            i += 2
        if i < n and value[i] == '"':
            end = value.find('"', i + 1)
            if end < 0:
                break
            tags.append(value[i + 1 : end])
            i = end + 1
        else:
            end = value.find(",", i)
            end = n if end < 0 else end
            token = value[i:end].strip()
            if token:
                tags.append(token)
            i = end
    return tags


def none_match(header: str | None, current: str) -> bool:
    """True when `If-None-Match: header` matches the representation tagged `current`."""
    if header is None:
        return False
    if header.strip() == "*":
        return True
    return current in _tags(header)
