"""List subscriptions: blocklists the proxy actor downloads again and again, each a durable copy.

A subscription is a URL, a type (`domain` or `ip`) and a refresh interval. The proxy actor's refresher
(`actors/webfilter/refresher.py`) fetches each one when it is due: SSRF-safe (`fetch.fetch`: every hop's
addresses checked), conditional (`If-None-Match` / `If-Modified-Since` from the last answer, so a 304 keeps
the copy), parsed by the same `entries.parse_list` as every import (adblock `@@` exceptions become
whitelist entries). A failed refresh (unreachable, an HTTP error, a list too large) or an invalid one (not
UTF-8 text, empty, or not one valid entry) records `last_error` and keeps the last good copy.

State is durable (`rayfleet.durable.DurableMap`): stream `webfilter/subscriptions` holds each
subscription's settings and refresh state, `webfilter/subscription-lists` its entries, written only when
they change, and `webfilter/subscription-ids` the last id given (an id is never given twice, so a retried
DELETE cannot remove a newer subscription). A restarted actor has them back before its first apply.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from actors.webfilter.entries import ParsedList, parse_list
from actors.webfilter.fetch import Fetched, FetchError, fetch, is_public
from actors.webfilter.squidconf import Policy
from rayfleet.durable import DurableMap, open_store

META_STREAM = "webfilter/subscriptions"
LISTS_STREAM = "webfilter/subscription-lists"
IDS_STREAM = "webfilter/subscription-ids"
MAX_INTERVAL = 30 * 86400
KINDS = ("domain", "ip")


@dataclass(frozen=True)
class SubscriptionSettings:
    """How subscriptions are kept and fetched (the `subscriptions` section of the component's config)."""

    durable_dsn: str | None = None  # rayfleet.durable.open_store; None: <proxy folder>/durable.sqlite3
    min_interval_seconds: float = 300.0
    max_bytes: int = 20 * 1024 * 1024
    allow_networks: tuple[str, ...] = ()  # addresses a URL may resolve to besides public ones (an own mirror)


class SubscriptionError(ValueError):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass(frozen=True)
class Outcome:
    """What one refresh found: a new copy (`parsed`), a 304 (`not_modified`), or an `error`."""

    fetched: Fetched | None = None
    parsed: ParsedList | None = None
    error: str | None = None

    @property
    def not_modified(self) -> bool:
        return self.fetched is not None and self.fetched.status == 304


def utc(ts: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts)) if ts else None


def address_check(allow_networks: tuple[str, ...]) -> Callable[[str], bool]:
    """Public addresses, plus those inside `allow_networks`."""
    networks = [ipaddress.ip_network(n, strict=False) for n in allow_networks]

    def allowed(address: str) -> bool:
        ip = ipaddress.ip_address(address)
        return is_public(address) or any(ip in net for net in networks)

    return allowed


def check_url(url: str) -> str:
    """An http(s) URL with a host, no credentials and no control character or whitespace."""
    if any(c.isspace() or ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in url):
        raise SubscriptionError(400, "the subscription URL contains whitespace or a control character")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SubscriptionError(400, "the subscription URL must be http(s) with a host")
    if parts.username is not None or parts.password is not None:
        raise SubscriptionError(400, "the subscription URL may not carry credentials")
    return url


def check_copy(fetched: Fetched, kind: str) -> ParsedList:
    """The entries of a downloaded list; SubscriptionError for a body that is no list of `kind`."""
    if b"\x00" in fetched.body:
        raise SubscriptionError(422, "the list is not text (it contains NUL bytes)")
    try:
        text = fetched.body.decode("utf-8")
    except UnicodeDecodeError:
        raise SubscriptionError(422, "the list is not UTF-8 text") from None
    parsed = parse_list(text, kind)
    if not parsed.entries and not parsed.exceptions:
        skipped = ", ".join(f"{reason} {n}" for reason, n in sorted(parsed.reasons.items())) or "no entry lines"
        raise SubscriptionError(422, f"the list has no valid {kind} entry ({skipped})")
    return parsed


async def download(meta: dict[str, Any], settings: SubscriptionSettings) -> Outcome:
    """Fetch and check one subscription's list (no state touched: the owner records the outcome)."""
    try:
        fetched = await fetch(
            meta["url"],
            settings.max_bytes,
            address_check(settings.allow_networks),
            etag=meta.get("etag", ""),
            last_modified=meta.get("last_modified", ""),
        )
        if fetched.status == 304:
            return Outcome(fetched)
        return Outcome(fetched, check_copy(fetched, meta["type"]))
    except (FetchError, SubscriptionError) as exc:
        return Outcome(error=exc.detail)


