"""The fleet actor behind the orchestrator API: node registry, health, policy, scaling, threats.

Node actors are created through `rayfleet.state.actor` (named Ray actors that Ray
places; in-process stand-ins without Ray). The fleet keeps what every node must
enforce (policy, fleet-wide rules and blacklist) and gives it to nodes added later.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from typing import Any, cast

from pydantic import ValidationError

from actors.mitigation.elastic import Autoscaler, NodeLoad
from actors.mitigation.fleet_counting import fleet_flooders
from actors.mitigation.fleet_share import FleetShare
from actors.mitigation.geo import GeoError, fetch_prefixes, normalise_countries
from actors.mitigation.node import MitigationNode, NodeError, ban_list, source_key
from actors.mitigation.node_state import FleetState, put
from actors.mitigation.rules import RuleError, new_rule
from actors.mitigation.settings import AutoscaleSettings, FleetSettings, NodeSettings
from actors.mitigation.webhooks import WebhookSender, event_payload
from rayfleet import state as rf_state
from rayfleet.logs import get_logger
from rayfleet.state import ActorHandle, call
from rayfleet.tasks import BackgroundTasks

log = get_logger("mitigation")
FLEET_ACTOR = "mitigation_fleet"
CALL_TIMEOUT = 30.0
AUTOSCALE_LOG = 20  # changes kept for GET /api/v1/autoscale


# the node settings each kind of policy rule changes
POLICY_KEYS: dict[str, tuple[str, ...]] = {
    "rate_limit": ("rate_limit_rps",),
    "geo_block": ("blocked_countries",),
    "client_address": ("accept_proxy", "trusted_proxies"),
    "tls": ("tls", "origin_tls"),
    "waf": ("waf",),
}
UNNAMED_POLICY = "(recorded before policies were merged)"


def _changes_of(rule: dict[str, Any]) -> dict[str, Any]:
    """The node settings a policy rule changes (geo_block: its countries, normalised by the caller)."""
    kind = rule["type"]
    if kind == "rate_limit":
        return {"rate_limit_rps": rule["value"]}
    if kind == "geo_block":
        return {"blocked_countries": rule["countries"]}
    if kind == "waf":
        return {"waf": {k: v for k, v in rule.items() if k != "type"}}
    return {key: rule[key] for key in POLICY_KEYS[kind]}


def _rule_of(kind: str, changes: dict[str, Any]) -> dict[str, Any]:
    """The policy rule of `kind` that made `changes` (`_changes_of` the other way)."""
    if kind == "rate_limit":
        return {"type": kind, "value": changes["rate_limit_rps"]}
    if kind == "geo_block":
        return {"type": kind, "countries": changes["blocked_countries"]}
    if kind == "waf":
        return {"type": kind, **changes["waf"]}
    return {"type": kind, **{key: changes[key] for key in POLICY_KEYS[kind]}}


def node_actor_name(fleet: str, node_id: str) -> str:
    return f"{fleet}-{node_id}"


async def _within(awaitable: Any, seconds: float) -> Any:
    """Await with a deadline (asyncio.timeout: 3.11's wait_for can swallow a racing cancellation)."""
    async with asyncio.timeout(seconds):
        return await awaitable


class NodeEntry:
    def __init__(self, node_id: str, handle: ActorHandle[MitigationNode]) -> None:
        self.id = node_id
        self.handle = handle
        self.address = ""
        self.mode = ""
        self.status = "starting"
        # its start outlasted `node_start_timeout_s`: still `starting`, but watched by the heartbeat (which
        # finds it healthy once it answers, or dead after `dead_after_missed` silent beats)
        self.start_overdue = False
        # its start failed (not timed out): the actor may live on and answer heartbeats with no data plane,
        # which does not make it a node again; it is dead until a start succeeds (`_replace`)
        self.start_failed = False
        self.load = 0.0
        self.rate = 0  # requests (l7) or connections (syn) per second at the last heartbeat
        self.missed = 0
        self.last_heartbeat: float | None = None
        self.registered_at = time.time()
        self.actor_pid: int | None = None
        self.children: list[dict[str, Any]] = []
        self.served_total: int | None = None  # the node's served-requests counter at the last heartbeat
        self.served_at = 0.0
        self.served_rps: float | None = None  # served requests/s between the last two heartbeats

    def measure(self, served_total: int | None) -> None:
        """The served rate since the last heartbeat; a counter that went back (a new actor) starts again."""
        now = time.monotonic()
        previous, self.served_total = self.served_total, served_total
        if served_total is None or previous is None or served_total < previous or now <= self.served_at:
            self.served_rps = None
        else:
            self.served_rps = (served_total - previous) / (now - self.served_at)
        self.served_at = now

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "address": self.address,
            "status": self.status,
            "mode": self.mode,
            "load": self.load,
            "last_heartbeat": self.last_heartbeat,
            "actor_pid": self.actor_pid,
            "children": self.children,
        }


