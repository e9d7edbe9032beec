"""A mitigation node: a Ray actor that owns one HAProxy process as its data plane.

The actor renders HAProxy's configuration, changes rules and the blacklist through
the runtime API (no restart), reloads hitlessly through the master socket when the
configuration itself changes, reads the stats socket and the stick table, and reads
HAProxy's log stream (UDP syslog on loopback) to count rule hits and raise events.
Python never sees a proxied request.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from actors.mitigation.accounting import Monotonic, ThreatBook
from actors.mitigation.fleet_share import FLEET, KINDS, FleetShare, fleet_put, reconcile, stale_generation
from actors.mitigation.haproxy_config import FRONTEND, NodePaths, host_port, render, source_of, table_key
from actors.mitigation.haproxy_process import HAProxyError, HAProxyProcess
from actors.mitigation.haproxy_stats import LogRecord, parse_log_line, parse_table
from actors.mitigation.inspection import Inspection
from actors.mitigation.node_metrics import NodeMetrics
from actors.mitigation.node_monitor import Monitor
from actors.mitigation.node_state import NodeState, put, stream_prefix
from actors.mitigation.node_tls import CertificateRefused, NodeCertificate
from actors.mitigation.rules import CustomRule, RuleError, map_contents, new_rule
from actors.mitigation.settings import NodeSettings
from actors.mitigation.stick_table import Snapshot, cli_lines, restore_lines
from actors.mitigation.tls import CertificateError
from actors.mitigation.webhooks import WebhookSender, event_payload
from rayfleet.crs.process import CrsError
from rayfleet.durable import DurableMap
from rayfleet.logs import get_logger
from rayfleet.supervisor import ChildMetrics, Status
from rayfleet.tasks import BackgroundTasks

log = get_logger("mitigation")


class NodeError(Exception):
    """A request the node refuses: `status` is the HTTP status the API answers with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status, message)  # both in args: the error pickles across Ray
        self.status = status
        self.message = message


def source_key(ip: str) -> str:
    """The blacklist key of an address or CIDR (`127.0.0.1`, `10.0.0.0/8`); NodeError 422 otherwise,
    also for what Python reads but HAProxy's maps cannot hold (an IPv6 zone: `fe80::1%eth0`)."""
    if "%" in ip:
        raise NodeError(422, f"ip: {ip!r} has a zone (%...): a map holds addresses and prefixes without zones")
    try:
        network = ipaddress.ip_network(ip.strip(), strict=False)
    except ValueError:
        raise NodeError(422, f"ip: {ip!r} is not an IP address or CIDR") from None
    return str(network.network_address) if network.num_addresses == 1 else str(network)


FOLDER_PREFIX = "rf-mit-"


def sweep_stale_folders() -> None:
    """Remove the folders of nodes whose process is gone (a killed actor cannot clean up after itself)."""
    for folder in Path(tempfile.gettempdir()).glob(FOLDER_PREFIX + "*"):
        try:
            owner = int((folder / "owner.pid").read_text())
        except (OSError, ValueError):
            continue
        if not Path(f"/proc/{owner}").exists():
            shutil.rmtree(folder, ignore_errors=True)


