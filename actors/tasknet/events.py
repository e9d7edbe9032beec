"""Signed events: every mutation of the network is one, chained per author.

An event is `{author, key, seq, hlc, channel, type, payload, prev, sig}`. `key` is the
author's Ed25519 public key (the author id derives from it, so events certify
themselves), `prev` is the id of the author's previous event (empty for seq 1) and
`sig` signs the canonical JSON of everything else. Anonymous votes have no author:
author `anon`, seq 0, no signature; a ring signature inside the payload authenticates them.
"""

from __future__ import annotations

from typing import Any, cast

from actors.tasknet.canonical import canonical, digest
from actors.tasknet.identity import Identity, node_id_of, verify
from actors.tasknet.records import Event, Payload

ANON = "anon"
MAX_EVENT_BYTES = 64 * 1024


class EventError(ValueError):
    """An event that is malformed or not authentic."""


class ChainError(EventError):
    """An authentic event that does not extend its author's chain as this node holds it (a fork's
    continuation, a clock that goes back): the author's doing, not that of the peer relaying it."""


def body(event: Event) -> dict[str, Any]:
    """What the signature covers: the event without `sig` and `id`."""
    return {
        "author": event["author"],
        "key": event["key"],
        "seq": event["seq"],
        "hlc": event["hlc"],
        "channel": event["channel"],
        "type": event["type"],
        "payload": event["payload"],
        "prev": event["prev"],
    }


def event_id(event: Event) -> str:
    return digest(body(event))


def make_event(
    identity: Identity, seq: int, prev: str, hlc: list[int], channel: str, type_: str, payload: Payload
) -> Event:
    event: Event = {
        "author": identity.node_id,
        "key": identity.public_key,
        "seq": seq,
        "hlc": hlc,
        "channel": channel,
        "type": type_,
        "payload": payload,
        "prev": prev,
        "sig": "",
        "id": "",
    }
    event["sig"] = identity.sign(canonical(body(event)))
    event["id"] = event_id(event)
    return event


def make_anonymous(hlc: list[int], channel: str, type_: str, payload: Payload) -> Event:
    event: Event = {
        "author": ANON,
        "key": "",
        "seq": 0,
        "hlc": hlc,
        "channel": channel,
        "type": type_,
        "payload": payload,
        "prev": "",
        "sig": "",
        "id": "",
    }
    event["id"] = event_id(event)
    return event


def check_shape(raw: object) -> Event:
    """The event with its id recomputed, or EventError when it is malformed or forged."""
    if not isinstance(raw, dict):
        raise EventError("event must be an object")
    fields: dict[str, Any] = raw
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
        if not isinstance(fields.get(name), kind) or isinstance(fields.get(name), bool):
            raise EventError(f"event field {name} is missing or of the wrong type")
    hlc = fields.get("hlc")

    if not (isinstance(hlc, list) and len(hlc) == 2 and all(isinstance(v, int) and v >= 0 for v in hlc)):
        raise EventError("event hlc must be [wall_ms, counter]")
    event = cast(Event, fields)
    if len(event["channel"]) > 64 or len(event["type"]) > 64:
        raise EventError("event channel or type too long")
    try:
        raw = canonical(body(event))
    except (TypeError, ValueError) as exc:
        raise EventError(f"event is not canonical JSON: {exc}") from exc
    if len(raw) > MAX_EVENT_BYTES:
        raise EventError("event too large")
    clean = cast(Event, {**body(event), "sig": event["sig"], "id": digest(body(event))})
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


def order_key(event: Event) -> tuple[int, int, str, int, str]:
    """The total order every node folds events in."""
    return (event["hlc"][0], event["hlc"][1], event["author"], event["seq"], event["id"])
