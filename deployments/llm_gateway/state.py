"""The gateway's composition root: ``GatewayState``, everything one replica holds, and how it is wired.

``GatewayState.from_ray(config)`` builds a replica: the shared actors' handles
(``Handles``: named Ray actors, or in-process stand-ins without Ray), their replica-side
views and leases, the stores, the stage objects of the rings (``stages/``) in their
pipeline, and the config reload. Nothing here starts background work or opens a
connection pool: ``lifecycle.start`` does, from the app's lifespan.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from starlette.requests import Request

from actors.llm_gateway import (
    BreakerBoard,
    BudgetLedger,
    ControlBoard,
    KeyBoard,
    KeyBudgets,
    LatencyBoard,
    RateLimiter,
    RegistryBoard,
    ThreatLedger,
    WebhookQueue,
)
from actors.llm_gateway.prober import EndpointProber
from actors.llm_gateway.sessions import SessionBoard
from deployments.llm_gateway.access import ControlAccess, control_access
from deployments.llm_gateway.admission import Admission
from deployments.llm_gateway.audit import AuditTrail, audit_key
from deployments.llm_gateway.auth import Authenticator
from deployments.llm_gateway.cache import RedisCache, SQLiteCache
from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.discovery import LocalServers
from deployments.llm_gateway.error_tracker import ErrorTracker
from deployments.llm_gateway.events import EventLog, WebhookFeed
from deployments.llm_gateway.export import RequestExport, writer_name
from deployments.llm_gateway.exporter import MetricsExporter
from deployments.llm_gateway.forwarder import Forwarder
from deployments.llm_gateway.handler import RequestHandler
from deployments.llm_gateway.health_probe import HealthFeed
from deployments.llm_gateway.key_budgets import KeyBudgetLeases
from deployments.llm_gateway.logsetup import configure as configure_logging
from deployments.llm_gateway.notices import Notices
from deployments.llm_gateway.pipeline import Pipeline, Stage
from deployments.llm_gateway.pricing import PriceTable
from deployments.llm_gateway.registry import RegistryClient
from deployments.llm_gateway.reload import LiveConfig, Reload
from deployments.llm_gateway.routing import Router
from deployments.llm_gateway.security import SecurityStages
from deployments.llm_gateway.shared_state import BreakerClient, BudgetLeases, TokenLeases
from deployments.llm_gateway.stages import background, ingress, key_limits, postflight, preflight, routing
from deployments.llm_gateway.storage import RecordWriter, build_backend
from deployments.llm_gateway.switches import ControlView, LatencyFeed, ThreatView
from deployments.llm_gateway.telemetry import GatewayMetrics, MetricsText
from deployments.llm_gateway.tracing import RequestTracer
from deployments.llm_gateway.virtual_keys import VirtualKeys
from rayfleet import state as state_mod
from rayfleet.metrics import Metrics
from rayfleet.state import ActorHandle
from rayfleet.tasks import BackgroundTasks

ACTOR_PREFIX = "llm_gateway"
Guard = Callable[[Request], Awaitable[str]]
Cache = SQLiteCache | RedisCache


class Listener(Protocol):
    """What ``/health`` reports about the direct listener (``rayfleet.direct.ActiveView``)."""

    def view(self) -> dict[str, Any]: ...


def durable_store(config: GatewayConfig) -> dict[str, str | None]:
    """Where the durable actors keep their record (``actors/llm_gateway/durable_store.py``)."""
    st = config.server.storage
    return {"type": st.type, "sqlite_path": str(config.data_path(st.path)), "dsn_env": st.dsn_env, "dsn": st.dsn}


def registry_store(config: GatewayConfig) -> dict[str, str | None]:
    """Where the registry actor keeps its entries and the key that seals their upstream keys."""
    return {
        **durable_store(config),
        "secret_env": config.registry.secret_env,
        "key_file": str(config.data_path(config.registry.key_file)),
    }


@dataclass
class Handles:
    """The cluster-wide actors of the gateway (they outlive redeploys; every replica shares them)."""

    breakers: ActorHandle[BreakerBoard]
    budget: ActorHandle[BudgetLedger]
    ratelimit: ActorHandle[RateLimiter]
    registry: ActorHandle[RegistryBoard]
    control: ActorHandle[ControlBoard]
    threats: ActorHandle[ThreatLedger]
    latency: ActorHandle[LatencyBoard]
    sessions: ActorHandle[SessionBoard]
    keys: ActorHandle[KeyBoard]
    key_budgets: ActorHandle[KeyBudgets]
    webhooks: ActorHandle[WebhookQueue] | None = None
    prober: ActorHandle[EndpointProber] | None = None

    @classmethod
    def from_ray(cls, config: GatewayConfig) -> Handles:
        cb, tl, budget, hc = config.circuit_breaker, config.security.threat_ledger, config.budget, config.health_check
        p = ACTOR_PREFIX
        breakers = state_mod.actor(
            BreakerBoard,
            f"{p}.breakers",
            cb.failure_threshold,
            cb.recovery_timeout,
            cb.probe_timeout,
            unhealthy_threshold=hc.unhealthy_threshold,
            healthy_threshold=hc.healthy_threshold,
        )
        return cls(
            breakers=breakers,
            budget=state_mod.actor(BudgetLedger, f"{p}.budget", budget.daily_limit, budget.soft_limit),
            ratelimit=state_mod.actor(RateLimiter, f"{p}.ratelimit"),
            registry=state_mod.actor(RegistryBoard, f"{p}.registry", registry_store(config)),
            control=state_mod.actor(ControlBoard, f"{p}.control", store=durable_store(config)),
            threats=state_mod.actor(
                ThreatLedger, f"{p}.threats", tl.threshold, tl.window_seconds, tl.min_events, tl.max_actors
            ),
            latency=state_mod.actor(LatencyBoard, f"{p}.latency"),
            sessions=state_mod.actor(SessionBoard, f"{p}.sessions", store=durable_store(config)),
            keys=state_mod.actor(KeyBoard, f"{p}.keys", durable_store(config)),
            key_budgets=state_mod.actor(KeyBudgets, f"{p}.key_budgets", durable_store(config)),
            webhooks=(
                state_mod.actor(WebhookQueue, f"{p}.webhooks", store=durable_store(config))
                if config.webhooks.enabled
                else None
            ),
            prober=(state_mod.actor(EndpointProber, f"{p}.prober", breakers) if config.health_check.enabled else None),
        )

    async def configure(self, config: GatewayConfig) -> None:
        """Apply a configuration's breaker, health, budget and threat-ledger settings to the shared actors."""
        cb, tl, hc = config.circuit_breaker, config.security.threat_ledger, config.health_check
        await state_mod.call(
            self.breakers, BreakerBoard.configure, cb.failure_threshold, cb.recovery_timeout, cb.probe_timeout
        )
        await state_mod.call(self.breakers, BreakerBoard.configure_health, hc.unhealthy_threshold, hc.healthy_threshold)
        await state_mod.call(self.budget, BudgetLedger.configure, config.budget.daily_limit, config.budget.soft_limit)
        await state_mod.call(
            self.threats, ThreatLedger.configure, tl.threshold, tl.window_seconds, tl.min_events, tl.max_actors
        )


