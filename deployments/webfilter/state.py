"""What every web filter router shares: config, the database, the shared actors, the live log fan-out.

`WebfilterState.from_ray(config)` builds the default: the store and CA under `config.root`, the
admin user, and the named actors `webfilter_auth`, `webfilter_proxy`, `webfilter_logs` (in-process
stand-ins without Ray). `create_app` attaches it to the app (`rayfleet.appstate`).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypedDict, TypeVar

from actors.webfilter.authstate import AuthState
from actors.webfilter.dataplane import ProxySettings
from actors.webfilter.logstore import LogStore
from actors.webfilter.proxy import ProxyOwner
from actors.webfilter.subscriptions import SubscriptionSettings
from deployments.webfilter import ca
from deployments.webfilter.config import WebfilterConfig
from deployments.webfilter.policysource import LogSettingsSource, PolicySource
from deployments.webfilter.secretbox import SecretBox
from deployments.webfilter.store import Store
from deployments.webfilter.stream import Fanout
from rayfleet import state as rf_state
from rayfleet.config import ConfigError
from rayfleet.http import Network, parse_networks
from rayfleet.logs import register_secret
from rayfleet.metrics import Metrics
from rayfleet.state import ActorHandle, call
from rayfleet.supervisor import ChildMetrics

P = ParamSpec("P")
R = TypeVar("R")


class Interception(TypedDict):
    interception_enabled: bool
    squid_running: bool
    ca_sha256: str


class Coalesced:
    """Runs an apply for every caller, but callers that arrive while one is running share the next one.

    A caller's change is committed before it asks, and the shared run reads the policy only once it
    starts (after the running one), so it carries every change of the callers that joined it: N
    concurrent edits cost at most two reconfigurations, not N. The run is a task of its own, so a
    caller that goes away does not cancel it for the others."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._pending: asyncio.Future[dict[str, Any]] | None = None
        self.runs = 0

    async def __call__(self, apply: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._start(apply))
        return await asyncio.shield(self._pending)

    async def _start(self, apply: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        async with self._lock:
            self._pending = None  # from here on, a new caller's change may be too late for this run
            self.runs += 1
            return await apply()


@dataclass
class WebfilterState:
    config: WebfilterConfig
    store: Store
    auth: ActorHandle[AuthState]
    logs: ActorHandle[LogStore]
    proxy: ActorHandle[ProxyOwner]
    trusted: list[Network]
    ca_cert: Path  # the interception CA the API serves (and Squid bumps with when ssl_bump_enabled)
    ca_key: Path
    public_check: Callable[[str], bool] | None = None  # is an import URL's address public; injectable in tests
    applies: Coalesced = field(default_factory=Coalesced)
    metrics: Metrics = field(default_factory=lambda: Metrics("webfilter"))
    fanout: Fanout = field(init=False)
    children: ChildMetrics = field(init=False)  # Squid's and dnsmasq's supervisors in /metrics

    def __post_init__(self) -> None:
        self.fanout = Fanout(self.logs, self.store)
        self.children = ChildMetrics(self.metrics)

    @classmethod
    def from_ray(cls, config: WebfilterConfig) -> WebfilterState:
        """The store, CA and admin under `config.root`, and the named actors. ConfigError without an
        admin password (there is no default one)."""
        if config.admin_password is None:
            raise ConfigError("WEBFILTER_ADMIN_PASSWORD is not set: the web filter has no default admin password")
        register_secret(config.admin_password.get_secret_value())
        root = config.root
        root.mkdir(parents=True, exist_ok=True)
        api_key = config.asn_api_key.get_secret_value() if config.asn_api_key else None
        store = Store(root / "config.db", SecretBox.for_data_dir(api_key, root))
        ca_cert, ca_key = ca.ensure_ca(root / "ca")
        store.ensure_admin(config.auth.admin_user, config.admin_password.get_secret_value())
        lockout = config.auth
        proxy_settings = ProxySettings(**config.proxy.model_dump(), ca_cert=str(ca_cert), ca_key=str(ca_key))
        subscriptions = SubscriptionSettings(
            durable_dsn=config.durable_store,
            min_interval_seconds=float(config.subscriptions.min_interval_seconds),
            max_bytes=config.import_max_bytes,
            allow_networks=tuple(config.subscriptions.allow_networks),
        )
        return cls(
            config=config,
            store=store,
            auth=rf_state.actor(
                AuthState,
                "webfilter_auth",
                lockout.lockout_attempts,
                float(lockout.lockout_window_seconds),
                durable_dsn=config.durable_store,
            ),
            logs=rf_state.actor(
                LogStore,
                "webfilter_logs",
                str(root / "logs.duckdb"),
                None,
                config.tail_interval_seconds,
                LogSettingsSource(root / "config.db"),
                config.retention_interval_seconds,
                rotate_bytes=config.log_rotate_bytes,
            ),
            proxy=rf_state.actor(
                ProxyOwner,
                "webfilter_proxy",
                str(root / "proxy"),
                proxy_settings,
                subscriptions,
                PolicySource(root / "config.db"),
            ),
            trusted=parse_networks(config.trusted_proxies),
            ca_cert=ca_cert,
            ca_key=ca_key,
        )

    async def db(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """A store call on a worker thread (SQLite blocks)."""
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def sync_proxy(self) -> dict[str, Any]:
        """Render the effective policy into Squid (and dnsmasq) and reconfigure; concurrent callers of this
        replica share runs (`Coalesced`), and the proxy actor reads the policy once for the changes of every
        replica (`ProxyOwner.sync`). Returns once Squid enforces a policy that includes the caller's committed change."""
        return await self.applies(self._apply)

    async def _apply(self) -> dict[str, Any]:
        """Mark the policy changed and have the proxy actor read and enforce it (once for every change
        committed before it reads, whichever replica made it)."""
        version = await self.db(self.store.bump_policy_version)
        return await call(self.proxy, ProxyOwner.sync, version)

    async def interception(self) -> Interception:
        """Whether Squid really bumps HTTPS now, with the CA this API serves (not just the setting)."""
        status = await call(self.proxy, ProxyOwner.status)
        served = hashlib.sha256(await asyncio.to_thread(self.ca_cert.read_bytes)).hexdigest()
        return {
            "interception_enabled": bool(status["ssl_bump"]) and status["ssl_bump_ca_sha256"] == served,
            "squid_running": bool(status["running"]),
            "ca_sha256": served,
        }
