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
        self.policy: dict[str, Any] | None = self.kept.fleet.get("policy")
        self.policy_changes: dict[str, Any] = dict(self.kept.fleet.get("changes") or {})
        self.geo_prefixes: dict[str, list[str]] = dict(self.kept.fleet.get("geo") or {})
        self.rules: dict[str, dict[str, Any]] = dict(self.kept.rules.items())
        self.blacklist: dict[str, dict[str, Any]] = self.kept.live_bans()
        self.allowlist: dict[str, dict[str, Any]] = dict(self.kept.allow.items())
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
                for node_id in kept:
                    await self._add_node(node_id)
                for _ in range(self.settings.initial_nodes if not kept else 0):
                    await self._add_node()
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

    async def _add_node(self, node_id: str | None = None) -> NodeEntry:
        if node_id is None:
            self.counter += 1
            node_id = f"node-{self.counter}"
            self.kept.fleet.set_many({"counter": self.counter, "nodes": [*self.nodes, node_id]})
        entry = NodeEntry(node_id, self._node_handle(node_id))
        self.nodes[node_id] = entry
        await self._start(entry)
        self._health_event(entry, "registered")
        return entry

    async def _start(self, entry: NodeEntry) -> None:
        """Start a node with the fleet's share, which its HAProxy listens with, and call it healthy
        only once it is up to date. While it starts, changes are sent to it too (status `starting`):
        one that fails (its HAProxy not up yet) marks it stale and is brought in before it is healthy."""
        entry.status = "starting"
        self._stale.discard(entry.id)  # what it missed is in the share
        try:
            info = await _within(call(entry.handle, MitigationNode.start, self._share()), CALL_TIMEOUT)
            entry.address, entry.mode = info["address"], info["mode"]
            entry.actor_pid = info.get("actor_pid")
            if not info.get("adopted") or entry.id in self._stale:  # running already, or a change missed
                await _within(self._bring_up_to_date(entry), CALL_TIMEOUT)
                self._stale.discard(entry.id)
        except BaseException:
            entry.status = "dead"  # replaced at a later heartbeat
            raise
        entry.status = "healthy"
        entry.last_heartbeat = time.time()
        entry.missed = 0
        entry.measure(None)

    def _share(self) -> FleetShare:
        """A copy of what every node must enforce (the fleet's dicts change while a node starts)."""
        return FleetShare(
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
        """A node added (or back) after a policy, a fleet rule or a fleet blacklist entry gets them too,
        and loses the fleet bans and allowlist entries the fleet lifted while it did not answer."""
        share = self._share()  # copies: the fleet's dicts change while this awaits
        if share.changes or share.geo is not None:
            await call(entry.handle, MitigationNode.apply_settings, share.changes, share.geo)
        if entry.mode == "l7":
            for rule in share.rules:
                await call(
                    entry.handle, MitigationNode.add_rule, rule["pattern"], rule["action"], rule["severity"], rule["id"]
                )
        for item in share.allow:
            await call(entry.handle, MitigationNode.add_allow, item["ip"], item["reason"], "fleet")
        now = time.time()
        for item in share.bans:
            remaining = int(item["expires"] - now)
            if remaining > 0:
                await call(entry.handle, MitigationNode.add_blacklist, item["ip"], item["reason"], remaining, "fleet")
        await self._prune(entry, "allow", {item["ip"] for item in share.allow})
        await self._prune(entry, "bans", {item["ip"] for item in share.bans})

    async def _prune(self, entry: NodeEntry, kind: str, kept: set[str]) -> None:
        """Lift on `entry` what the fleet put there (`source` fleet) and no longer has: a source no
        longer trusted must not skip the checks, nor a lifted ban keep refusing."""
        listing, lift = ("list_allow", "delete_allow") if kind == "allow" else ("list_blacklist", "delete_blacklist")
        listed = await call(entry.handle, getattr(MitigationNode, listing))
        for item in listed["entries"]:
            if item.get("source") == "fleet" and item["ip"] not in kept:
                result = await self.call_node(entry.id, lift, item["ip"])
                if not result["ok"] and result["status"] != 404:  # 404: it expired meanwhile
                    raise NodeError(result["status"], result["message"])

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
        entries = [e for e in self.nodes.values() if e.status not in ("draining", "starting")]
        results = await asyncio.gather(*(self._beat(e) for e in entries), return_exceptions=True)
        for entry, result in zip(entries, results, strict=True):
            if isinstance(result, BaseException):
                entry.missed += 1
                if entry.missed >= self.settings.dead_after_missed and entry.status != "dead":
                    entry.status = "dead"
                    entry.load, entry.rate = 0.0, 0
                    entry.measure(None)
                    self._health_event(entry, "dead")
                if entry.status == "dead" and self.settings.replace_dead_nodes:
                    await self._replace(entry)
                continue
            was = entry.status
            entry.missed = 0
            entry.last_heartbeat = time.time()
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
        results = await self._each("add_blacklist_many", [(k, e["reason"]) for k, e in entries.items()], duration)
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
        live = [e for e in self.nodes.values() if e.status not in ("dead", "draining")]
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
            if rule["type"] == "rate_limit":
                changes["rate_limit_rps"] = rule["value"]
            elif rule["type"] == "client_address":
                changes["accept_proxy"] = rule["accept_proxy"]
                changes["trusted_proxies"] = rule["trusted_proxies"]
            elif rule["type"] == "tls":
                changes["tls"], changes["origin_tls"] = rule["tls"], rule["origin_tls"]
            elif rule["type"] == "waf":
                changes["waf"] = {k: v for k, v in rule.items() if k != "type"}
            else:
                try:
                    countries = normalise_countries(rule["countries"])
                    geo = await fetch_prefixes(self.settings.asn_api_url, self.settings.asn_api_key, countries)
                except GeoError as exc:
                    return {"ok": False, "status": exc.status, "message": exc.message}
                changes["blocked_countries"] = countries
        results = await self._each("apply_settings", changes, geo)
        applied, failed, refusal = self._outcome(results, f"policy {policy['name']!r} not deployed")
        if refusal is not None:
            previous = (self.policy_changes, self.geo_prefixes or None)
            await self._each("apply_settings", *previous, only=applied)  # put the nodes that took it back
            return refusal
        self._record_policy(policy, changes, geo)
        value = {
            "name": policy["name"],
            "status": "partial" if failed else "deployed",
            "nodes": applied,
            "failed": failed,
            "geo_prefixes": sum(len(v) for v in self.geo_prefixes.values()),
        }
        return {"ok": True, "value": value}

    def _record_policy(
        self, policy: dict[str, Any] | None, changes: dict[str, Any], geo: dict[str, list[str]] | None
    ) -> None:
        kept: dict[str, Any] = {"policy": policy, "changes": {**self.policy_changes, **changes}}
        if geo is not None:
            kept["geo"] = geo
        self.kept.fleet.set_many(kept)
        if geo is not None:
            self.geo_prefixes = geo
        self.policy = policy
        self.policy_changes.update(changes)

    async def add_rule(self, pattern: str, action: str, severity: str) -> dict[str, Any]:
        try:
            rule = new_rule(pattern, action, severity)
        except RuleError as exc:
            return {"ok": False, "status": 422, "message": str(exc)}
        self.kept.rules.set(rule.id, rule.as_dict())
        self.rules[rule.id] = rule.as_dict()
        results = await self._each("add_rule", pattern, action, severity, rule.id)
        l7 = {n: r for n, r in results.items() if r["ok"] or r["status"] != 409}  # syn nodes have no WAF
        applied, failed, refusal = self._outcome(l7, "rule not added")
        if refusal is not None:
            self.kept.rules.delete(rule.id)
            del self.rules[rule.id]
            await self._each("delete_rule", rule.id, only=applied)
            return refusal
        return {"ok": True, "value": {**rule.as_dict(), "nodes": applied, "failed": failed}}

    async def delete_rule(self, rule_id: str) -> dict[str, Any]:
        if rule_id not in self.rules:
            return {"ok": False, "status": 404, "message": f"rule {rule_id} not found"}
        self.kept.rules.delete(rule_id)
        del self.rules[rule_id]
        await self._each("delete_rule", rule_id)
        return {"ok": True, "value": {"id": rule_id, "status": "deleted"}}

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
        results = await self._each("add_blacklist", key, reason, duration, "fleet")
        applied, failed, refusal = self._outcome(results, "ban not applied")
        if refusal is not None:
            put(self.kept.bans, self.blacklist, key, previous)
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
        """Remove a fleet ban (`bans`) or allowlist entry (`allow`) everywhere; a node that no
        longer had it (an expired ban) answers 404, which counts as done."""
        durable, memory, method, what = (
            (self.kept.bans, self.blacklist, "delete_blacklist", "banned fleet-wide")
            if kind == "bans"
            else (self.kept.allow, self.allowlist, "delete_allow", "on the fleet's allowlist")
        )
        try:
            key = source_key(ip)
        except NodeError as exc:
            return {"ok": False, "status": exc.status, "message": exc.message}
        if key not in memory:
            return {"ok": False, "status": 404, "message": f"{key} is not {what}"}
        put(durable, memory, key, None)
        results = await self._each(method, key)
        done = sorted(n for n, r in results.items() if r["ok"] or r["status"] == 404)
        failed = {n: r["message"] for n, r in results.items() if n not in done}
        self._stale.update(failed)  # lifted there once it answers (`_prune`)
        return {"ok": True, "value": {"ip": key, "status": "deleted", "nodes": done, "failed": failed}}

    async def add_allow(self, ip: str, reason: str) -> dict[str, Any]:
        try:
            key = source_key(ip)
        except NodeError as exc:
            return {"ok": False, "status": exc.status, "message": exc.message}
        previous = self.allowlist.get(key)
        entry = {"ip": key, "reason": reason, "created_at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())}
        put(self.kept.allow, self.allowlist, key, entry)
        results = await self._each("add_allow", key, reason, "fleet")
        applied, failed, refusal = self._outcome(results, "allowlist entry not applied")
        if refusal is not None:
            put(self.kept.allow, self.allowlist, key, previous)
            return refusal
        return {"ok": True, "value": {**entry, "nodes": applied, "failed": failed}}

    async def delete_allow(self, ip: str) -> dict[str, Any]:
        return await self._lift("allow", ip)

    def list_allow(self) -> dict[str, Any]:
        entries = sorted(self.allowlist.values(), key=lambda e: str(e["ip"]))
        return {"entries": entries, "total": len(entries)}

    def get_policy(self) -> dict[str, Any]:
        """What the fleet enforces: the last policy deployed and the settings in force from it."""
        node = self._node_settings()
        return {
            "policy": self.policy,
            "rate_limit_rps": node.rate_limit_rps,
            "blocked_countries": node.blocked_countries,
            "geo_prefixes": sum(len(v) for v in self.geo_prefixes.values()),
            "accept_proxy": node.accept_proxy,
            "trusted_proxies": node.trusted_proxies,
        }

    async def remove_policy(self, kind: str) -> dict[str, Any]:
        """Remove the rate limit (`rate_limit`), the geo block (`geo_block`), the client-address
        settings (`client_address`) or the TLS settings (`tls`) from every node; the last two go back to
        the configuration's."""
        view, configured = self.get_policy(), self.settings.node
        client_address: dict[str, Any] = {
            "accept_proxy": configured.accept_proxy,
            "trusted_proxies": configured.trusted_proxies,
        }
        tls = {k: getattr(configured, k) and getattr(configured, k).model_dump() for k in ("tls", "origin_tls")}
        if (
            (kind == "rate_limit" and view["rate_limit_rps"] is None)
            or (kind == "geo_block" and not view["blocked_countries"] and not self.geo_prefixes)
            or (kind == "client_address" and all(view[k] == v for k, v in client_address.items()))
            or (kind == "tls" and all(self.policy_changes.get(k, v) == v for k, v in tls.items()))
        ):
            return {"ok": False, "status": 404, "message": f"no {kind} in force"}
        removals: dict[str, dict[str, Any]] = {
            "rate_limit": {"rate_limit_rps": None},
            "geo_block": {"blocked_countries": []},
            "client_address": client_address,
            "tls": tls,
        }
        changes = removals[kind]
        geo: dict[str, list[str]] | None = {} if kind == "geo_block" else None
        results = await self._each("apply_settings", changes, geo)
        applied, failed, refusal = self._outcome(results, f"{kind} not removed")
        if refusal is not None:
            return refusal
        policy = self.policy
        rules = [r for r in policy["rules"] if r["type"] != kind] if policy is not None else []
        policy = {**policy, "rules": rules} if policy is not None and rules else None  # nothing left: no policy
        self._record_policy(policy, changes, geo)
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
            added = [await self._add_node() for _ in range(count)]
            changed = [e.id for e in added]
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
            changed = [e.id for e in chosen]
        return {"ok": True, "value": {"action": action, "count": count, "nodes": changed, "total": len(self.nodes)}}

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
