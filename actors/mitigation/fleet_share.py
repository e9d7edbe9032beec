"""What every node of a fleet must enforce, and how a node holds it beside its own entries.

A node given its fleet's share renders it into its first HAProxy configuration and map files, so
the data plane never listens without the fleet's bans, allowlist, rules and policy. Handing them
over through the runtime API once HAProxy listens would leave a window in which a banned source
is served. A running node that missed changes (it did not answer) is given the share again
(`MitigationNode.sync_share`), and a lift reaches a node as the set of keys the fleet still holds
(`MitigationNode.forget_lifted`): both go through `reconcile` here.

Every item the fleet pushes is held with `source: fleet` and the fleet's `generation` when it was
pushed; a node drops such an item once a share or a lift of a later generation leaves it out, and
never drops an entry of its own (`source` api, escalation/<kind>, waf). The fleet's ban on a source
the node banned itself keeps the node's entry (its longer expiry enforced, the node's own noted in
`own_expires` and put back when the fleet lifts its ban). A fleet message older than the last share
or lift a node took is refused (`stale_generation`): a replay cannot bring a lifted item back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FLEET = "fleet"
KINDS = ("rules", "allow", "bans")


@dataclass(frozen=True)
class FleetShare:
    changes: dict[str, Any] = field(default_factory=dict)  # settings the fleet's policy changed
    geo: dict[str, list[str]] | None = None  # the policy's geo prefixes ({}: removed; None: never set)
    rules: list[dict[str, Any]] = field(default_factory=list)  # fleet-wide rules (id, pattern, action, severity)
    allow: list[dict[str, Any]] = field(default_factory=list)  # the fleet's allowlist (ip, reason)
    bans: list[dict[str, Any]] = field(default_factory=list)  # fleet-wide bans (ip, reason, expires: Unix seconds)
    generation: int = 0  # the fleet's change counter when this share was taken

    def items(self, kind: str) -> dict[str, dict[str, Any]]:
        """The share's items of `kind` by key (a rule's id, a source's address)."""
        if kind == "rules":
            return {rule["id"]: rule for rule in self.rules}
        return {item["ip"]: item for item in (self.allow if kind == "allow" else self.bans)}


def stale_generation(generation: int, floor: int) -> str | None:
    """Why a fleet message of `generation` is refused by a node that took a share or a lift of
    `floor` (None: it is not older)."""
    if generation < floor:
        return f"fleet generation {generation} is older than the {floor} this node took: a stale or replayed message"
    return None


def fleet_put(kind: str, held: dict[str, Any] | None, item: dict[str, Any], generation: int) -> dict[str, Any]:
    """What a node holds once the fleet puts `item` on a key where it held `held` (None: nothing)."""
    if held is not None and held.get("source") != FLEET:  # the node's own stays the node's
        if kind == "bans" and item["expires"] > held["expires"]:  # the fleet's longer ban is enforced
            own = held.get("own_expires", held["expires"])
            return {**held, "expires": int(item["expires"]), "own_expires": own, "fleet_generation": generation}
        return held
    if kind == "rules" and held is not None:  # a rule never changes under its id
        return held
    entry = {**item, "source": FLEET, "generation": generation}
    if kind == "bans":
        entry["expires"] = int(item["expires"])
    if kind == "allow" and held is not None:
        entry["created_at"] = held.get("created_at", entry.get("created_at", ""))
    return entry


def fleet_lift(held: dict[str, Any], generation: int, now: float) -> dict[str, Any] | None:
    """What stays of `held` once a share or lift of `generation` leaves its key out (None: nothing).
    An item the fleet pushed later than that generation stays (the lift was taken before it)."""
    if held.get("source") == FLEET:
        return held if held.get("generation", 0) > generation else None
    if "own_expires" in held and held.get("fleet_generation", 0) <= generation:
        own = {k: v for k, v in held.items() if k not in ("own_expires", "fleet_generation")}
        own["expires"] = held["own_expires"]
        return own if own["expires"] > now else None
    return held


def reconcile(
    kind: str,
    held: dict[str, dict[str, Any]],
    keep: set[str],
    wanted: dict[str, dict[str, Any]] | None,
    generation: int,
    now: float,
) -> dict[str, dict[str, Any]]:
    """What a node holds of `kind` once the fleet, at `generation`, holds the keys `keep` (and, for a
    share, the items `wanted`, put on the node): the node's own entries all stay."""
    out: dict[str, dict[str, Any]] = {}
    for key, entry in held.items():
        kept = entry if key in keep else fleet_lift(entry, generation, now)
        if kept is not None:
            out[key] = kept
    for key, item in (wanted or {}).items():
        out[key] = fleet_put(kind, out.get(key), item, generation)
    return out


def migrated_source(entry: dict[str, Any], key: str, fleet_keys: set[str]) -> dict[str, Any]:
    """An entry stored before entries carried `source`: the fleet's if the fleet holds its key, else the node's."""
    if entry.get("source"):
        return entry
    return {**entry, "source": FLEET if key in fleet_keys else "api"}
