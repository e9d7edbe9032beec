"""`mem export` / `mem import`: every memory and link as JSON Lines, to move to another machine.

The file: a header line, then one line per memory, then one line per link::

    {"type": "header", "format": "mem-export", "version": 1, "schema": 5, "exported_at": ..., "count": ...}
    {"type": "memory", "scope", "key", "value", "tags", "pinned", "archived", "origin",
     "verified_at", "created_at", "updated_at", "embedding"?, "embedding_model"?}
    {"type": "link", "from": {"scope", "key"}, "rel", "to": {"scope", "key"}, "created_at"}

Links name their ends by (scope, key), never by the database's row ids, so they survive the
move. Vectors travel as base64 float32 with their model, so hybrid search works on the new
machine without asking the embeddings endpoint again (for the same model).

Import checks every line before it writes anything, then writes all of it in one
transaction: a bad line (its number is named), a link to a memory that is in neither the
file nor the database, or (with `on_conflict="fail"`, the default) a key that already
exists, and nothing is written.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator
from typing import Any

from deployments.memory import schema
from deployments.memory.errors import ConflictError, UsageError
from deployments.memory.records import check_key, check_scope, check_value, normalize_tags, now_ms
from deployments.memory.store import REL_PATTERN, Store

FORMAT = "mem-export"
VERSION = 1
MAX_VECTOR_BYTES = 64 * 1024
ON_CONFLICT = ("fail", "skip", "replace")
_MEMORY_FIELDS = {
    "type",
    "scope",
    "key",
    "value",
    "tags",
    "pinned",
    "archived",
    "origin",
    "verified_at",
    "created_at",
    "updated_at",
    "embedding",
    "embedding_model",
}


def export_lines(store: Store, scope: str | None = None) -> Iterator[str]:
    """The export of one scope (None: every scope), line by line, newline included."""
    where, params = ("WHERE scope = ?", (check_scope(scope),)) if scope else ("", ())
    rows = store.conn.execute(
        "SELECT id, scope, key, value, tags, pinned, archived, origin, verified_at, created_at, updated_at, "
        f"embedding, embedding_model FROM memories {where} ORDER BY scope, key",
        params,
    ).fetchall()
    ids = {row["id"]: (row["scope"], row["key"]) for row in rows}
    links = [
        link
        for link in store.conn.execute(
            "SELECT from_id, rel, to_id, created_at FROM memory_links ORDER BY from_id, rel, to_id"
        ).fetchall()
        if link["from_id"] in ids and link["to_id"] in ids
    ]
    header = {"type": "header", "format": FORMAT, "version": VERSION, "schema": schema.LATEST}
    header |= {"exported_at": now_ms(), "count": len(rows), "links": len(links)}
    yield json.dumps(header) + "\n"
    for row in rows:
        item: dict[str, Any] = {"type": "memory", "scope": row["scope"], "key": row["key"], "value": row["value"]}
        item["tags"] = [t for t in row["tags"].split(",") if t]
        item |= {"pinned": bool(row["pinned"]), "archived": bool(row["archived"]), "origin": row["origin"]}
        item |= {k: row[k] for k in ("verified_at", "created_at", "updated_at")}
        if row["embedding"] is not None:
            item["embedding"] = base64.b64encode(row["embedding"]).decode("ascii")
            item["embedding_model"] = row["embedding_model"]
        yield json.dumps(item, ensure_ascii=False) + "\n"
    for link in links:
        (fs, fk), (ts, tk) = ids[link["from_id"]], ids[link["to_id"]]
        end = {"from": {"scope": fs, "key": fk}, "rel": link["rel"], "to": {"scope": ts, "key": tk}}
        yield json.dumps({"type": "link", **end, "created_at": link["created_at"]}, ensure_ascii=False) + "\n"


def _int(item: dict[str, Any], name: str, default: int) -> int:
    value = item.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UsageError(f"{name} must be a non-negative integer")
    return value


def _memory(item: dict[str, Any]) -> dict[str, Any]:
    unknown = set(item) - _MEMORY_FIELDS
    if unknown:
        raise UsageError(f"unknown fields {sorted(unknown)}")
    out: dict[str, Any] = {"scope": check_scope(item.get("scope")), "key": check_key(item.get("key"))}
    out |= {"value": check_value(item.get("value")), "tags": ",".join(normalize_tags(item.get("tags", [])))}
    for flag in ("pinned", "archived"):
        if not isinstance(item.get(flag, False), bool):
            raise UsageError(f"{flag} must be true or false")
        out[flag] = int(item.get(flag, False))
    origin = item.get("origin", "")
    if not isinstance(origin, str) or len(origin) > 2048:
        raise UsageError("origin must be a string of at most 2048 characters")
    out["origin"] = origin
    now = now_ms()
    out |= {k: _int(item, k, now if k != "verified_at" else 0) for k in ("verified_at", "created_at", "updated_at")}
    out["embedding"], out["embedding_model"] = _vector(item)
    return out


def _vector(item: dict[str, Any]) -> tuple[bytes | None, str]:
    raw, model = item.get("embedding"), item.get("embedding_model", "")
    if raw is None:
        return None, ""
    if not isinstance(raw, str) or not isinstance(model, str) or not model:
        raise UsageError("embedding must be base64 text with a non-empty embedding_model")
    try:
        blob = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise UsageError("embedding is not valid base64") from None
    if not blob or len(blob) % 4 or len(blob) > MAX_VECTOR_BYTES:
        raise UsageError("embedding must be 1 to 16384 float32 values")
    return blob, model


def _end(item: dict[str, Any], name: str) -> tuple[str, str]:
    end = item.get(name)
    if not isinstance(end, dict) or set(end) != {"scope", "key"}:
        raise UsageError(f'link {name!r} must be {{"scope", "key"}}')
    return check_scope(end["scope"]), check_key(end["key"])


def _link(item: dict[str, Any]) -> tuple[tuple[str, str], str, tuple[str, str], int]:
    if set(item) - {"type", "from", "rel", "to", "created_at"}:
        raise UsageError(f"unknown fields {sorted(set(item) - {'type', 'from', 'rel', 'to', 'created_at'})}")
    rel = item.get("rel")
    if not isinstance(rel, str) or not REL_PATTERN.match(rel):
        raise UsageError("rel must be 1-64 letters, digits or _.:- starting with a letter or digit")
    return _end(item, "from"), rel, _end(item, "to"), _int(item, "created_at", now_ms())


def parse(lines: Iterable[str]) -> tuple[list[dict[str, Any]], list[tuple[tuple[str, str], str, tuple[str, str], int]]]:
    """(memories, links) of an export, every line checked; UsageError naming the first bad line."""
    memories: list[dict[str, Any]] = []
    links: list[tuple[tuple[str, str], str, tuple[str, str], int]] = []
    seen_header = False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise UsageError("not a JSON object")
            kind = item.get("type")
            if kind == "header":
                if seen_header or item.get("format") != FORMAT or item.get("version") != VERSION:
                    raise UsageError(f"not a {FORMAT} version {VERSION} header")
                seen_header = True
            elif not seen_header:
                raise UsageError(f"the first line must be the {FORMAT} header")
            elif kind == "memory":
                memories.append(_memory(item))
            elif kind == "link":
                links.append(_link(item))
            else:
                raise UsageError(f"unknown line type {str(kind)[:20]!r}")
        except ValueError as exc:
            raise UsageError(f"import line {number}: not JSON ({exc})") from None
        except UsageError as exc:
            raise UsageError(f"import line {number}: {exc.message}") from None
    if not seen_header:
        raise UsageError(f"empty import: no {FORMAT} header")
    return memories, links


def import_lines(store: Store, lines: Iterable[str], on_conflict: str = "fail") -> dict[str, Any]:
    """Check the whole export, then write it in one transaction (all of it or none)."""
    if on_conflict not in ON_CONFLICT:
        raise UsageError(f"on_conflict must be one of {', '.join(ON_CONFLICT)}")
    memories, links = parse(lines)
    keys = [(m["scope"], m["key"]) for m in memories]
    if len(set(keys)) != len(keys):
        raise UsageError("the import names the same (scope, key) twice")
    with store.write() as conn:
        ids = {(r["scope"], r["key"]): r["id"] for r in conn.execute("SELECT id, scope, key FROM memories")}
        clashes = sorted(f"{s}/{k}" for s, k in keys if (s, k) in ids)
        if clashes and on_conflict == "fail":
            raise ConflictError(f"{len(clashes)} keys already exist (e.g. {clashes[0]}); use --on-conflict")
        written = skipped = 0
        for m in memories:
            at = (m["scope"], m["key"])
            if at in ids and on_conflict == "skip":
                skipped += 1
                continue
            cols = list(m)
            if at in ids:  # replace in place: the row keeps its id, so other memories' links stay
                conn.execute(
                    f"UPDATE memories SET {', '.join(f'{c} = ?' for c in cols)} WHERE id = ?",
                    [*(m[c] for c in cols), ids[at]],
                )
            else:
                cur = conn.execute(
                    f"INSERT INTO memories ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                    [m[c] for c in cols],
                )
                ids[at] = int(cur.lastrowid or 0)
            written += 1
        for start, rel, end, created in links:
            if start not in ids or end not in ids:
                missing = start if start not in ids else end
                raise UsageError(f"link {rel!r} names {missing[0]}/{missing[1]}, in neither the file nor the database")
            conn.execute(
                "INSERT OR IGNORE INTO memory_links (from_id, rel, to_id, created_at) VALUES (?, ?, ?, ?)",
                (ids[start], rel, ids[end], created),
            )
    return {"imported": written, "skipped": skipped, "links": len(links), "on_conflict": on_conflict}
