"""What a node and the fleet keep across a restart: rules, bans, allowlist and policy, on `rayfleet.durable`.

Streams (one `DurableMap` each), under `mitigation/<fleet>/<node_id>`:
  /rules   rule id → the rule (pattern, action, severity, created_at)
  /bans    source key → {ip, reason, source, expires (Unix seconds)}
  /allow   source key → {ip, reason, created_at}
  /policy  "changes" → settings the fleet's policy changed; "geo" → {country: [prefix, ...]};
           "port" → the data-plane port the node picked (a restarted node listens on the same one);
           "generation" → the fleet generation of the last share or lift it took (older fleet
           messages are refused); "schema" → 2 once every rule, ban and allowlist entry says its source
Rules, bans and allowlist entries carry `source` (`fleet` for what the fleet pushed, with its
`generation`; `api`, `escalation/<kind>` or `waf` for the node's own); see fleet_share.py.
  /tls     "pair" → {cert_pem, key_pem, configured}: the certificate served since a hot replacement,
           kept while `configured` (the files, or "demo", it replaced) stays the same

The fleet actor's own streams, under `mitigation/<fleet>`:
  /fleet   "policy" (the policy in force: one rule of each kind, named after the last deployed),
           "policy_by" (kind → the name of the policy it came from), "changes", "geo", "counter" (last node number),
           "nodes" (the ids of the nodes it runs: a restarted fleet brings the same ones back)
  /rules, /bans, /allow   the fleet-wide rules, bans and allowlist every node is given

Every change is recorded before it reaches HAProxy; a restarted node actor opens the same
streams (fencing the instance it replaces) and renders its new HAProxy from them.
"""

from __future__ import annotations

import time
from typing import Any

from actors.mitigation.fleet_share import migrated_source
from actors.mitigation.rules import CustomRule
from rayfleet.durable import DurableMap, RecordStore, open_store

SCHEMA = 2  # 2: every rule, ban and allowlist entry says its source


def live_bans(bans: DurableMap, now: float | None = None) -> dict[str, dict[str, Any]]:
    """The bans of `bans` still in force; expired ones are deleted from the record, never replayed."""
    now = time.time() if now is None else now
    live: dict[str, dict[str, Any]] = {}
    for key, entry in bans.items():
        if entry["expires"] > now:
            live[key] = dict(entry)
        else:
            bans.delete(key)
    return live


def put(durable: DurableMap, memory: dict[str, Any], key: str, value: Any | None) -> None:
    """Record `key` (None: its deletion), then hold it in `memory`, the actor's working copy."""
    if value is None:
        durable.delete(key)
        memory.pop(key, None)
    else:
        durable.set(key, value)
        memory[key] = value


def stream_prefix(fleet: str, node_id: str) -> str:
    return f"mitigation/{fleet}/{node_id}" if fleet else f"mitigation/{node_id}"


class NodeState:
    """The durable maps of one node, opened (and replayed) when the node actor starts."""

    def __init__(self, prefix: str, store: RecordStore | None = None) -> None:
        self.prefix = prefix
        self.store = store or open_store()
        self.rules = DurableMap(self.store, f"{prefix}/rules")
        self.bans = DurableMap(self.store, f"{prefix}/bans")
        self.allow = DurableMap(self.store, f"{prefix}/allow")
        self.policy = DurableMap(self.store, f"{prefix}/policy")
        self.tls = DurableMap(self.store, f"{prefix}/tls")

    def replay_rules(self) -> dict[str, CustomRule]:
        fields = set(CustomRule.__dataclass_fields__)
        return {key: CustomRule(**{k: v for k, v in value.items() if k in fields}) for key, value in self.rules.items()}

    def replay_bans(self, now: float | None = None) -> dict[str, dict[str, Any]]:
        """The bans still in force; the expired ones are deleted here, never put back into HAProxy."""
        return live_bans(self.bans, now)

    def migrate_sources(self, fleet_keys: dict[str, set[str]]) -> int:
        """Schema 1 → 2: give every stored rule, ban and allowlist entry without a `source` one: `fleet`
        when the fleet holds its key (`fleet_keys` by kind), else `api` (the node's own). Runs once
        (the schema is recorded), in one transaction per stream; returns how many entries changed."""
        if self.policy.get("schema", 1) >= SCHEMA:
            return 0
        changed = 0
        for kind, durable in (("rules", self.rules), ("bans", self.bans), ("allow", self.allow)):
            keys = fleet_keys.get(kind, set())
            updates = {k: migrated_source(v, k, keys) for k, v in durable.items() if not v.get("source")}
            if updates:
                durable.set_many(updates)
                changed += len(updates)
        self.policy.set("schema", SCHEMA)
        return changed

    def forget(self) -> None:
        """A node removed on purpose (scale-down): nothing of it is replayed later."""
        for durable in (self.rules, self.bans, self.allow, self.policy, self.tls):
            durable.clear()


class FleetState:
    """The durable maps of the fleet actor (see the module docstring)."""

    def __init__(self, fleet: str, store: RecordStore | None = None) -> None:
        self.store = store or open_store()
        prefix = f"mitigation/{fleet}"
        self.fleet = DurableMap(self.store, f"{prefix}/fleet")
        self.rules = DurableMap(self.store, f"{prefix}/rules")
        self.bans = DurableMap(self.store, f"{prefix}/bans")
        self.allow = DurableMap(self.store, f"{prefix}/allow")

    def live_bans(self, now: float | None = None) -> dict[str, dict[str, Any]]:
        return live_bans(self.bans, now)