class Subscriptions:
    """The subscriptions and their last good copies; callers serialise access (the proxy actor's lock)."""

    def __init__(self, settings: SubscriptionSettings, default_dsn: str) -> None:
        self.settings = settings
        store = open_store(settings.durable_dsn or default_dsn)
        self.meta = DurableMap(store, META_STREAM)  # id -> settings and refresh state
        self.lists = DurableMap(store, LISTS_STREAM)  # id -> {"entries": [...], "exceptions": [...]}
        self.ids = DurableMap(store, IDS_STREAM)  # "last": the last id given (never given again)
        self.forced: set[str] = set()  # ids asked to refresh now

    def add(self, url: str, kind: str, interval: float, description: str) -> dict[str, Any]:
        check_url(url)
        if kind not in KINDS:
            raise SubscriptionError(400, f"type must be one of {', '.join(KINDS)}")
        low = self.settings.min_interval_seconds
        if not low <= interval <= MAX_INTERVAL:
            raise SubscriptionError(400, f"interval_seconds must be between {low:g} and {MAX_INTERVAL}")
        if any(m["url"] == url and m["type"] == kind for _, m in self.meta.items()):
            raise SubscriptionError(409, f"{url} is already subscribed as a {kind} list")
        last = max([int(self.ids.get("last", 0)), *(int(k) for k, _ in self.meta.items())])
        key = str(last + 1)
        self.ids.set("last", last + 1)
        meta = {"url": url, "type": kind, "interval_seconds": interval, "description": description}
        self.meta.set(key, {**meta, "created": time.time(), "next_at": 0.0, "attempts": 0})
        return self.view(key)

    def remove(self, key: str) -> bool:
        if key not in self.meta:
            return False
        self.lists.delete(key)
        self.meta.delete(key)
        self.forced.discard(key)
        return True

    def view(self, key: str) -> dict[str, Any]:
        meta, copy = self.meta[key], self.lists.get(key, {})
        return {
            "id": int(key),
            "url": meta["url"],
            "type": meta["type"],
            "description": meta["description"],
            "interval_seconds": meta["interval_seconds"],
            "entries": len(copy.get("entries", [])),
            "exceptions": len(copy.get("exceptions", [])),
            "created": utc(meta["created"]),
            "last_refresh": utc(meta.get("last_refresh")),
            "last_success": utc(meta.get("last_success")),
            "last_changed": utc(meta.get("last_changed")),
            "last_status": meta.get("last_status"),
            "last_error": meta.get("last_error"),
            "skipped_lines": meta.get("skipped_lines", {}),
            "etag": meta.get("etag", ""),
            "last_modified": meta.get("last_modified", ""),
            "refreshes": meta["attempts"],
            "next_refresh": utc(meta["next_at"]) if key not in self.forced else utc(time.time()),
        }

    def views(self) -> list[dict[str, Any]]:
        return [self.view(key) for key in sorted((k for k, _ in self.meta.items()), key=int)]

    def due(self, now: float) -> list[tuple[str, dict[str, Any]]]:
        return [(k, dict(m)) for k, m in self.meta.items() if k in self.forced or m["next_at"] <= now]

    def next_at(self) -> float | None:
        times = [m["next_at"] for _, m in self.meta.items()]
        return min(times) if times else None

    def merged(self, policy: Policy, candidate: tuple[str, dict[str, list[str]]] | None = None) -> Policy:
        """`policy` with every subscription's copy added (and `candidate`, a key and copy, in place of that
        key's copy): domain entries to the domain blacklist, exceptions to the domain whitelist, addresses
        to the IP blacklist."""
        copies = dict(self.lists.items())
        if candidate is not None:
            copies[candidate[0]] = candidate[1]
        domains, exceptions = list(policy.domain_blacklist), list(policy.domain_whitelist)
        ips: list[str] = []
        for key, copy in copies.items():
            meta = self.meta.get(key)
            if meta is None:
                continue
            (domains if meta["type"] == "domain" else ips).extend(copy.get("entries", []))
            exceptions.extend(copy.get("exceptions", []))
        if not copies:
            return policy
        return dataclasses.replace(
            policy,
            domain_blacklist=domains,
            domain_whitelist=exceptions,
            ip_blacklist=[*policy.ip_blacklist, *ips],
        )

    def copy_of(self, outcome: Outcome) -> dict[str, list[str]]:
        parsed = outcome.parsed
        assert parsed is not None
        return {"entries": parsed.entries, "exceptions": parsed.exceptions}

    def changed(self, key: str, copy: dict[str, list[str]]) -> bool:
        return bool(self.lists.get(key) != copy)

    def record(self, key: str, outcome: Outcome, applied_error: str | None, now: float) -> None:
        """Store what a refresh found: a new good copy (unless the proxy refused it: `applied_error`), the
        validators and times; an error keeps the last good copy and retries after the minimum interval."""
        meta = dict(self.meta[key])
        self.forced.discard(key)
        error = outcome.error or applied_error
        meta.update(last_refresh=now, attempts=meta["attempts"] + 1, last_error=error)
        if error is None and outcome.fetched is not None:
            meta.update(last_success=now, last_status=outcome.fetched.status)
            meta.update(etag=outcome.fetched.etag, last_modified=outcome.fetched.last_modified)
            if outcome.parsed is not None:
                copy = self.copy_of(outcome)
                if self.changed(key, copy):
                    self.lists.set(key, copy)
                    meta["last_changed"] = now
                meta["skipped_lines"] = dict(sorted(outcome.parsed.reasons.items()))
        retry = meta["interval_seconds"] if error is None else min(meta["interval_seconds"], self._retry())
        meta["next_at"] = now + retry
        self.meta.set(key, meta)

    def postpone(self, key: str, now: float) -> None:
        """After a refresh that could not even be recorded: try again after the minimum interval."""
        self.forced.discard(key)
        if key in self.meta:
            self.meta.set(key, {**self.meta[key], "next_at": now + self._retry()})

    def _retry(self) -> float:
        return max(self.settings.min_interval_seconds, 1.0)