def _bindable(host: str, port: int) -> int | None:
    """`port` (0: any) if `host` can bind it now, else None."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        try:
            s.bind((host, port))
        except OSError:
            return None
        return int(s.getsockname()[1])


def free_port(host: str = "127.0.0.1", wanted: int = 0, also: list[str] | None = None) -> int:
    """`wanted` when it can be bound on `host` and every `also` address (a restarted node keeps its
    address), else a port free on all of them."""
    for candidate in [wanted, *[0] * 20] if wanted else [0] * 20:
        port = _bindable(host, candidate)
        if port is not None and all(_bindable(h, port) is not None for h in also or []):
            return port
    raise OSError(f"no port free on {host} and {also}")


class _LogProtocol(asyncio.DatagramProtocol):
    def __init__(self, node: MitigationNode) -> None:
        self.node = node

    def datagram_received(self, data: bytes, addr: Any) -> None:
        record = parse_log_line(data)
        if record is not None:
            self.node.on_log(record)


class MitigationNode:
    def __init__(self, node_id: str, settings: dict[str, Any] | NodeSettings, fleet: str = "") -> None:
        self.node_id = node_id
        base = settings if isinstance(settings, NodeSettings) else NodeSettings.model_validate(settings)
        self.base = base  # the configured settings: a fleet share's policy is put over them
        # what this node kept from before a restart: rules, bans, allowlist, policy (node_state.py)
        self.state = NodeState(stream_prefix(fleet, node_id))
        changes = self.state.policy.get("changes") or {}
        self.settings = NodeSettings.model_validate({**base.model_dump(), **changes}) if changes else base
        self.started = time.time()
        self.port = 0
        sweep_stale_folders()
        self.paths = NodePaths(Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX)))
        (self.paths.root / "owner.pid").write_text(str(os.getpid()))
        self.proc = HAProxyProcess(self.paths, f"haproxy-{node_id}", on_restart=self._reapply)
        self.certificate = NodeCertificate(self.state.tls, self.paths.certificate)
        # its own folder: nginx's worker (nobody when run as root) traverses it, never the node's
        crs_root = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX + "crs-"))
        (crs_root / "owner.pid").write_text(str(os.getpid()))
        self.inspection = Inspection(crs_root, node_id)
        self.rules: dict[str, CustomRule] = self.state.replay_rules()
        self.builtin_hits: dict[str, int] = {}
        self.blacklist: dict[str, dict[str, Any]] = self.state.replay_bans()
        self.allowlist: dict[str, dict[str, Any]] = dict(self.state.allow.items())
        self.geo_prefixes: dict[str, list[str]] = dict(self.state.policy.get("geo") or {})
        self.threats = ThreatBook()
        self.counters = {name: Monotonic() for name in ("requests", "blocked", "connections", "served")}
        self.webhooks = WebhookSender(self.settings.webhooks, lambda: self.state.store, f"{self.state.prefix}/webhooks")
        self.metrics = NodeMetrics(node_id)
        self.child_metrics = (ChildMetrics(self.metrics.own), ChildMetrics(self.metrics.fleet))
        # held while the table is carried into new workers: the monitor does not read it half-restored
        self.table_lock = asyncio.Lock()
        self.monitor = Monitor(self)
        self.tasks = BackgroundTasks("mitigation")
        self._log_transport: asyncio.DatagramTransport | None = None
        self.log_port = 0
        self.draining = False

    # -- lifecycle -----------------------------------------------------------
    async def start(self, share: FleetShare | None = None) -> dict[str, Any]:
        """Start HAProxy (idempotent) and the watch loop; return the node's address. The fleet's
        `share` is taken in first, so HAProxy starts listening with it; `adopted` in the answer is
        False when the node was running already (the share was not taken)."""
        if self.proc.supervised.state != "stopped":  # started already (running, or being restarted)
            return {**self.describe(), "adopted": False}
        if share is not None:
            self._adopt(share)
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(lambda: _LogProtocol(self), local_addr=("127.0.0.1", 0))
        self._log_transport = transport
        self.log_port = transport.get_extra_info("sockname")[1]
        self._pick_port(self.state.policy.get("port", 0))
        self._write_maps()
        self.certificate.install(self.settings)
        await self.inspection.configure(self.settings, free_port() if self.settings.crs else 0)
        await self._start_haproxy()
        self.webhooks.start()
        self.tasks.every(self.settings.poll_interval_s, self.monitor.poll, name=f"poll-{self.node_id}", first_delay=0)
        log.info("mitigation node started", extra={"node": self.node_id, "address": self.address})
        return {**self.describe(), "adopted": share is not None}

    def _pick_port(self, wanted: int) -> None:
        """The configured `listen_port`, else `wanted` (the port kept from before a restart) while it is
        free, else a free one; an automatic port is kept for the next start."""
        self.port = self.settings.listen_port or free_port(self.settings.listen_host, wanted, self.settings.also_listen)
        if not self.settings.listen_port and self.state.policy.get("port") != self.port:
            self.state.policy.set("port", self.port)

    async def _start_haproxy(self, attempts: int = 3) -> None:
        """Start HAProxy. An automatic port is free when picked but may be taken before HAProxy binds it
        (another process, or an outgoing connection given it as its local port): then another is picked;
        a configured port that is taken is an error."""
        for attempt in range(1, attempts + 1):
            self._render()
            try:
                await self.proc.start()
                return
            except HAProxyError as exc:
                taken = "Address already in use" in str(exc) and f":{self.port}]" in str(exc)
                if self.settings.listen_port or not taken or attempt == attempts:
                    raise
                log.warning("node port taken before HAProxy bound it", extra={"node": self.node_id, "port": self.port})
                self._pick_port(0)

    def _adopt(self, share: FleetShare) -> None:
        """Record and hold the fleet's share before HAProxy is rendered (a new or replacing node):
        its policy, and its rules, allowlist and bans taken as `sync_share` takes them on a running
        node, so what the fleet lifted while this node was away is dropped and its own entries stay."""
        self._check_generation(share.generation)
        settings, geo = self._policy_of(share)
        self.settings = settings
        self.geo_prefixes = geo
        self.state.policy.set_many({"changes": dict(share.changes), "geo": geo})
        self._take_lists(share)

    def _check_generation(self, generation: int | None) -> None:
        """A fleet message older than the last share or lift this node took is refused (409)."""
        if generation is not None:
            stale = stale_generation(generation, self.state.policy.get("generation", 0))
            if stale is not None:
                raise NodeError(409, stale)

    def _took(self, generation: int) -> None:
        """Record that this node took a share or a lift of `generation`: older fleet messages are refused."""
        if generation > self.state.policy.get("generation", 0):
            self.state.policy.set("generation", generation)

    def _policy_of(self, share: FleetShare) -> tuple[NodeSettings, dict[str, list[str]]]:
        """The settings and geo prefixes of the fleet's share, over this node's configured settings:
        the policy is the fleet's alone, so a change the fleet no longer has goes back to the configured value."""
        try:
            settings = NodeSettings.model_validate({**self.base.model_dump(), **share.changes})
        except ValidationError as exc:
            raise NodeError(422, "; ".join(e["msg"] for e in exc.errors())[:300]) from None
        return settings, {country: list(prefixes) for country, prefixes in (share.geo or {}).items()}

    def _held(self, kind: str) -> dict[str, dict[str, Any]]:
        if kind == "rules":
            return {key: rule.as_dict() for key, rule in self.rules.items()}
        return self._source_list(kind)[1]

    def _take_lists(self, share: FleetShare) -> list[str]:
        """Take the share's rules (l7 nodes), allowlist and bans; returns the bans lifted."""
        if self.state.migrate_sources({kind: set(share.items(kind)) for kind in KINDS}):
            self.rules = self.state.replay_rules()
            self.allowlist.clear()
            self.allowlist.update(self.state.allow.items())
            self.blacklist.clear()
            self.blacklist.update(self.state.replay_bans())
        now = time.time()
        lifted: list[str] = []
        for kind in KINDS:
            wanted = share.items(kind)
            if kind == "bans":
                wanted = {k: b for k, b in wanted.items() if b["expires"] > now}
            if kind == "rules" and self.settings.mode != "l7":
                wanted = {}
            lifted += self._reconcile(kind, set(wanted), wanted, share.generation)
        self._took(share.generation)
        return lifted

    def _reconcile(
        self, kind: str, keep: set[str], wanted: dict[str, dict[str, Any]] | None, generation: int
    ) -> list[str]:
        """Record and hold what stays of `kind` once the fleet holds `keep` (`fleet_share.reconcile`);
        returns the keys dropped."""
        held = self._held(kind)
        after = reconcile(kind, held, keep, wanted, generation, time.time())
        dropped = [key for key in held if key not in after]
        durable = self.state.rules if kind == "rules" else self._source_list(kind)[0]
        durable.set_many({key: value for key, value in after.items() if held.get(key) != value})
        for key in dropped:
            durable.delete(key)
        if kind == "rules":
            fields = set(CustomRule.__dataclass_fields__)
            self.rules = {k: CustomRule(**{f: v for f, v in r.items() if f in fields}) for k, r in after.items()}
        else:
            memory = self._source_list(kind)[1]
            memory.clear()
            memory.update(after)
        return dropped

    async def sync_share(self, share: FleetShare) -> dict[str, Any]:
        """Take the fleet's whole share on a running node that missed changes (it did not answer):
        the policy (a hitless reload, only when it differs), then the rules, allowlist and bans, each
        map replaced in HAProxy in one step. What the fleet pushed and no longer has is dropped; the
        node's own entries stay. A share older than the last one taken is 409."""
        self._require_running()
        self._check_generation(share.generation)
        settings, geo = self._policy_of(share)
        if settings != self.settings or geo != self.geo_prefixes:
            await self._apply_policy(settings, geo, {"changes": dict(share.changes), "geo": geo})
        lifted = self._take_lists(share)
        await self._replace_maps(lifted)
        return {"id": self.node_id, "generation": share.generation, "lifted": len(lifted)}

    async def forget_lifted(self, kind: str, keep: list[str], generation: int) -> dict[str, Any]:
        """Drop the `kind` items (`rules`, `allow` or `bans`) the fleet pushed and no longer holds:
        `keep` is every key the fleet holds at `generation`. The node's own entries stay; a lift
        older than the last share or lift taken is 409."""
        if kind not in KINDS:
            raise NodeError(422, f"kind must be one of {', '.join(KINDS)}")
        self._require_running()
        self._check_generation(generation)
        dropped = self._reconcile(kind, set(keep), None, generation)
        self._took(generation)
        await self._replace_maps(dropped if kind == "bans" else [], self._maps_of(kind))
        return {"kind": kind, "dropped": sorted(dropped)}

    def _maps_of(self, kind: str) -> set[Path]:
        """The map files of `kind` (`rules`: every WAF map)."""
        if kind == "rules":
            return {path for path in self._map_lines() if path.name.startswith("waf_")}
        return {self._source_list(kind)[2]}

    async def _replace_maps(self, lifted_bans: list[str], only: set[Path] | None = None) -> None:
        """The map files rewritten and the maps (`only` those) replaced in HAProxy in one step each,
        and the stick-table entries of the lifted bans cleared (their flood flags)."""
        try:
            await self._push_maps(only)
        except (OSError, TimeoutError) as exc:
            raise NodeError(503, f"HAProxy is not answering: {type(exc).__name__}") from None
        except HAProxyError as exc:
            raise NodeError(422, f"HAProxy refused a map: {str(exc)[:300]}") from None
        for key in lifted_bans:
            if "/" not in key:
                with contextlib.suppress(NodeError):
                    await self._runtime(f"clear table {FRONTEND} key {table_key(key)}")

    async def stop(self, forget: bool = False) -> None:
        """Stop HAProxy; with `forget` (scale-down) the node's durable state goes too."""
        self.draining = True
        if forget:
            self.state.forget()
            self.webhooks.forget()
        await self.tasks.stop()
        await self.webhooks.close()
        if self._log_transport is not None:
            self._log_transport.close()
        await self.proc.stop()
        await self.inspection.close()

    def __del__(self) -> None:  # the actor's process ending also ends HAProxy (PDEATHSIG covers a kill)
        with contextlib.suppress(Exception):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.inspection.kill()

    def _render(self) -> None:
        """Write haproxy.cfg for the current settings (and the inspection tier's port)."""
        self.paths.config.write_text(render(self.settings, self.paths, self.port, self.log_port, self.inspection.port))

    async def _reapply(self) -> None:
        """After the supervisor restarted HAProxy: put the current rules, bans and geo prefixes into
        the new process through the runtime API (each map replaced in one step), whatever the map
        files held when it started; the policy is in the configuration it was started with. The stick
        table gets back what the monitor's last poll saw of it (the flagged and denied sources)."""
        async with self.table_lock:
            await self._push_maps()
            await self._restore_table(self.monitor.snapshot, None)
        self.monitor.restarted()
        self.update_child_metrics()
        log.warning(
            "haproxy restarted: rules, bans and policy re-applied",
            extra={"node": self.node_id, "restarts": self.proc.supervised.restarts, "pid": self.proc.pid},
        )

    def children(self) -> list[Status]:
        return [self.proc.status(), *self.inspection.statuses()]

    def update_child_metrics(self) -> None:
        for metrics in self.child_metrics:
            metrics.update(self.children())

    @property
    def address(self) -> str:
        return host_port(self.settings.listen_host, self.port)

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.node_id,
            "address": self.address,
            "mode": self.settings.mode,
            "haproxy_pid": self.proc.pid,
            "actor_pid": os.getpid(),
        }

    # -- map files -------------------------------------------------------------
    def _map_lines(self) -> dict[Path, list[str]]:
        """Every map file's lines, from the node's current rules, bans and geo prefixes."""
        out = {
            self.paths.waf(kind): [f"{key} {value}" for key, value in lines]
            # with the crs engine HAProxy keeps the custom rules only (paranoia 0: no built-in rule)
            for kind, lines in map_contents(
                list(self.rules.values()), 0 if self.settings.crs else self.settings.paranoia
            ).items()
        }
        out[self.paths.blacklist] = [f"{ip} {e['expires']}" for ip, e in self.blacklist.items()]
        out[self.paths.allow] = [f"{ip} 1" for ip in self.allowlist]
        out[self.paths.geo] = [f"{p} {cc}" for cc, prefixes in self.geo_prefixes.items() for p in prefixes]
        return out

    async def _push_maps(self, only: set[Path] | None = None) -> None:
        """Rewrite every map file and replace each map (`only` those) in the running HAProxy in one step."""
        self._write_maps()
        for path, lines in self._map_lines().items():
            if only is None or path in only:
                await self.proc.replace_map(path, lines)

    def _write_maps(self) -> None:
        for path, lines in self._map_lines().items():
            _atomic_write(path, "".join(line + "\n" for line in lines))

    async def _runtime(self, command: str, payload: str | None = None, strict: bool = False) -> str:
        """One runtime API command; with `strict`, any answer is HAProxy refusing it. A data plane
        that does not answer (being restarted by its supervisor) is NodeError 503."""
        try:
            answer = await self.proc.command(command, payload)
        except (OSError, TimeoutError):
            raise NodeError(503, f"HAProxy is not answering (supervisor: {self.proc.supervised.state})") from None
        if strict and answer.strip():
            raise NodeError(422, f"HAProxy refused the change: {answer.strip()[:300]}")
        return answer

    def _require_running(self) -> None:
        """A change the data plane cannot take now is refused before anything is recorded."""
        if not self.proc.running:
            raise NodeError(503, f"HAProxy is not running (supervisor: {self.proc.supervised.state})")

    # -- rules ---------------------------------------------------------------
    def _require_l7(self) -> None:
        if self.settings.mode != "l7":
            raise NodeError(409, "WAF rules apply to HTTP traffic: this node runs in syn mode")

    async def add_rule(
        self,
        pattern: str,
        action: str,
        severity: str,
        rule_id: str | None = None,
        source: str = "api",
        generation: int | None = None,
    ) -> dict[str, Any]:
        """Add a rule; `source` fleet (with the fleet's `generation`) for the fleet's rules. A rule the
        node holds under that id already stays as it is (the node's own stays its own)."""
        self._require_l7()
        self._require_running()
        self._check_generation(generation)
        if rule_id is not None and rule_id in self.rules:
            return self.rules[rule_id].as_dict()
        try:
            rule = new_rule(pattern, action, severity, rule_id, source, generation or 0)
        except RuleError as exc:
            raise NodeError(422, str(exc)) from None
        self.state.rules.set(rule.id, rule.as_dict())
        self.rules[rule.id] = rule
        self._write_maps()
        key = next(k for k, v in map_contents([rule], 0)[rule.map_kind])
        # custom rules go first in the file; at runtime a new rule is appended, which only changes
        # which rule id a request reports when two rules of the same kind match it
        try:
            await self._runtime(f"add map {self.paths.waf(rule.map_kind)}", f"{key} {rule.id}", strict=True)
        except NodeError:
            self.state.rules.delete(rule.id)
            del self.rules[rule.id]
            self._write_maps()
            raise
        return rule.as_dict()

    def list_rules(self) -> dict[str, Any]:
        rules = [r.as_dict() for r in self.rules.values()]
        return {"rules": rules, "total": len(rules), "builtin_hits": dict(self.builtin_hits)}

    async def delete_rule(self, rule_id: str) -> dict[str, Any]:
        """Remove a rule: from the record, the node and the map files first, then from the running
        HAProxy (a HAProxy being restarted gets the maps without it from `_reapply`)."""
        rule = self.rules.get(rule_id)
        if rule is None:
            raise NodeError(404, f"rule {rule_id} not found")
        self.state.rules.delete(rule_id)
        del self.rules[rule_id]
        self._write_maps()
        path = self.paths.waf(rule.map_kind)
        try:
            shown = await self._runtime(f"show map {path}")
            for ref in [line.split()[0] for line in shown.splitlines() if line.split()[-1:] == [rule_id]]:
                await self._runtime(f"del map {path} #{ref}")
        except NodeError:
            log.warning("rule deleted while HAProxy did not answer", extra={"node": self.node_id, "rule": rule_id})
        return {"id": rule_id, "status": "deleted"}

    # -- blacklist -----------------------------------------------------------
    async def add_blacklist(
        self, ip: str, reason: str, duration_seconds: int, source: str = "api", generation: int | None = None
    ) -> dict[str, Any]:
        """Ban a source; `source` says who asked (api, fleet, or the rule that escalated it). A fleet
        ban (with the fleet's `generation`) on a source the node banned itself keeps the node's entry."""
        key = source_key(ip)
        self._require_running()
        self._check_generation(generation)
        expires = int(time.time()) + duration_seconds
        entry = {"ip": key, "reason": reason, "source": source, "expires": expires}
        if source == FLEET:
            entry = fleet_put("bans", self.blacklist.get(key), entry, generation or 0)
        await self._put_source("bans", key, entry)
        return {"ip": key, "reason": reason, "duration_seconds": duration_seconds, "expires_at": _iso(expires)}

    async def add_blacklist_many(
        self, bans: list[tuple[str, str]], duration_seconds: int, source: str = "fleet", generation: int | None = None
    ) -> dict[str, Any]:
        """Ban many sources at once (the fleet's flood bans): the new ones in a few runtime API
        payloads, then one durable transaction and one map file write. HAProxy gets them before the
        node's record (a flood is refused sooner): the fleet recorded them first and gives them to a
        node that replaces this one (`FleetShare`), and a data plane that stops answering midway
        gets them from the node's memory when its supervisor restarts it (`_reapply`)."""
        self._require_running()
        self._check_generation(generation)
        expires = int(time.time()) + duration_seconds
        entries = {}
        for ip, reason in bans:
            key = source_key(ip)
            entry = {"ip": key, "reason": reason, "source": source, "expires": expires}
            if source == FLEET:
                entry = fleet_put("bans", self.blacklist.get(key), entry, generation or 0)
            if entry != self.blacklist.get(key):  # a longer ban of the node's own is left as it is
                entries[key] = entry
        held = [key for key in entries if key in self.blacklist]
        self.blacklist.update(entries)
        try:
            await self._enforce_many(entries, held, expires)
        finally:
            self.state.bans.set_many(entries)
            self._write_maps()
        return {"banned": len(entries), "expires_at": _iso(expires)}

    async def _enforce_many(self, entries: dict[str, dict[str, Any]], held: list[str], expires: int) -> None:
        path = self.paths.blacklist
        # a ban held already is changed in place (`set map`): never absent from the map for a moment
        renewed = [await self._runtime(line) for line in cli_lines([f"set map {path} {k} {expires}" for k in held])]
        try:
            if any("not found" in answer.lower() for answer in renewed):  # a held ban missing from the map
                await self.proc.replace_map(path, self._map_lines()[path])
            else:  # the new ones in a few payloads, not a command each
                await self.proc.add_map(path, [f"{key} {expires}" for key in entries if key not in held])
        except (OSError, TimeoutError) as exc:
            raise NodeError(503, f"HAProxy is not answering: {type(exc).__name__}") from None
        except HAProxyError as exc:
            raise NodeError(422, f"HAProxy refused the bans: {str(exc)[:300]}") from None

    def _source_list(self, kind: str) -> tuple[DurableMap, dict[str, dict[str, Any]], Path]:
        if kind == "bans":
            return self.state.bans, self.blacklist, self.paths.blacklist
        return self.state.allow, self.allowlist, self.paths.allow

    async def _put_source(self, kind: str, key: str, entry: dict[str, Any] | None) -> None:
        """Record and apply one entry of the `bans` or `allow` list (None: remove it). What HAProxy
        refuses, or a data plane that does not answer, leaves the list as it was."""
        durable, memory, path = self._source_list(kind)
        previous = memory.get(key)
        put(durable, memory, key, entry)
        self._write_maps()
        try:
            value = None if entry is None else entry.get("expires", 1)
            # an entry already there is changed in place: never absent from the map for a moment
            if previous is not None and value is not None:
                if not (await self._runtime(f"set map {path} {key} {value}")).strip():
                    return
            await self._runtime(f"del map {path} {key}")
            if value is not None:
                await self._runtime(f"add map {path} {key} {value}", strict=True)
        except NodeError:
            put(durable, memory, key, previous)
            self._write_maps()
            with contextlib.suppress(NodeError):
                if previous is not None:
                    await self._runtime(f"add map {path} {key} {previous.get('expires', 1)}")
            raise

    async def delete_blacklist(self, ip: str) -> dict[str, Any]:
        """Lift a ban: out of the map, and the source's stick-table entry (flood flag) cleared."""
        key = await self._remove_source("bans", ip)
        if "/" not in key:
            with contextlib.suppress(NodeError):
                await self._runtime(f"clear table {FRONTEND} key {table_key(key)}")
        return {"ip": key, "status": "deleted"}

    async def _remove_source(self, kind: str, ip: str) -> str:
        key = source_key(ip)
        if key not in self._source_list(kind)[1]:
            raise NodeError(404, f"{key} is not {'banned' if kind == 'bans' else 'allowed'} on this node")
        self._require_running()
        await self._put_source(kind, key, None)
        return key

    async def add_allow(
        self, ip: str, reason: str, source: str = "api", generation: int | None = None
    ) -> dict[str, Any]:
        """Allow a source: checked before every other check, so bans, limits and the WAF skip it.
        `source` is who asked (api: this node's route; fleet: the fleet's allowlist, with its
        `generation`; an entry of the node's own on that source stays the node's)."""
        key = source_key(ip)
        self._require_running()
        self._check_generation(generation)
        entry = {"ip": key, "reason": reason, "source": source, "created_at": _iso(time.time())}
        if source == FLEET:
            entry = fleet_put("allow", self.allowlist.get(key), entry, generation or 0)
            if entry is self.allowlist.get(key):
                return entry
        await self._put_source("allow", key, entry)
        return entry

    async def delete_allow(self, ip: str) -> dict[str, Any]:
        return {"ip": await self._remove_source("allow", ip), "status": "deleted"}

    def list_allow(self) -> dict[str, Any]:
        entries = sorted(self.allowlist.values(), key=lambda e: str(e["ip"]))
        return {"entries": entries, "total": len(entries)}

    async def expire_blacklist(self) -> None:
        now = time.time()
        expired = [ip for ip, entry in self.blacklist.items() if entry["expires"] <= now]
        for ip in expired:
            self.state.bans.delete(ip)
            del self.blacklist[ip]
            with contextlib.suppress(NodeError):  # an expired entry no longer blocks in HAProxy either
                await self._runtime(f"del map {self.paths.blacklist} {ip}")
        if expired:
            self._write_maps()

    def list_blacklist(self) -> dict[str, Any]:
        """Bans in force, soonest expiry first, with reason, source (api, fleet, escalation/<kind>) and expiry."""
        return ban_list(self.blacklist.values())

    # -- policy (configuration changes: hitless reload) ------------------------
    async def apply_settings(
        self, changes: dict[str, Any], geo_prefixes: dict[str, list[str]] | None = None, generation: int | None = None
    ) -> dict[str, Any]:
        """Apply a policy's settings (a hitless reload). What HAProxy refuses, or a data plane that
        does not answer, leaves the node as it was: settings, geo prefixes, record, files. A policy
        of a fleet `generation` older than the last share or lift taken is 409 (a replay)."""
        self._require_running()
        self._check_generation(generation)
        try:
            updated = NodeSettings.model_validate({**self.settings.model_dump(), **changes})
        except ValidationError as exc:
            raise NodeError(422, "; ".join(e["msg"] for e in exc.errors())[:300]) from None
        kept = {"changes": {**(self.state.policy.get("changes") or {}), **changes}}
        await self._apply_policy(
            updated, geo_prefixes, {**kept, "geo": geo_prefixes} if geo_prefixes is not None else kept
        )
        if generation is not None:  # a policy removes what it changes: an older one must not come back
            self._took(generation)
        return {"id": self.node_id, "settings": self.settings.model_dump(exclude={"webhooks"})}

    async def _apply_policy(
        self, updated: NodeSettings, geo_prefixes: dict[str, list[str]] | None, kept: dict[str, Any]
    ) -> None:
        """Hold and record the settings `updated` (and geo prefixes; None: unchanged), then reload;
        what HAProxy or the CRS tier refuses puts everything back as it was."""
        before = (self.settings, self.geo_prefixes, self.state.policy.get("changes"), self.state.policy.get("geo"))
        await self._configure_inspection(updated)
        try:
            self._set_policy(updated, geo_prefixes, kept)
        except CertificateError as exc:  # the files changed since they were checked
            raise NodeError(422, f"tls: {exc}") from None
        try:
            await self._reload()
        except (HAProxyError, OSError, TimeoutError) as exc:
            self._set_policy(before[0], before[1], {"changes": before[2], "geo": before[3]})
            with contextlib.suppress(HAProxyError, OSError, TimeoutError, CrsError):
                await self._configure_inspection(before[0])
                await self._reload()
            status = 422 if isinstance(exc, HAProxyError) else 503
            raise NodeError(
                status, f"HAProxy did not take the policy: {str(exc)[:300] or type(exc).__name__}"
            ) from None
        if not updated.crs:  # HAProxy no longer sends anything to the tier
            await self.inspection.stop()

    async def _configure_inspection(self, settings: NodeSettings) -> None:
        """Start or re-configure the CRS tier for `settings` before HAProxy sends it traffic; what
        nginx or ModSecurity refuses is 422 and leaves the running tier as it was."""
        if not settings.crs:
            return
        try:
            await self.inspection.configure(settings, self.inspection.port or free_port())
        except CrsError as exc:
            raise NodeError(422, f"the WAF tier did not take the policy: {str(exc)[:300]}") from None

    async def _reload(self) -> None:
        """A hitless reload that carries the whole stick table, read just before, into the new workers."""
        async with self.table_lock:
            try:
                snapshot = Snapshot(parse_table(await self.proc.command(f"show table {FRONTEND}", timeout=10.0)))
            except (OSError, TimeoutError):
                snapshot = self.monitor.snapshot
            worker = await self.proc.reload()
            await self._restore_table(snapshot, worker)
            self.monitor.snapshot = snapshot

    async def _restore_table(self, snapshot: Snapshot, worker: int | None) -> None:
        """Put the entries of `snapshot` that have not expired since into the table of `worker` (None:
        the worker answering the admin socket, the only one after a fresh start)."""
        refused = []
        for line in restore_lines(FRONTEND, snapshot.live()):
            try:
                if worker is None:  # a new process: its only worker answers the admin socket
                    answer = (await self.proc.command(line, timeout=10.0)).strip()
                else:
                    answer = (await self.proc.worker_command(worker, line, timeout=10.0)).strip()
            except (OSError, TimeoutError) as exc:
                answer = repr(exc)
            if answer:
                refused.append(answer[:200])
        if refused:
            log.warning("stick table not fully restored", extra={"node": self.node_id, "refused": refused[:5]})

    def _set_policy(self, settings: NodeSettings, geo: dict[str, list[str]] | None, kept: dict[str, Any]) -> None:
        """Record the policy's keys (None: not set), then hold it and render the files HAProxy reads."""
        if settings.tls != self.settings.tls:  # a tls policy: the PEM the new workers load, before anything is kept
            self.certificate.install(settings)
        self.state.policy.set_many({k: v for k, v in kept.items() if v is not None})
        for key in [k for k, v in kept.items() if v is None]:
            self.state.policy.delete(key)
        self.settings = settings
        if geo is not None:
            self.geo_prefixes = geo
        self._write_maps()
        self._render()

    # -- TLS certificate -------------------------------------------------------
    def certificate_view(self) -> dict[str, Any]:
        """The served certificate's public facts (serial, subject, expiry, fingerprint), never its key."""
        return self.certificate.view(self.settings)

    async def replace_certificate(self, cert_pem: str, key_pem: str) -> dict[str, Any]:
        """Serve a new certificate without a reload (runtime API); kept for restarts. 422 for a pair
        that cannot be served, 409 on a node without TLS, 503 while HAProxy does not answer."""
        if self.settings.tls is None:
            raise NodeError(409, "this node has no TLS listener (node.tls)")
        self._require_running()

        async def runtime(command: str, payload: str | None) -> str:
            return await self._runtime(command, payload)

        try:
            await self.certificate.replace(self.settings, cert_pem, key_pem, runtime)
        except CertificateRefused as exc:
            raise NodeError(422, str(exc)) from None
        log.info("tls certificate replaced", extra={"node": self.node_id, "serial": self.certificate_view()["serial"]})
        return self.certificate_view()

    # -- fleet-wide counting ---------------------------------------------------
    async def source_rates(self) -> list[dict[str, Any]]:
        """Every active source of the stick table: `{ip, rate, flagged}` (requests/s in l7, new
        connections/s in syn mode), for the fleet to sum over its nodes."""
        l7 = self.settings.mode == "l7"
        rate = "http_req_rate" if l7 else "conn_rate"
        try:
            shown = await self.proc.command(f"show table {FRONTEND} data.{rate} gt 0")
        except (OSError, TimeoutError):
            return []
        return [
            {"ip": source_of(e.key), "rate": e.get(rate), "flagged": l7 and e.get("gpt0") > 0}
            for e in parse_table(shown)
        ]

    # -- events from the log stream -------------------------------------------
    def on_log(self, record: LogRecord) -> None:
        self.monitor.on_log(record)

    def raise_event(self, event: str, data: dict[str, Any]) -> None:
        payload = event_payload(event, self.node_id, data)
        self.monitor.remember(payload)
        self.webhooks.send(payload)

    # -- views -----------------------------------------------------------------
    async def status(self) -> dict[str, Any]:
        return await self.monitor.status()

    async def stats(self) -> dict[str, Any]:
        return await self.monitor.stats()

    async def heartbeat(self) -> dict[str, Any]:
        return await self.monitor.heartbeat()

    def threat_summary(self) -> dict[str, Any]:
        return self.monitor.threat_summary()

    def events(self, limit: int = 100) -> list[dict[str, Any]]:
        return self.monitor.recent_events(limit)

    async def metrics_text(self) -> bytes:
        self.update_child_metrics()
        return await self.metrics.render()


def ban_list(entries: Any) -> dict[str, Any]:
    """`{entries, total}` of bans, soonest expiry first, each with its expiry as ISO time."""
    now = time.time()
    live = sorted((e for e in entries if e["expires"] > now), key=lambda e: e["expires"])
    out = [{**e, "source": e.get("source", "api"), "expires_at": _iso(e["expires"])} for e in live]
    return {"entries": out, "total": len(out)}


def _iso(epoch: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