@dataclass
class Views:
    """The replica-side views of the shared actors: what the request path reads instead of calling them."""

    breakers: BreakerClient
    leases: TokenLeases
    budget: BudgetLeases
    control: ControlView
    threats: ThreatView
    latency: LatencyFeed
    registry: RegistryClient
    keys: VirtualKeys
    key_budgets: KeyBudgetLeases
    events: EventLog
    webhook_feed: WebhookFeed | None
    health: HealthFeed | None

    @classmethod
    def of(cls, config: GatewayConfig, handles: Handles, router: Router) -> Views:
        events = EventLog()
        feed = WebhookFeed(handles.webhooks) if handles.webhooks is not None else None
        if feed is not None:
            events.listeners.append(feed)
        return cls(
            breakers=BreakerClient(handles.breakers),
            leases=TokenLeases(handles.ratelimit),
            budget=BudgetLeases(handles.budget, config.budget.daily_limit),
            control=ControlView(handles.control),
            threats=ThreatView(handles.threats),
            latency=LatencyFeed(handles.latency),
            registry=RegistryClient(handles.registry, router, config.registry.refresh_interval),
            keys=VirtualKeys(handles.keys),
            key_budgets=KeyBudgetLeases(handles.key_budgets),
            events=events,
            webhook_feed=feed,
            health=(HealthFeed(handles.prober, router, config.health_check) if handles.prober is not None else None),
        )


