"""The named actor that owns the data plane: one Squid and one dnsmasq for every replica.

Squid and dnsmasq are supervised children (`rayfleet.supervisor`): a child that dies is restarted on
the same port with the policy last applied. They die with this actor's process (PR_SET_PDEATHSIG and
the data plane's watchdog), so stopping the Ray cluster (or the test process, for the in-process
stand-in) leaves nothing running; a restarted actor ends what its predecessor left and takes the same
port. Calls are serialised like any actor's, so reconfigurations never interleave.

The actor also owns the list subscriptions (`subscriptions.py`): a background thread (`refresher.py`)
downloads each when it is due, and every policy the actor renders is the one the replicas applied (the
"base", from `config.db`) plus every subscription's last good copy. The base and the subscriptions are
guarded by one lock, taken by the actor's calls and by the refresher.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from actors.webfilter import grouprules
from actors.webfilter.dataplane import DataPlane, DataPlaneError, PlaneStatus, ProxySettings
from actors.webfilter.refresher import Refresher
from actors.webfilter.rulehits import Decision, RuleIndex
from actors.webfilter.squidconf import Policy
from actors.webfilter.subscriptions import Outcome, Subscriptions, SubscriptionSettings
from actors.webfilter.tlsfiles import tls_capable
from rayfleet.logs import get_logger

log = get_logger("webfilter.proxy")


PolicyReader = Callable[[], tuple[int, Policy]]  # the policy in the database and its version, one snapshot


class ProxyOwner:
    def __init__(
        self,
        root: str,
        settings: ProxySettings,
        subscriptions: SubscriptionSettings | None = None,
        source: PolicyReader | None = None,
    ) -> None:
        """A restarted actor (Ray restarts it after its process died) starts the data plane at once with the
        policy its predecessor last applied (`policy.json`) and the subscriptions' durable copies, rather than
        waiting for the next edit. `source` reads the replicas' policy and its version (`sync`)."""
        self.plane = DataPlane(Path(root), settings)
        self._saved = Path(root) / "policy.json"
        self._lock = threading.RLock()
        self.subs = Subscriptions(
            subscriptions or SubscriptionSettings(), f"sqlite:///{Path(root) / 'durable.sqlite3'}"
        )
        self.base: Policy | None = None  # the policy the replicas last applied, without the subscriptions
        self._indexed: tuple[Any, RuleIndex] | None = None  # the last rule index built, with what it was built from
        self.source = source
        self.synced = -1  # the policy version last read and applied by `sync`
        self.last_sync: dict[str, Any] = {}
        self.reads = 0
        with contextlib.suppress(OSError, ValueError, TypeError):
            last = Policy(**json.loads(self._saved.read_text()))
            self.base = last
            try:
                self.plane.start(self.subs.merged(last))
            except Exception as exc:  # the next ensure or apply tries again, and reports
                log.error("could not restart the data plane with the saved policy", extra={"error": repr(exc)})
        self.refresher = Refresher(self.subs, self._lock, self._record)

    def _save(self, policy: Policy) -> None:
        tmp = self._saved.with_name(self._saved.name + ".tmp")
        tmp.write_text(json.dumps(dataclasses.asdict(policy)))
        os.replace(tmp, self._saved)

    def ensure(self, policy: Policy) -> PlaneStatus:
        """Start the data plane if it was not started, else apply `policy`; returns the status. (A child that
        died is its supervisor's to restart, not this call's.)"""
        with self._lock:
            self.base = policy
            if self.plane.supervisor is None:
                status = self.plane.start(self.subs.merged(policy))
            else:
                self.plane.apply(self.subs.merged(policy))
                status = self.plane.status()
            self._save(policy)
            return status

    def apply(self, policy: Policy) -> dict[str, Any]:
        """Render `policy` plus the subscriptions' copies (see `DataPlane.apply`)."""
        with self._lock:
            if self.plane.supervisor is None:
                return self.ensure(policy)["last_apply"] or {"changed": True, "started": True}
            applied = self.plane.apply(self.subs.merged(policy))
            self.base = policy
            self._save(policy)
            return applied

    def sync(self, version: int) -> dict[str, Any]:
        """Enforce the replicas' policy at `version` or later: a replica commits its change, bumps the version
        and calls this with it. When a policy at least that new was already read and applied, the answer is
        that apply's (nothing is read or rendered again); otherwise the policy is read once, with its
        version, and applied. Calls are serialised, so edits made on any replica while an apply runs share
        the next one: coalescing is cluster-wide, and a list edit sends one integer, not the policy."""
        if self.source is None:
            raise DataPlaneError("this proxy actor has no policy source")
        with self._lock:
            if self.synced >= version:
                return {**self.last_sync, "coalesced": True}
            read_version, policy = self.source()
            self.reads += 1
            applied = self.apply(policy)
            self.synced, self.last_sync = read_version, {**applied, "version": read_version}
            return self.last_sync

    # subscriptions -----------------------------------------------------------------------------------
    def subscribe(self, url: str, kind: str, interval: float, description: str) -> dict[str, Any]:
        """Add a subscription (SubscriptionError 400/409); the refresher fetches it at once."""
        with self._lock:
            view = self.subs.add(url, kind, interval, description)
        self.refresher.wake()
        return view

    def unsubscribe(self, key: int) -> bool:
        """Remove a subscription and enforce the policy without its copy; False when unknown."""
        with self._lock:
            if not self.subs.remove(str(key)):
                return False
            if self.base is not None and self.plane.supervisor is not None:
                self.plane.apply(self.subs.merged(self.base))
            return True

    def subscriptions(self) -> list[dict[str, Any]]:
        with self._lock:
            return self.subs.views()

    def subscription(self, key: int) -> dict[str, Any] | None:
        with self._lock:
            return self.subs.view(str(key)) if str(key) in self.subs.meta else None

    def refresh_subscription(self, key: int) -> dict[str, Any] | None:
        """Have the refresher fetch this subscription now; None when unknown."""
        with self._lock:
            if str(key) not in self.subs.meta:
                return None
            self.subs.forced.add(str(key))
            view = self.subs.view(str(key))
        self.refresher.wake()
        return view

    def attribute(self, hosts: list[str]) -> list[Decision | None]:
        """The domain rule (and its source: `domain-blacklist` or `subscription:<id>`) that blocks each host
        under the policy in force now (`rulehits.RuleIndex`)."""
        index = self._index(dns=False)
        return [index.decide(host) for host in hosts]

    def attribute_dns(self, names: list[str], groups: list[str | None] | None = None) -> list[Decision | None]:
        """`attribute` for names dnsmasq blocked: its blocklist has the plain names and `*.name` rules, never
        the `/regex/` ones (Squid alone enforces those), so a regex rule is never credited. A name a client
        group's view blocked (`groups`, per name) is credited to the group's blacklist (source `group:<name>`)
        when one of its rules covers it, else to the global lists."""
        index = self._index(dns=True)
        with self._lock:
            lists = {g["name"]: g["blacklist"] for g in (self.base.groups if self.base else [])}
        own = {
            group: RuleIndex({grouprules.rule_name(group): [r for r in lists[group] if not r.startswith("/")]})
            for group in set(groups or []) - {None}
            if group in lists
        }
        out: list[Decision | None] = []
        for name, group in zip(names, groups or [None] * len(names), strict=True):
            found = own[group].decide(name) if group in own else None
            out.append(found or index.decide(name))
        return out

    def dns_sinkhole(self) -> str | None:
        """Where dnsmasq forwards the names blocked since its last start (`addr#port`), as its query log names
        it; the log store asks when a batch holds an answer forwarded to an unknown loopback address, since a
        restarted data plane may have taken another port."""
        return self.plane.sinkhole_address if self.plane.sinkhole_port else None

    def dns_groups(self, pids: list[int]) -> dict[int, str]:
        """pid -> client group, for the dnsmasq processes among `pids` that are (or were) a group's view."""
        views = self.plane.view_pids  # a dict the data plane rebinds, never changes in place
        return {pid: views[pid] for pid in pids if pid in views}

    def _index(self, dns: bool) -> RuleIndex:
        """The rule index of the lists in force, built once per policy and subscription copies (the DNS
        tailer asks for every batch with a blocked answer)."""
        with self._lock:
            key = (id(self.base), tuple((k, id(copy)) for k, copy in self.subs.lists.items()), dns)
            if self._indexed is not None and self._indexed[0] == key:
                return self._indexed[1]
            sources = {"domain-blacklist": list(self.base.domain_blacklist if self.base else [])}
            for sub, copy in self.subs.lists.items():
                meta = self.subs.meta.get(sub)
                if meta is not None and meta["type"] == "domain":
                    sources[f"subscription:{sub}"] = list(copy.get("entries", []))
            if dns:
                sources = {name: [r for r in rules if not r.startswith("/")] for name, rules in sources.items()}
            index = RuleIndex(sources)
            self._indexed = (key, index)
            return index

    def _record(self, key: str, outcome: Outcome) -> None:
        """A refresh's outcome (from the refresher thread): a changed copy is enforced first; one the proxy
        refuses is not kept (the last good copy stays, and `last_error` says why)."""
        with self._lock:
            if key not in self.subs.meta:
                return  # removed while it was being fetched
            refused = None
            if outcome.parsed is not None and self.base is not None and self.plane.supervisor is not None:
                copy = self.subs.copy_of(outcome)
                if self.subs.changed(key, copy):
                    try:
                        self.plane.apply(self.subs.merged(self.base, (key, copy)))
                    except DataPlaneError as exc:
                        refused = f"the proxy refused the new list: {exc}"
            self.subs.record(key, outcome, refused, time.time())

    def status(self) -> PlaneStatus:
        return self.plane.status()

    def crs_report(self) -> dict[str, Any]:
        """The CRS tier's refusals since the actor started (from its audit log) and its state."""
        with self._lock:
            return self.plane.crs_report()

    def crs_reset(self, at: float) -> None:
        """The CRS tier's counts restart from `at` (`POST /api/counters/reset`)."""
        with self._lock:
            self.plane.crs_reset(at)

    def tls_capable(self) -> bool:
        """Whether the installed Squid can bump TLS (OpenSSL build with its certificate generator)."""
        return tls_capable(self.plane.config.squid_bin, self.plane.config.certgen_bin)

    def reconfigure(self) -> PlaneStatus:
        self.plane.reconfigure()
        return self.plane.status()

    def reload_dns(self) -> bool:
        return self.plane.reload_dns()

    def rotate_log(self, which: Literal["access", "dns"]) -> bool:
        """Rotate Squid's access log or dnsmasq's query log (the log store asks once one is too big)."""
        return self.plane.rotate_log(which)

    def restart(self) -> PlaneStatus:
        return self.plane.restart_squid()

    def manager(self, action: str) -> str:
        """Text of a cache manager page (`info`, `counters`, ...) from Squid on loopback."""
        if not self.plane.running():
            raise RuntimeError("squid is not running")
        url = f"http://127.0.0.1:{self.plane.port}/squid-internal-mgr/{action}"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=5) as response:
            return str(response.read(1_000_000).decode("utf-8", "replace"))

    def stop(self) -> None:
        self.refresher.stop()
        self.plane.stop()
