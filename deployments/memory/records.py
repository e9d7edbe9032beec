"""Validation of user input and the public shape of a memory record."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from deployments.memory.errors import UsageError

MAX_KEY_CHARS = 512
MAX_SCOPE_CHARS = 200
MAX_VALUE_BYTES = 1024 * 1024
MAX_TAGS = 64
MAX_TAG_CHARS = 100
ALL_SCOPES = "*"

COLUMNS = (
    "m.id, m.scope, m.key, m.value, m.tags, m.pinned, m.archived, m.origin, m.verified_at, "
    "m.created_at, m.updated_at, m.embedding_model, m.embedding IS NOT NULL AS has_embedding"
)


def now_ms() -> int:
    return int(time.time() * 1000)


def iso(ms: int) -> str | None:
    """Milliseconds since the epoch as an ISO-8601 UTC string; None for 0 (never)."""
    if not ms:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def _check_text(name: str, text: object, limit: int) -> str:
    if not isinstance(text, str):
        raise UsageError(f"{name} must be a string")
    if not text.strip():
        raise UsageError(f"{name} must not be empty")
    if len(text) > limit:
        raise UsageError(f"{name} is longer than {limit} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise UsageError(f"{name} must not contain control characters")
    return text


def check_key(key: object) -> str:
    return _check_text("key", key, MAX_KEY_CHARS)


def check_scope(scope: object, allow_all: bool = False) -> str:
    text = _check_text("scope", scope, MAX_SCOPE_CHARS)
    if text == ALL_SCOPES and not allow_all:
        raise UsageError("scope '*' (all scopes) is only valid for list, pinned and search")
    return text


def check_value(value: object) -> str:
    if not isinstance(value, str):
        raise UsageError("value must be a string")
    if not value.strip():
        raise UsageError("value must not be empty")
    if len(value.encode("utf-8", "surrogatepass")) > MAX_VALUE_BYTES:
        raise UsageError(f"value is larger than {MAX_VALUE_BYTES} bytes")
    if "\x00" in value:
        raise UsageError("value must not contain NUL characters")
    return value


def normalize_tags(tags: object) -> list[str]:
    """Tags from a comma-separated string or a list: trimmed, de-duplicated, order kept."""
    if tags is None:
        return []
    if isinstance(tags, str):
        items: Iterable[object] = tags.split(",")
    elif isinstance(tags, (list, tuple)):
        items = tags
    else:
        raise UsageError("tags must be a comma-separated string or a list of strings")
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise UsageError("every tag must be a string")
        tag = item.strip()
        if not tag:
            continue
        if "," in tag or any(ord(c) < 32 for c in tag):
            raise UsageError(f"invalid tag {tag!r}")
        if len(tag) > MAX_TAG_CHARS:
            raise UsageError(f"tag longer than {MAX_TAG_CHARS} characters")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise UsageError(f"at most {MAX_TAGS} tags")
    return out


def uri(scope: str, key: str) -> str:
    return f"memory:///{quote(scope, safe='')}/{quote(key, safe='')}"


def to_record(row: sqlite3.Row) -> dict[str, Any]:
    """A database row (selected with COLUMNS) as the public JSON record."""
    return {
        "scope": row["scope"],
        "key": row["key"],
        "value": row["value"],
        "tags": [t for t in row["tags"].split(",") if t],
        "pinned": bool(row["pinned"]),
        "archived": bool(row["archived"]),
        "origin": row["origin"] or None,
        "verified_at": iso(row["verified_at"]),
        "created_at": iso(row["created_at"]),
        "updated_at": iso(row["updated_at"]),
        "embedding_model": (row["embedding_model"] or None) if row["has_embedding"] else None,
        "uri": uri(row["scope"], row["key"]),
    }