@dataclass
class Stores:
    """Where requests leave traces: response cache, spend records, audit trail, export, traces, errors."""

    cache: Cache | None
    records: RecordWriter
    tracer: RequestTracer
    error_tracker: ErrorTracker
    audit: AuditTrail | None
    export: RequestExport | None

    @classmethod
    def of(cls, config: GatewayConfig, metrics: GatewayMetrics, clock: Callable[[], float]) -> Stores:
        cache: Cache | None = None
        c = config.caching
        if c.enabled:
            if c.redis_url:
                cache = RedisCache(c.redis_url, c.ttl, c.socket_timeout(), c.connect_timeout())
            else:
                cache = SQLiteCache(config.data_path(c.db_path), c.ttl, c.max_entries)
        st, obs, trail = config.server.storage, config.observability, config.logging.audit_trail
        records = RecordWriter(
            build_backend(st.type, st.dsn_env, st.dsn, config.data_path(st.path)),
            st.batch_size,
            st.flush_interval,
            retention_days=config.gdpr.retention_days if config.gdpr.auto_purge else None,
        )
        export = None
        if obs.export.enabled:
            export = RequestExport(
                config.export_dir(),
                scrub_pii=obs.export.scrub_pii,
                compress_on_rotate=obs.export.compress_on_rotate,
                writer=writer_name(),
                clock=clock,
                on_drop=metrics.export_dropped.inc,
            )
        return cls(
            cache=cache,
            records=records,
            tracer=RequestTracer(obs.tracing),
            error_tracker=ErrorTracker(obs.error_tracker.dsn_env, obs.tracing.service_name),
            audit=(
                AuditTrail(
                    config.data_path("audit.db"),
                    audit_key(trail.secret_env, config.data_path(trail.key_file)),
                    trail.mask_pii,
                    config.data_path(trail.head_file),
                )
                if trail.enabled
                else None
            ),
            export=export,
        )


@dataclass
class Parts:
    """What the stages are built from (the state before its pipeline exists)."""

    router: Router
    inference_guard: Guard
    admission: Admission
    metrics: GatewayMetrics
    views: Views
    stores: Stores
    local: LocalServers


def build_pipeline(
    live: LiveConfig, parts: Parts, security: SecurityStages, forward: routing.Forward, prices: PriceTable
) -> Pipeline:
    """The rings' plugins, in order (``/admin/plugins`` lists them)."""
    v, s = parts.views, parts.stores
    charge = postflight.Charge(prices, parts.metrics, forward.forwarder, v.budget)
    key_charge = key_limits.KeyCharge(v.leases, v.key_budgets)
    stages = [
        Stage("panic", "INGRESS", security.panic, required=True),
        Stage("auth", "INGRESS", ingress.Authenticate(parts.inference_guard).run, required=True),
        Stage("threat_ledger", "INGRESS", security.threat_ledger),
        Stage("client_rate_limit", "INGRESS", ingress.ClientRateLimit(live, v.leases).run),
        Stage("admission", "INGRESS", ingress.AdmissionControl(live, parts.admission, parts.metrics).run),
        Stage("request_limits", "PRE_FLIGHT", preflight.RequestLimits(live).run, required=True),
        Stage("injection_scan", "PRE_FLIGHT", security.injection_scan),
        Stage("link_sanitizer", "PRE_FLIGHT", security.link_sanitizer),
        Stage("model_resolution", "PRE_FLIGHT", preflight.ModelResolution(live, parts.router).run, required=True),
        Stage("cache_check", "PRE_FLIGHT", preflight.CacheCheck(s.cache).run),
        Stage("budget_guard", "PRE_FLIGHT", preflight.BudgetGuard(live, prices, v.budget, parts.local).run),
        Stage("key_limits", "PRE_FLIGHT", key_limits.KeyLimits(prices, v.leases, v.key_budgets).run),
        Stage("router", "ROUTING", forward.run, required=True),
        Stage("charge", "POST_FLIGHT", charge.run, required=True),
        Stage("key_charge", "POST_FLIGHT", key_charge.run, required=True),
        Stage("records", "BACKGROUND", background.Records(s.records).run),
        Stage("audit", "BACKGROUND", background.Audit(s.audit).run, required=True),
        Stage("export", "BACKGROUND", background.Export(s.export).run),
        Stage("telemetry", "BACKGROUND", background.Telemetry(parts.metrics).run),
    ]
    control = v.control
    pipeline = Pipeline(stages, on_trace=background.Trace(s.tracer, v.latency).run, disabled=lambda: control.disabled)
    forward.settle = pipeline.finish
    return pipeline


