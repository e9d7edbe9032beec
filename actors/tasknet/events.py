"""Signed events: every mutation of the network is one, chained per author.

An event is `{author, key, seq, hlc, channel, type, payload, prev, sig}`. `key` is the
author's Ed25519 public key (the author id derives from it, so events certify
themselves), `prev` is the id of the author's previous event (empty for seq 1) and
`sig` signs the canonical JSON of everything else. Anonymous votes have no author:
author `anon`, seq 0, no signature; a ring signature inside the payload authenticates them.
"""

from __future__ import annotations

from typing import Any

from actors.tasknet.canonical import canonical, digest
from actors.tasknet.identity import Identity, node_id_of, verify

ANON = "anon"
MAX_EVENT_BYTES = 64 * 1024
FIELDS = ("author", "key", "seq", "hlc", "channel", "type", "payload", "prev")


class EventError(ValueError):
    """An event that is malformed or not authentic."""


def body(event: dict[str, Any]) -> dict[str, Any]:
    return {k: event[k] for k in FIELDS}


def event_id(event: dict[str, Any]) -> str:
    return digest(body(event))


def make_event(
    identity: Identity, seq: int, prev: str, hlc: list[int], channel: str, type_: str, payload: dict[str, Any]
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "author": identity.node_id,
        "key": identity.public_key,
        "seq": seq,
        "hlc": hlc,
        "channel": channel,
        "type": type_,
        "payload": payload,
        "prev": prev,
    }
    event["sig"] = identity.sign(canonical(body(event)))
    event["id"] = event_id(event)
    return event


def make_anonymous(hlc: list[int], channel: str, type_: str, payload: dict[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = {
        "author": ANON,
        "key": "",
        "seq": 0,
        "hlc": hlc,
        "channel": channel,
        "type": type_,
        "payload": payload,
        "prev": "",
        "sig": "",
    }
    event["id"] = event_id(event)
    return event


def check_shape(event: Any) -> dict[str, Any]:
    """The event with its id recomputed, or EventError when it is malformed or forged."""
    if not isinstance(event, dict):
        raise EventError("event must be an object")
    for name, kind in (
        ("author", str),
        ("key", str),
        ("seq", int),
        ("channel", str),
        ("type", str),
        ("payload", dict),
        ("prev", str),
        ("sig", str),
    ):
        if not isinstance(event.get(name), kind) or isinstance(event.get(name), bool):
            raise EventError(f"event field {name} is missing or of the wrong type")
    hlc = event.get("hlc")
    if not (isinstance(hlc, list) and len(hlc) == 2 and all(isinstance(v, int) and v >= 0 for v in hlc)):
        raise EventError("event hlc must be [wall_ms, counter]")
    if len(event["channel"]) > 64 or len(event["type"]) > 64:
        raise EventError("event channel or type too long")
    try:
        raw = canonical(body(event))
    except (TypeError, ValueError) as exc:
        raise EventError(f"event is not canonical JSON: {exc}") from exc
    if len(raw) > MAX_EVENT_BYTES:
        raise EventError("event too large")
    clean = {**body(event), "sig": event["sig"], "id": digest(body(event))}
    if event["author"] == ANON:
        if event["seq"] != 0 or event["key"] or event["sig"] or event["prev"]:
            raise EventError("anonymous events carry no author chain")
        return clean
    try:
        derived = node_id_of(event["key"])
    except ValueError as exc:
        raise EventError("event key is not base64") from exc
    if derived != event["author"]:
        raise EventError("event author does not match its key")
    if event["seq"] < 1:
        raise EventError("event seq starts at 1")
    if not verify(event["key"], raw, event["sig"]):
        raise EventError("event signature is invalid")
    return clean


def order_key(event: dict[str, Any]) -> tuple[int, int, str, int, str]:
    """The total order every node folds events in."""
    return (event["hlc"][0], event["hlc"][1], event["author"], event["seq"], event["id"])