class MitigationFleet:
    def __init__(self, settings: dict[str, Any] | FleetSettings, name: str = FLEET_ACTOR) -> None:
        self.name = name
        self.settings = settings if isinstance(settings, FleetSettings) else FleetSettings.model_validate(settings)
        self.nodes: dict[str, NodeEntry] = {}
        # what the fleet kept from before a restart (node_state.FleetState)
        self.kept = FleetState(name)
        self.counter: int = self.kept.fleet.get("counter", 0)
        self.policy_changes: dict[str, Any] = dict(self.kept.fleet.get("changes") or {})
        # the policy in force (one rule of each kind a policy put and no removal took away), and the
        # name of the policy each kind came from
        self.policy, self.policy_by = self._kept_policy()
        self.geo_prefixes: dict[str, list[str]] = dict(self.kept.fleet.get("geo") or {})
        self.rules: dict[str, dict[str, Any]] = dict(self.kept.rules.items())
        self.blacklist: dict[str, dict[str, Any]] = self.kept.live_bans()
        self.allowlist: dict[str, dict[str, Any]] = dict(self.kept.allow.items())
        # bumped by every change of what the nodes must hold; each message to a node carries it
        self.generation: int = self.kept.fleet.get("generation", 0)
        self._geo_pending = False  # node.blocked_countries not applied yet (the ASN API did not answer)
        self._stale: set[str] = set()  # nodes that missed a change while unreachable: resynced when they answer
        self.webhooks = WebhookSender(self.settings.webhooks, lambda: self.kept.store, f"mitigation/{name}/webhooks")
        self.tasks = BackgroundTasks("mitigation")
        if self.kept.fleet.get("autoscale") is not None:  # set through PUT /api/v1/autoscale before a restart
            kept_autoscale = AutoscaleSettings.model_validate(self.kept.fleet.get("autoscale"))
            self.settings = self.settings.model_copy(update={"autoscale": kept_autoscale})
        self.autoscaler = Autoscaler(self.settings.autoscale)
        self.autoscale_current: dict[str, Any] | None = None
        self.autoscale_log: deque[dict[str, Any]] = deque(maxlen=AUTOSCALE_LOG)
        self._start_lock: asyncio.Lock | None = None
        self.started = False

    def _kept_policy(self) -> tuple[dict[str, Any] | None, dict[str, str]]:
        """The recorded policy in force and the policy each kind came from. A record from before
        `policy_by` holds the last policy alone while `changes` holds every kind the policies set:
        a kind in force there (not its configured value) that the policy does not list is put back,
        its rule rebuilt from the changes, from a policy whose name was not kept."""
        policy: dict[str, Any] | None = self.kept.fleet.get("policy")
        by: dict[str, str] | None = self.kept.fleet.get("policy_by")
        if by is not None:
            return policy, dict(by)
        rules = {rule["type"]: rule for rule in (policy or {}).get("rules", [])}
        by = {kind: str(policy["name"]) for kind in rules} if policy is not None else {}
        unset, now = self._unset(), self._node_settings().model_dump()
        for kind, keys in POLICY_KEYS.items():
            set_here = all(k in self.policy_changes for k in keys)
            if kind not in rules and set_here and any(now[k] != unset[k] for k in keys):
                rules[kind], by[kind] = _rule_of(kind, self.policy_changes), UNNAMED_POLICY
        if not rules:
            return None, {}
        return {"name": policy["name"] if policy is not None else UNNAMED_POLICY, "rules": list(rules.values())}, by

    def _unset(self) -> dict[str, Any]:
        """The node settings with no policy in force: no rate limit and no geo block, the
        configuration's client-address, TLS and WAF settings."""
        return {**self.settings.node.model_dump(), "rate_limit_rps": None, "blocked_countries": []}

    # -- lifecycle -------------------------------------------------------------
    async def ensure_started(self) -> int:
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if not self.started:
                self.started = True
                self.webhooks.start()
                kept = list(self.kept.fleet.get("nodes") or [])
                # a restarted fleet brings back the nodes it ran (each replays its own state)
                # a node that does not start in time is left dead, not raised: the heartbeat below
                # then watches it, so it joins once it answers (or is replaced)
                for node_id in kept:
                    await self._add_node(node_id, raise_failure=False)
                for _ in range(self.settings.initial_nodes if not kept else 0):
                    await self._add_node(raise_failure=False)
                self._geo_pending = bool(self.settings.node.blocked_countries) and "geo" not in self.kept.fleet
                await self._configured_geo()
                self.tasks.every(self.settings.heartbeat_interval_s, self.check_health, name="fleet-heartbeat")
                threshold = self.settings.fleet_flood_rps
                if threshold is not None:
                    self.tasks.every(
                        self.settings.fleet_count_interval_s,
                        lambda: self.count_fleet_wide(threshold),
                        name="fleet-counting",
                    )
        return len(self.nodes)

    async def shutdown(self) -> None:
        await self.tasks.stop()
        for entry in list(self.nodes.values()):
            await self._remove(entry, forget=False)  # a shutdown is not a scale-down: the nodes come back
        await self.webhooks.close()

    def _node_settings(self, **more: Any) -> NodeSettings:
        """The configured node settings with the policy's changes (and `more`), validated: a change
        can hold a nested setting (`waf`) as a dict."""
        return NodeSettings.model_validate({**self.settings.node.model_dump(), **self.policy_changes, **more})

    def _node_handle(self, node_id: str) -> ActorHandle[MitigationNode]:
        settings = self._node_settings(webhooks=self.settings.webhooks.model_dump())
        name = node_actor_name(self.name, node_id)
        return rf_state.actor(MitigationNode, name, node_id, settings.model_dump(), self.name, max_restarts=0)

    async def _add_node(self, node_id: str | None = None, raise_failure: bool = True) -> NodeEntry:
        if node_id is None:
            self.counter += 1
            node_id = f"node-{self.counter}"
            self.kept.fleet.set_many({"counter": self.counter, "nodes": [*self.nodes, node_id]})
        entry = NodeEntry(node_id, self._node_handle(node_id))
        self.nodes[node_id] = entry
        try:
            await self._start(entry)
        except Exception as exc:
            if raise_failure:
                raise
            log.warning("node did not start in time", extra={"node": node_id, "error": repr(exc)})
        self._health_event(entry, "registered")
        return entry

    async def _start(self, entry: NodeEntry) -> None:
        """Start a node with the fleet's share, which its HAProxy listens with, and call it healthy
        only once it is up to date. While it starts, changes are sent to it too (status `starting`):
        one that fails (its HAProxy not up yet) marks it stale and is brought in before it is healthy."""
        entry.status, entry.start_overdue = "starting", False
        self._stale.discard(entry.id)  # what it missed is in the share
        budget = self.settings.node_start_timeout_s
        try:
            info = await _within(call(entry.handle, MitigationNode.start, self._share()), budget)
            entry.address, entry.mode = info["address"], info["mode"]
            entry.actor_pid = info.get("actor_pid")
            if not info.get("adopted") or entry.id in self._stale:  # running already, or a change missed
                await _within(self._bring_up_to_date(entry), CALL_TIMEOUT)
                self._stale.discard(entry.id)
        except BaseException as exc:
            # a start that outlasted the budget may still come up: it stays `starting`, changes skip it
            # meanwhile, and it takes the share when it answers a heartbeat; dead (and replaced) if it does
            # not. A start that failed is dead at once.
            overdue = isinstance(exc, TimeoutError)
            entry.status, entry.start_overdue = ("starting" if overdue else "dead"), overdue
            entry.start_failed = not overdue
            self._stale.add(entry.id)
            raise
        entry.status, entry.start_failed = "healthy", False
        entry.last_heartbeat = time.time()
        entry.missed = 0
        entry.measure(None)

    def _bump(self) -> int:
        """A new generation for a change about to reach the nodes (recorded first: a restarted fleet
        never hands out a generation a node has seen)."""
        self.generation += 1
        self.kept.fleet.set("generation", self.generation)
        return self.generation

    def _share(self) -> FleetShare:
        """A copy of what every node must enforce (the fleet's dicts change while a node starts)."""
        return FleetShare(
            generation=self.generation,
            changes=dict(self.policy_changes),
            # the fleet's prefixes once it set a geo block, none ({}) after its removal
            geo={c: list(p) for c, p in self.geo_prefixes.items()}
            if "blocked_countries" in self.policy_changes
            else None,
            rules=[dict(rule) for rule in self.rules.values()],
            allow=[dict(item) for item in self.allowlist.values()],
            bans=[dict(ban) for ban in self.blacklist.values()],
        )

    async def _replace(self, entry: NodeEntry) -> None:
        """A dead node's actor gives way to a new one with the same id, which replays its own
        rules, bans and policy into a new HAProxy on the same port."""
        _kill(entry.handle, node_actor_name(self.name, entry.id))
        entry.handle = self._node_handle(entry.id)
        try:
            await self._start(entry)
        except Exception as exc:  # tried again at the next heartbeat
            entry.status = "dead"
            log.warning("replacing a dead node failed", extra={"node": entry.id, "error": repr(exc)})
            return
        self._health_event(entry, "replaced")

    async def _configured_geo(self) -> None:
        """`node.blocked_countries` from the configuration, deployed as a geo_block policy once
        (later policies replace it); retried at each heartbeat while the ASN API does not answer."""
        if not self._geo_pending or not any(e.status == "healthy" for e in self.nodes.values()):
            return
        rules = [{"type": "geo_block", "countries": list(self.settings.node.blocked_countries)}]
        result = await self.apply_policy({"name": "config: node.blocked_countries", "rules": rules})
        self._geo_pending = not result["ok"]
        if self._geo_pending:
            log.error("node.blocked_countries not applied yet", extra={"error": result["message"]})

    async def _resync(self, entry: NodeEntry) -> None:
        """A node that missed a change while it did not answer gets the fleet's policy, rules and bans."""
        try:
            await _within(self._bring_up_to_date(entry), CALL_TIMEOUT)
        except Exception as exc:  # tried again at the next heartbeat
            log.warning("resync of a node failed", extra={"node": entry.id, "error": repr(exc)})
            return
        self._stale.discard(entry.id)

    async def _bring_up_to_date(self, entry: NodeEntry) -> None:
        """A node that missed changes (it did not answer, or ran already) takes the fleet's whole share:
        the policy, rules, allowlist and bans it lacks are put there, and what the fleet pushed and
        lifted meanwhile is dropped (`MitigationNode.sync_share`); the node's own entries stay."""
        await call(entry.handle, MitigationNode.sync_share, self._share())

    async def _remove(self, entry: NodeEntry, forget: bool = True) -> None:
        """Stop a node; with `forget` (scale-down) its durable state and its place in the fleet go too."""
        entry.status = "draining"
        try:
            await _within(call(entry.handle, MitigationNode.stop, forget), CALL_TIMEOUT)
        except Exception:  # a dead node has nothing left to stop
            log.warning("node did not stop cleanly", extra={"node": entry.id})
        _kill(entry.handle, node_actor_name(self.name, entry.id))
        self.nodes.pop(entry.id, None)
        if forget:
            self.kept.fleet.set("nodes", list(self.nodes))
        self._health_event(entry, "removed")

    # -- health ----------------------------------------------------------------
    async def check_health(self) -> None:
        await self._configured_geo()
        for entry in [e for e in self.nodes.values() if e.start_failed]:
            if self.settings.replace_dead_nodes:  # a new actor, a new start (tried again at each heartbeat)
                await self._replace(entry)
        entries = [
            e
            for e in self.nodes.values()
            if (e.status not in ("draining", "starting") or e.start_overdue) and not e.start_failed
        ]
        results = await asyncio.gather(*(self._beat(e) for e in entries), return_exceptions=True)
        for entry, result in zip(entries, results, strict=True):
            if isinstance(result, BaseException):
                entry.missed += 1
                if entry.missed >= self.settings.dead_after_missed and entry.status != "dead":
                    entry.status, entry.start_overdue = "dead", False
                    entry.load, entry.rate = 0.0, 0
                    entry.measure(None)
                    self._stale.add(entry.id)  # changes skip a dead node: it takes the share when it answers
                    self._health_event(entry, "dead")
                if entry.status == "dead" and self.settings.replace_dead_nodes:
                    await self._replace(entry)
                continue
            was = entry.status
            entry.missed, entry.start_overdue = 0, False
            entry.last_heartbeat = time.time()
            entry.address = result.get("address") or entry.address  # unknown if its start timed out
            entry.mode = result.get("mode") or entry.mode
            entry.status = result.get("status", "healthy")
            entry.load = float(result.get("load", 0.0))
            entry.rate = int(result.get("stats", {}).get("requests_per_second", 0))
            entry.children = list(result.get("children", []))
            entry.measure(result.get("served_total"))
            if entry.id in self._stale and entry.status == "healthy":
                await self._resync(entry)
            if was == "dead":
                self._health_event(entry, "recovered")
        if self.settings.autoscale.enabled:
            await self._autoscale()

    async def _autoscale(self) -> None:
        """Decide on this heartbeat's served load and apply the change as `/scale` does."""
        loads = [NodeLoad(e.id, e.status, e.served_rps) for e in self.nodes.values()]
        decision = self.autoscaler.step(time.monotonic(), loads)
        self.autoscale_current = {**decision.view(), "at": _iso_now()}
        if decision.change == 0:
            return
        action = "scale_up" if decision.change > 0 else "scale_down"
        result = await self.scale(action, abs(decision.change), automatic=True)
        record = {**self.autoscale_current, "action": action, "applied": result["ok"]}
        if result["ok"]:
            record["nodes_changed"] = result["value"]["nodes"]
        else:
            record["error"] = result["message"]
            self.autoscaler.changed(time.monotonic())  # a failed change waits out the cooldown too
        self.autoscale_log.append(record)
        log.warning("autoscale", extra={k: v for k, v in record.items() if k != "at"})

    async def set_autoscale(self, settings: dict[str, Any]) -> dict[str, Any]:
        """New autoscale settings, in force from the next heartbeat and kept for a restarted fleet.
        The cooldown of the last change carries over; the load window starts again."""
        try:
            fleet = FleetSettings.model_validate({**self.settings.model_dump(), "autoscale": settings})
        except ValidationError as exc:
            message = "; ".join(str(e["msg"]) for e in exc.errors())
            return {"ok": False, "status": 422, "message": f"autoscale settings refused: {message}"}
        self.kept.fleet.set("autoscale", fleet.autoscale.model_dump())
        last_change = self.autoscaler.last_change
        self.settings = self.settings.model_copy(update={"autoscale": fleet.autoscale})
        self.autoscaler = Autoscaler(fleet.autoscale)
        self.autoscaler.last_change = last_change
        log.warning("autoscale settings changed", extra=fleet.autoscale.model_dump())
        return {"ok": True, "value": self.autoscale_view()}

    def autoscale_view(self) -> dict[str, Any]:
        """Settings, the last evaluation and the last changes (automatic and manual), newest first."""
        return {
            "settings": self.settings.autoscale.model_dump(),
            "current": self.autoscale_current,
            "decisions": list(reversed(self.autoscale_log)),
        }

    async def count_fleet_wide(self, threshold: int) -> list[str]:
        """Sum every live node's per-source rates; ban fleet-wide the sources above `threshold` and
        those a node flagged as a flood (for the node's `ban_seconds`). Returns the sources banned."""
        results = await self._each("source_rates")
        reports = {node_id: r["value"] for node_id, r in results.items() if r["ok"]}
        duration = self._node_settings().ban_seconds
        now = time.time()
        fresh = [f for f in fleet_flooders(reports, threshold) if self.blacklist.get(f.ip, {}).get("expires", 0) <= now]
        if not fresh:
            return []
        banned = await self.add_blacklist_many([(f.ip, f.reason) for f in fresh], duration)
        for flooder in fresh[:20]:
            log.warning("fleet-wide ban", extra={"source": flooder.ip, "rate": flooder.rate, "why": flooder.reason})
        if len(fresh) > 20:
            log.warning("fleet-wide bans", extra={"sources": len(fresh), "logged": 20})
        return banned

    async def add_blacklist_many(self, bans: list[tuple[str, str]], duration: int) -> list[str]:
        """Fleet-wide bans of many sources at once (one record, one call per node); returns them.
        A node that could not take them gets them when it answers again (`_stale`)."""
        expires = time.time() + duration
        entries = {
            source_key(ip): {"ip": source_key(ip), "reason": r, "source": "fleet", "expires": expires} for ip, r in bans
        }
        self.kept.bans.set_many(entries)
        self.blacklist.update(entries)
        bans_now = [(k, e["reason"]) for k, e in entries.items()]
        results = await self._each("add_blacklist_many", bans_now, duration, "fleet", self._bump())
        self._outcome(results, "bans not applied")
        return list(entries)

    async def _beat(self, entry: NodeEntry) -> dict[str, Any]:
        beat: dict[str, Any] = await _within(
            call(entry.handle, MitigationNode.heartbeat), max(2.0, self.settings.heartbeat_interval_s)
        )
        return beat

    def _health_event(self, entry: NodeEntry, change: str) -> None:
        data = {"attack_type": None, "source_ip": None, "packets_per_second": entry.rate, "action": change}
        data.update({"status": entry.status, "address": entry.address, "missed_heartbeats": entry.missed})
        self.webhooks.send(event_payload("node_health", entry.id, data))
        log.info("node health", extra={"node": entry.id, "change": change, "status": entry.status})

    # -- API -------------------------------------------------------------------
    def list_nodes(self) -> dict[str, Any]:
        return {"nodes": [e.view() for e in self.nodes.values()]}

    async def call_node(self, node_id: str, method: str, *args: Any) -> dict[str, Any]:
        """Call a node method; an envelope {ok, value} or {ok: False, status, message} crosses Ray safely."""
        entry = self.nodes.get(node_id)
        if entry is None:
            return {"ok": False, "status": 404, "message": f"node {node_id} not found"}
        if entry.status == "dead":
            return {"ok": False, "status": 503, "message": f"node {node_id} is dead (missed heartbeats)"}
        if entry.start_overdue:
            return {"ok": False, "status": 503, "message": f"node {node_id} is still starting"}
        try:
            # the API names the node method at run time (status, add_rule, ...): the one untyped call
            value = await _within(getattr(entry.handle, method).remote(*args), CALL_TIMEOUT)
        except NodeError as exc:
            return {"ok": False, "status": exc.status, "message": exc.message}
        except Exception as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, NodeError):
                return {"ok": False, "status": cause.status, "message": cause.message}
            return {"ok": False, "status": 503, "message": f"node {node_id} unavailable: {type(exc).__name__}"}
        return {"ok": True, "value": value}

    async def _each(self, method: str, *args: Any, only: list[str] | None = None) -> dict[str, Any]:
        live = [e for e in self.nodes.values() if e.status not in ("dead", "draining") and not e.start_overdue]
        live = [e for e in live if only is None or e.id in only]
        results = await asyncio.gather(*(self.call_node(e.id, method, *args) for e in live))
        return {e.id: r for e, r in zip(live, results, strict=True)}

    def _outcome(self, results: dict[str, Any], what: str) -> tuple[list[str], dict[str, str], dict[str, Any] | None]:
        """(nodes that applied, failures by node, refusal): the refusal is an error envelope when
        any node refused the change itself (422) or when nodes were asked and none applied it.
        A node that could not be reached gets it again once it answers (`_stale`)."""
        applied = sorted(n for n, r in results.items() if r["ok"])
        failed = {n: r["message"] for n, r in results.items() if not r["ok"]}
        refused = {n: m for n, m in failed.items() if results[n]["status"] == 422}
        if refused or (results and not applied):
            status = 422 if refused else 503
            detail = "; ".join(f"{n}: {m}" for n, m in sorted((refused or failed).items()))
            return applied, failed, {"ok": False, "status": status, "message": f"{what}: {detail}"}
        self._stale.update(failed)
        return applied, failed, None

    async def apply_policy(self, policy: dict[str, Any]) -> dict[str, Any]:
        """Deploy a policy: recorded (and given to later nodes) once a node has applied it; a
        policy no node applied, or one a node's HAProxy refused, is answered as an error."""
        changes: dict[str, Any] = {}
        geo: dict[str, list[str]] | None = None
        for rule in policy["rules"]:
            if rule["type"] != "geo_block":
                changes.update(_changes_of(rule))
                continue
            try:
                countries = normalise_countries(rule["countries"])
                geo = await fetch_prefixes(self.settings.asn_api_url, self.settings.asn_api_key, countries)
            except GeoError as exc:
                return {"ok": False, "status": exc.status, "message": exc.message}
            changes["blocked_countries"] = countries
        results = await self._each("apply_settings", changes, geo, self._bump())
        applied, failed, refusal = self._outcome(results, f"policy {policy['name']!r} not deployed")
        if refusal is not None:  # the nodes that took it go back to the fleet's share, without it
            await self._each("sync_share", self._share(), only=applied)
            return refusal
        self._record_policy(changes, geo, deployed=policy)
        value = {
            "name": policy["name"],
            "status": "partial" if failed else "deployed",
            "nodes": applied,
            "failed": failed,
            "geo_prefixes": sum(len(v) for v in self.geo_prefixes.values()),
        }
        return {"ok": True, "value": value}

    def _record_policy(
        self,
        changes: dict[str, Any],
        geo: dict[str, list[str]] | None,
        deployed: dict[str, Any] | None = None,
        removed: str | None = None,
    ) -> None:
        """Record and hold the policy in force once `deployed` is put over it or the kind `removed`
        is taken out of it, with the settings it `changes` (and geo prefixes; None: unchanged).
        A policy changes the kinds it lists and leaves the others in force, so the record holds one
        rule of each kind in force, the latest deployed, and is named after the last policy deployed
        (`policy_by`: the policy each kind came from); nothing left in force is no policy (None)."""
        rules = {rule["type"]: rule for rule in (self.policy or {}).get("rules", [])}
        by, name = dict(self.policy_by), (self.policy or {}).get("name", "")
        if deployed is not None:
            name = deployed["name"]
            for rule in deployed["rules"]:  # the last of a kind wins, as it does in `changes`
                rules[rule["type"]], by[rule["type"]] = rule, name
        if removed is not None:
            rules.pop(removed, None)
            by.pop(removed, None)
        policy = {"name": name, "rules": list(rules.values())} if rules else None
        kept: dict[str, Any] = {"policy": policy, "policy_by": by, "changes": {**self.policy_changes, **changes}}
        if geo is not None:
            kept["geo"] = geo
        self.kept.fleet.set_many(kept)
        if geo is not None:
            self.geo_prefixes = geo
        self.policy, self.policy_by = policy, by
        self.policy_changes.update(changes)

    async def add_rule(self, pattern: str, action: str, severity: str) -> dict[str, Any]:
        try:
            rule = new_rule(pattern, action, severity, source="fleet")
        except RuleError as exc:
            return {"ok": False, "status": 422, "message": str(exc)}
        self.kept.rules.set(rule.id, rule.as_dict())
        self.rules[rule.id] = rule.as_dict()
        results = await self._each("add_rule", pattern, action, severity, rule.id, "fleet", self._bump())
        l7 = {n: r for n, r in results.items() if r["ok"] or r["status"] != 409}  # syn nodes have no WAF
        applied, failed, refusal = self._outcome(l7, "rule not added")
        if refusal is not None:
            self.kept.rules.delete(rule.id)
            del self.rules[rule.id]
            await self._each("forget_lifted", "rules", list(self.rules), self._bump(), only=applied)
            return refusal
        return {"ok": True, "value": {**rule.as_dict(), "nodes": applied, "failed": failed}}

    async def delete_rule(self, rule_id: str) -> dict[str, Any]:
        if rule_id not in self.rules:
            return {"ok": False, "status": 404, "message": f"rule {rule_id} not found"}
        self.kept.rules.delete(rule_id)
        del self.rules[rule_id]
        done, failed = await self._forget_lifted("rules")
        return {"ok": True, "value": {"id": rule_id, "status": "deleted", "nodes": done, "failed": failed}}

    async def _forget_lifted(self, kind: str) -> tuple[list[str], dict[str, str]]:
        """Every live node drops the `kind` items the fleet pushed and no longer holds; a node that
        does not take it is stale (it takes the whole share once it answers). (nodes done, failures)"""
        memory = self.rules if kind == "rules" else self.blacklist if kind == "bans" else self.allowlist
        results = await self._each("forget_lifted", kind, list(memory), self._bump())
        done = sorted(n for n, r in results.items() if r["ok"])
        failed = {n: r["message"] for n, r in results.items() if not r["ok"]}
        self._stale.update(failed)
        return done, failed

    def list_rules(self) -> dict[str, Any]:
        return {"rules": list(self.rules.values()), "total": len(self.rules)}

    async def add_blacklist(self, ip: str, reason: str, duration: int) -> dict[str, Any]:
        try:
            key = source_key(ip)
        except NodeError as exc:
            return {"ok": False, "status": exc.status, "message": exc.message}
        entry = {"ip": key, "reason": reason, "source": "fleet", "expires": time.time() + duration}
        previous = self.blacklist.get(key)
        put(self.kept.bans, self.blacklist, key, entry)
        results = await self._each("add_blacklist", key, reason, duration, "fleet", self._bump())
        applied, failed, refusal = self._outcome(results, "ban not applied")
        if refusal is not None:
            put(self.kept.bans, self.blacklist, key, previous)
            if previous is None:  # the nodes that took it drop it again
                await self._each("forget_lifted", "bans", list(self.blacklist), self._bump(), only=applied)
            return refusal
        self.blacklist = self.kept.live_bans()
        body = {"ip": key, "reason": reason, "duration_seconds": duration, "nodes": applied, "failed": failed}
        return {"ok": True, "value": body}

    def list_blacklist(self) -> dict[str, Any]:
        return ban_list(self.blacklist.values())

    async def delete_blacklist(self, ip: str) -> dict[str, Any]:
        """Lift a fleet ban everywhere."""
        return await self._lift("bans", ip)

    async def _lift(self, kind: str, ip: str) -> dict[str, Any]:
        """Remove a fleet ban (`bans`) or allowlist entry (`allow`) everywhere: each node drops what
        the fleet pushed and no longer holds, and keeps its own entry on the same source."""
        durable, memory, what = (
            (self.kept.bans, self.blacklist, "banned fleet-wide")
            if kind == "bans"
            else (self.kept.allow, self.allowlist, "on the fleet's allowlist")
        )
        try:
            key = source_key(ip)
        except NodeError as exc:
            return {"ok": False, "status": exc.status, "message": exc.message}
        if key not in memory:
            return {"ok": False, "status": 404, "message": f"{key} is not {what}"}
        put(durable, memory, key, None)
        done, failed = await self._forget_lifted(kind)
        return {"ok": True, "value": {"ip": key, "status": "deleted", "nodes": done, "failed": failed}}

    async def add_allow(self, ip: str, reason: str) -> dict[str, Any]:
        try:
            key = source_key(ip)
        except NodeError as exc:
            return {"ok": False, "status": exc.status, "message": exc.message}
        previous = self.allowlist.get(key)
        entry = {"ip": key, "reason": reason, "created_at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())}
        put(self.kept.allow, self.allowlist, key, entry)
        results = await self._each("add_allow", key, reason, "fleet", self._bump())
        applied, failed, refusal = self._outcome(results, "allowlist entry not applied")
        if refusal is not None:
            put(self.kept.allow, self.allowlist, key, previous)
            if previous is None:  # the nodes that took it drop it again
                await self._each("forget_lifted", "allow", list(self.allowlist), self._bump(), only=applied)
            return refusal
        return {"ok": True, "value": {**entry, "nodes": applied, "failed": failed}}

    async def delete_allow(self, ip: str) -> dict[str, Any]:
        return await self._lift("allow", ip)

    def list_allow(self) -> dict[str, Any]:
        entries = sorted(self.allowlist.values(), key=lambda e: str(e["ip"]))
        return {"entries": entries, "total": len(entries)}

    def get_policy(self) -> dict[str, Any]:
        """What the fleet enforces: the policy in force (one rule of each kind, see `_record_policy`)
        and the settings in force from it."""
        node = self._node_settings()
        return {
            "policy": self.policy,
            "policy_by": dict(self.policy_by),
            "rate_limit_rps": node.rate_limit_rps,
            "blocked_countries": node.blocked_countries,
            "geo_prefixes": sum(len(v) for v in self.geo_prefixes.values()),
            "accept_proxy": node.accept_proxy,
            "trusted_proxies": node.trusted_proxies,
            "waf": node.waf.model_dump(),
        }

    async def remove_policy(self, kind: str) -> dict[str, Any]:
        """Remove the rate limit (`rate_limit`), the geo block (`geo_block`), the client-address
        settings (`client_address`), the TLS settings (`tls`) or the WAF settings (`waf`) from every
        node; the last three go back to the configuration's, and the kind leaves the recorded
        policy. 404 when the record has no rule of the kind and the settings in force are those already."""
        if kind not in POLICY_KEYS:
            return {"ok": False, "status": 422, "message": f"kind must be one of {', '.join(POLICY_KEYS)}"}
        unset = self._unset()
        changes = {key: unset[key] for key in POLICY_KEYS[kind]}
        now = self._node_settings().model_dump()
        recorded = kind in self.policy_by  # a policy put it (perhaps with the configured values)
        if (
            not recorded
            and all(now[k] == v for k, v in changes.items())
            and not (kind == "geo_block" and self.geo_prefixes)
        ):
            return {"ok": False, "status": 404, "message": f"no {kind} in force"}
        geo: dict[str, list[str]] | None = {} if kind == "geo_block" else None
        results = await self._each("apply_settings", changes, geo, self._bump())
        applied, failed, refusal = self._outcome(results, f"{kind} not removed")
        if refusal is not None:
            return refusal
        self._record_policy(changes, geo, removed=kind)
        return {"ok": True, "value": {**self.get_policy(), "nodes": applied, "failed": failed}}

    async def scale(self, action: str, count: int, automatic: bool = False) -> dict[str, Any]:
        """Add or drain nodes. With autoscale on, a manual change must stay within its bounds and
        starts its cooldown (the autoscaler does not undo it at once)."""
        auto = self.settings.autoscale
        if auto.enabled and not automatic:
            after = len(self.nodes) + (count if action == "scale_up" else -count)
            if not auto.min_nodes <= after <= auto.max_nodes:
                bounds = f"[{auto.min_nodes}, {auto.max_nodes}]"
                return {"ok": False, "status": 409, "message": f"autoscale keeps the fleet within {bounds} nodes"}
        result = await self._scale(action, count)
        if result["ok"]:
            self.autoscaler.changed(time.monotonic())
            if not automatic:
                manual = {"change": count if action == "scale_up" else -count, "reason": "manual /scale"}
                self.autoscale_log.append({**manual, "action": action, "at": _iso_now(), "applied": True})
        return result

    async def _scale(self, action: str, count: int) -> dict[str, Any]:
        if action == "scale_up":
            room = self.settings.max_nodes - len(self.nodes)
            if count > room:
                return {
                    "ok": False,
                    "status": 409,
                    "message": f"max_nodes is {self.settings.max_nodes}: room for {room}",
                }
            # a node that does not start within node_start_timeout_s stays, watched (see `_start`):
            # it is answered as `starting` and joins once it answers a heartbeat
            added = [await self._add_node(raise_failure=False) for _ in range(count)]
            changed = [e.id for e in added]
            starting = [e.id for e in added if e.status != "healthy"]
        else:
            # dead nodes first, then the least loaded, then the newest
            candidates = sorted(
                self.nodes.values(), key=lambda e: (e.status != "dead", round(e.load, 2), -e.registered_at)
            )
            if count > len(candidates):
                return {"ok": False, "status": 409, "message": f"only {len(candidates)} nodes to drain"}
            chosen = candidates[:count]
            for entry in chosen:
                await self._remove(entry)
            changed, starting = [e.id for e in chosen], []
        value = {"action": action, "count": count, "nodes": changed, "starting": starting, "total": len(self.nodes)}
        return {"ok": True, "value": value}

    async def replace_certificate(self, cert_pem: str, key_pem: str) -> dict[str, Any]:
        """The same certificate on every live node, through each node's runtime API (no reload). A pair
        that a node refuses is 422 (refused by all: the check is the same); nodes not reached keep theirs."""
        results = await self._each("replace_certificate", cert_pem, key_pem)
        if not results:  # not kept for nodes added later: they start with the configured certificate
            return {"ok": False, "status": 409, "message": "no live node to serve the certificate"}
        applied = sorted(n for n, r in results.items() if r["ok"])
        failed = {n: r["message"] for n, r in results.items() if not r["ok"]}
        if not applied:
            message = "; ".join(f"{n}: {m}" for n, m in sorted(failed.items()))
            status = max(r["status"] for r in results.values())
            return {"ok": False, "status": status, "message": f"certificate not replaced: {message}"}
        first = results[applied[0]]["value"]
        return {"ok": True, "value": {**first, "nodes": applied, "failed": failed}}

    async def threats(self) -> dict[str, Any]:
        results = await self._each("threat_summary")
        attacks: Counter[str] = Counter()
        types: Counter[str] = Counter({"syn_flood": 0, "http_flood": 0, "slowloris": 0})
        active = 0
        for result in results.values():
            if not result["ok"]:
                continue
            summary = result["value"]
            active += summary["active_threats"]
            types.update(summary["attack_types"])
            for src, rec in summary["sources"].items():
                attacks[src] += rec["attacks"]
        top = [{"ip": ip, "attacks": n} for ip, n in attacks.most_common(10) if n > 0]
        return {"active_threats": active, "top_attackers": top, "attack_types": dict(types), "nodes": len(results)}


def _iso_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())


def _kill(handle: ActorHandle[MitigationNode], name: str) -> None:
    """End the node actor `name`; a stand-in is dropped, so the next actor of that name is a new one."""
    if rf_state.is_local(handle) or not _is_ray_handle(handle):
        rf_state.kill_actor(name)
        return
    import ray

    try:
        ray.kill(cast(Any, handle), no_restart=True)
    except Exception:  # already gone
        log.info("node actor already gone")


def _is_ray_handle(handle: object) -> bool:
    import ray

    return isinstance(handle, ray.actor.ActorHandle)