@dataclass
class GatewayState:
    """Everything one replica holds; the routes get it through ``routes.common.Gateway``."""

    live: LiveConfig
    handles: Handles
    router: Router
    auth: Authenticator
    inference_guard: Guard
    access: ControlAccess
    admission: Admission
    metrics_client: Metrics
    metrics: GatewayMetrics
    metrics_text: MetricsText
    views: Views
    stores: Stores
    security: SecurityStages
    notices: Notices
    local: LocalServers
    forwarder: Forwarder
    pipeline: Pipeline
    handler: RequestHandler
    reload: Reload
    exporter: MetricsExporter | None
    clock: Callable[[], float] = time.time
    tasks: BackgroundTasks = field(default_factory=lambda: BackgroundTasks("llm_gateway"))
    client: httpx.AsyncClient | None = None  # control plane (registry probes); opened by ``lifecycle.start``
    listener: Listener | None = None

    @property
    def config(self) -> GatewayConfig:
        """The running configuration (reloaded sections included)."""
        return self.live.current

    @classmethod
    def from_ray(
        cls,
        config: GatewayConfig,
        *,
        replicas: int | None = None,
        handles: Handles | None = None,
        clock: Callable[[], float] = time.time,
        metrics: Metrics | None = None,
    ) -> GatewayState:
        """A replica of ``config``; ``replicas`` splits the admission limits (default ``LLM_GATEWAY_REPLICAS``)."""
        configure_logging(config.logging, config.log_output())
        if replicas is None:
            replicas = int(os.environ.get("LLM_GATEWAY_REPLICAS", "1") or 1)
        live, handles = LiveConfig(config), handles or Handles.from_ray(config)
        metrics_client = metrics or Metrics("llm_gateway")
        gauges = GatewayMetrics(metrics_client)
        prices = PriceTable(config.pricing)
        router = Router(config, prices)
        auth = Authenticator.from_config(config.server.auth)
        views = Views.of(config, handles, router)
        parts = Parts(
            router=router,
            inference_guard=views.keys.guard(auth.guard("inference")),
            admission=Admission(*config.admission_limits(replicas)),
            metrics=gauges,
            views=views,
            stores=Stores.of(config, gauges, clock),
            local=LocalServers(live, router),
        )
        security = SecurityStages(config, views.control, views.threats, gauges, views.events)
        forwarder = Forwarder(config, router, None, views.breakers, views.leases, clock=clock)
        forward = routing.Forward(
            live, forwarder, security, parts.stores.cache, views.breakers, parts.stores.tracer, views.keys
        )
        pipeline = build_pipeline(live, parts, security, forward, prices)
        notices = Notices(live, gauges, views.events, router, views.budget)
        views.breakers.on_event = notices.breaker_event
        views.breakers.on_snapshot = notices.circuit_gauges
        views.budget.on_state = notices.budget_state
        reload = Reload(live, router, forwarder, security, views.budget, handles.configure)
        views.control.on_config = reload.apply
        text = MetricsText(metrics_client, views.budget)
        exp = config.server.metrics
        return cls(
            live=live,
            handles=handles,
            router=router,
            auth=auth,
            inference_guard=parts.inference_guard,
            access=control_access(config, auth, handles.sessions),
            admission=parts.admission,
            metrics_client=metrics_client,
            metrics=gauges,
            metrics_text=text,
            views=views,
            stores=parts.stores,
            security=security,
            notices=notices,
            local=parts.local,
            forwarder=forwarder,
            pipeline=pipeline,
            handler=RequestHandler(pipeline, parts.stores.tracer, notices, parts.stores.error_tracker),
            reload=reload,
            exporter=MetricsExporter(text.render, exp.bind, exp.port) if exp.enabled else None,
            clock=clock,
        )

    def plugin_list(self) -> list[dict[str, Any]]:
        off = self.views.control.disabled
        return [
            {"name": s.name, "ring": s.ring, "enabled": s.required or s.name not in off, "required": s.required}
            for s in self.pipeline.stages
        ]
