"""The gateway of one replica: its clients, background loops and the stages of each ring."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import httpx
from pydantic import ValidationError
from starlette.responses import JSONResponse, Response, StreamingResponse

from actors.llm_gateway import (
    BreakerBoard,
    BudgetLedger,
    ControlBoard,
    LatencyBoard,
    RateLimiter,
    RegistryBoard,
    ThreatLedger,
    WebhookQueue,
)
from deployments.llm_gateway.access import control_access
from deployments.llm_gateway.admission import Admission
from deployments.llm_gateway.audit import AuditTrail
from deployments.llm_gateway.auth import Authenticator
from deployments.llm_gateway.body import read_capped
from deployments.llm_gateway.cache import RedisCache, SQLiteCache, cache_key, replay_chunks
from deployments.llm_gateway.config import EndpointConfig, GatewayConfig
from deployments.llm_gateway.discovery import Found, discover
from deployments.llm_gateway.error_tracker import ErrorTracker
from deployments.llm_gateway.errors import GatewayError, error_response, json_object, sse_error_event
from deployments.llm_gateway.events import EventLog, WebhookFeed
from deployments.llm_gateway.export import RequestExport, writer_name
from deployments.llm_gateway.exporter import MetricsExporter
from deployments.llm_gateway.forwarder import Forwarder, UpstreamResult, stream_rest, upstream_session
from deployments.llm_gateway.links import StreamLinkFilter
from deployments.llm_gateway.logsetup import configure as configure_logging
from deployments.llm_gateway.pipeline import Context, Pipeline, Stage
from deployments.llm_gateway.pricing import PriceTable
from deployments.llm_gateway.providers.base import Usage, estimate_tokens, prompt_text
from deployments.llm_gateway.registry import RegistryClient
from deployments.llm_gateway.routing import KeyRing, Router, Target
from deployments.llm_gateway.security import SecurityStages
from deployments.llm_gateway.shared_state import BreakerClient, BudgetLeases, TokenLeases
from deployments.llm_gateway.sse import DONE
from deployments.llm_gateway.storage import Record, RecordWriter, build_backend
from deployments.llm_gateway.switches import ControlView, LatencyFeed, ThreatView
from deployments.llm_gateway.telemetry import GatewayMetrics
from deployments.llm_gateway.tracing import RequestTracer
from deployments.llm_gateway.validation import check_inference
from rayfleet import state as state_mod
from rayfleet.http import client_ip
from rayfleet.logs import get_logger
from rayfleet.metrics import Metrics
from rayfleet.tasks import BackgroundTasks

log = get_logger("llm_gateway")

KINDS = {"/v1/chat/completions": "chat", "/v1/completions": "completions", "/v1/embeddings": "embeddings"}
ACTOR_PREFIX = "llm_gateway"
# Sections ``POST /admin/config/reload`` may change at run time; any other needs a redeploy.
RELOADABLE = frozenset({"security", "rate_limiting", "rotation", "circuit_breaker", "budget"})
AUTH_FAILURE_WINDOW = 60.0


class SettledStream(StreamingResponse):
    """An SSE response whose settlement runs even if its body never starts.

    A client that hangs up before the first chunk is sent makes Starlette drop the body
    iterator unstarted; an async generator that never started never runs its ``finally``,
    so the upstream connection, the budget reservation and the request's records would
    never be settled. ``on_unstarted`` does that settlement then.
    """

    def __init__(
        self,
        content: AsyncIterator[bytes],
        started: Callable[[], bool],
        on_unstarted: Callable[[], None],
        headers: dict[str, str],
    ) -> None:
        super().__init__(content, media_type="text/event-stream", headers=headers)
        self._started = started
        self._on_unstarted = on_unstarted

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if not self._started():
                self._on_unstarted()


class Gateway:
    """Everything one replica holds; ``create_app`` exposes it over HTTP."""

    def __init__(self, config: GatewayConfig, state: dict[str, Any] | None = None, replicas: int = 1) -> None:
        configure_logging(config.logging, config.log_output())
        self.config = config
        self.base_config = config  # the file's; reloaded sections apply on top of it
        self.reloaded: dict[str, Any] = {}
        state = state or {}
        self.clock: Callable[[], float] = state.get("clock") or time.time
        self.prices = PriceTable(config.pricing)
        self.router = Router(config, self.prices)
        self.auth = Authenticator.from_config(config.server.auth)
        self.inference_guard = self.auth.guard("inference")
        self.access = control_access(config, self.auth, state.get("sessions"))
        self.admin_guard = self.access.guard
        cb = config.circuit_breaker
        self.breaker_handle = state.get("breakers") or state_mod.actor(
            BreakerBoard, f"{ACTOR_PREFIX}.breakers", cb.failure_threshold, cb.recovery_timeout, cb.probe_timeout
        )
        self.budget_handle = state.get("budget") or state_mod.actor(
            BudgetLedger, f"{ACTOR_PREFIX}.budget", config.budget.daily_limit, config.budget.soft_limit
        )
        self.limiter_handle = state.get("ratelimit") or state_mod.actor(RateLimiter, f"{ACTOR_PREFIX}.ratelimit")
        st = config.server.storage
        self.registry_store = {
            "type": st.type,
            "sqlite_path": str(config.data_path(st.path)),
            "dsn_env": st.dsn_env,
            "dsn": st.dsn,
            "secret_env": config.registry.secret_env,
            "key_file": str(config.data_path(config.registry.key_file)),
        }
        self.registry_handle = state.get("registry") or state_mod.actor(
            RegistryBoard, f"{ACTOR_PREFIX}.registry", self.registry_store
        )
        self.registry = RegistryClient(self.registry_handle, self.router, config.registry.refresh_interval)
        self.metrics_client = state.get("metrics") or Metrics("llm_gateway")
        self.metrics = GatewayMetrics(self.metrics_client)
        self.breakers = BreakerClient(self.breaker_handle, on_event=self._breaker_event)
        self.breakers.on_snapshot = self._circuit_gauges
        self.leases = TokenLeases(self.limiter_handle)
        self.budget = BudgetLeases(self.budget_handle, config.budget.daily_limit)
        self.budget.on_state = self._budget_state
        self.budget.on_ledger_restart = self._on_ledger_restart
        self._budget_alerted_day = ""
        self.auth_failures: dict[str, int] = {}
        in_flight, queued = config.admission_limits(replicas)
        self.admission = Admission(in_flight, queued)
        self._shared_views(config, state)
        self._stores(config)
        self.client: httpx.AsyncClient | None = None  # control plane: registry probes
        self.session: aiohttp.ClientSession | None = None  # data plane: forwarding to the upstreams
        self.forwarder: Forwarder | None = None
        self.discovered: list[Found] = []
        self.discovery_done = not config.discovery
        self.local_target = self._local_target()
        self.tasks = BackgroundTasks("llm_gateway")
        self._started = False
        self._start_lock: asyncio.Lock | None = None
        self.pipeline = self._pipeline()

    def _stores(self, config: GatewayConfig) -> None:
        """The response cache, the spend records, the audit trail and the metrics exporter of this replica."""
        self.cache: SQLiteCache | RedisCache | None = None
        self._last_evict = time.monotonic()
        if config.caching.enabled:
            c = config.caching
            if c.redis_url:
                self.cache = RedisCache(c.redis_url, c.ttl, c.socket_timeout(), c.connect_timeout())
            else:
                self.cache = SQLiteCache(config.data_path(c.db_path), c.ttl, c.max_entries)
        st = config.server.storage
        self.records = RecordWriter(
            build_backend(st.type, st.dsn_env, st.dsn, config.data_path(st.path)),
            st.batch_size,
            st.flush_interval,
            retention_days=config.gdpr.retention_days if config.gdpr.auto_purge else None,
        )
        exp = config.server.metrics
        self.exporter = MetricsExporter(self.render_metrics, exp.bind, exp.port) if exp.enabled else None
        self.tracer = RequestTracer(config.observability.tracing)
        obs = config.observability
        self.error_tracker = ErrorTracker(obs.error_tracker.dsn_env, obs.tracing.service_name)
        trail = config.logging.audit_trail
        self.audit = AuditTrail(config.data_path("audit.db"), trail.mask_pii) if trail.enabled else None
        self.export: RequestExport | None = None
        if obs.export.enabled:
            self.export = RequestExport(
                config.export_dir(),
                scrub_pii=obs.export.scrub_pii,
                compress_on_rotate=obs.export.compress_on_rotate,
                writer=writer_name(),
                clock=self.clock,
                on_drop=self.metrics.export_dropped.inc,
            )

    def _pipeline(self) -> Pipeline:
        """The rings' plugins, in order (``/admin/plugins`` lists them)."""
        sec = self.security
        return Pipeline(
            [
                Stage("panic", "INGRESS", sec.panic, required=True),
                Stage("auth", "INGRESS", self._stage_auth, required=True),
                Stage("threat_ledger", "INGRESS", sec.threat_ledger),
                Stage("client_rate_limit", "INGRESS", self._stage_rate_limit),
                Stage("admission", "INGRESS", self._stage_admission),
                Stage("request_limits", "PRE_FLIGHT", self._stage_parse, required=True),
                Stage("injection_scan", "PRE_FLIGHT", sec.injection_scan),
                Stage("link_sanitizer", "PRE_FLIGHT", sec.link_sanitizer),
                Stage("model_resolution", "PRE_FLIGHT", self._stage_resolve, required=True),
                Stage("cache_check", "PRE_FLIGHT", self._stage_cache_check),
                Stage("budget_guard", "PRE_FLIGHT", self._stage_budget),
                Stage("router", "ROUTING", self._stage_forward, required=True),
                Stage("charge", "POST_FLIGHT", self._stage_charge, required=True),
                Stage("records", "BACKGROUND", self._stage_record),
                Stage("audit", "BACKGROUND", self._stage_audit, required=True),
                Stage("export", "BACKGROUND", self._stage_export),
                Stage("telemetry", "BACKGROUND", self._stage_metrics),
            ],
            on_trace=self._trace,
            disabled=lambda: self.control.disabled,
        )

    def _shared_views(self, config: GatewayConfig, state: dict[str, Any]) -> None:
        """The cluster-wide switches, threat ledger and latency board, with their replica-side views."""
        tl = config.security.threat_ledger
        self.control_handle = state.get("control") or state_mod.actor(ControlBoard, f"{ACTOR_PREFIX}.control")
        self.threat_handle = state.get("threats") or state_mod.actor(
            ThreatLedger, f"{ACTOR_PREFIX}.threats", tl.threshold, tl.window_seconds, tl.min_events, tl.max_actors
        )
        self.latency_handle = state.get("latency") or state_mod.actor(LatencyBoard, f"{ACTOR_PREFIX}.latency")
        self.control = ControlView(self.control_handle)
        self.control.on_config = self._apply_sections
        self.threats = ThreatView(self.threat_handle)
        self.latency = LatencyFeed(self.latency_handle)
        self.events = EventLog()
        self.webhook_handle: Any = None
        self.webhook_feed: WebhookFeed | None = None
        if config.webhooks.enabled:
            self.webhook_handle = state.get("webhooks") or state_mod.actor(WebhookQueue, f"{ACTOR_PREFIX}.webhooks")
            self.webhook_feed = WebhookFeed(self.webhook_handle)
            self.events.listeners.append(self.webhook_feed)
        self.security = SecurityStages(config, self.control, self.threats, self.metrics, self.events)

    def validate_reload(self, body: dict[str, Any]) -> dict[str, Any]:
        """The sections a reload would apply (merged into the running ones), or the error refusing it whole."""
        other = sorted(set(body) - RELOADABLE)
        if other:
            raise GatewayError(
                409,
                f"sections {other} cannot be reloaded (redeploy to change them); reloadable: {sorted(RELOADABLE)}",
                code="not_reloadable",
            )
        if not all(isinstance(v, dict) for v in body.values()):
            raise GatewayError(422, "each section must be an object", code="invalid_config")
        current = self.config.model_dump(mode="json")
        sections = {**self.reloaded, **{name: _merged(current[name], value) for name, value in body.items()}}
        self._reloaded(sections)
        return sections

    def _reloaded(self, sections: dict[str, Any]) -> GatewayConfig:
        try:
            # the file's keys as written (a default dumped back would count as set, e.g. a refused section)
            written = self.base_config.model_dump(mode="json", exclude_unset=True)
            return GatewayConfig.model_validate({**written, **sections})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "config"
            raise GatewayError(422, f"{where}: {first.get('msg', 'invalid value')}", code="invalid_config") from None

    async def _apply_sections(self, sections: dict[str, Any]) -> None:
        """Apply reloaded sections on this replica (every replica does, from the control actor)."""
        config = self._reloaded(sections)
        self.config, self.reloaded = config, sections
        self.router.config = config
        if self.forwarder is not None:
            self.forwarder.config = config
        self.security.reconfigure(config)
        self.budget.daily_limit = config.budget.daily_limit
        self.budget.chunk = max(config.budget.daily_limit / 100.0, 0.0)
        await self._configure_shared(config)
        log.info("configuration sections reloaded", extra={"sections": sorted(sections)})

    def plugin_list(self) -> list[dict[str, Any]]:
        off = self.control.disabled
        return [
            {"name": s.name, "ring": s.ring, "enabled": s.required or s.name not in off, "required": s.required}
            for s in self.pipeline.stages
        ]

    # -- lifecycle -----------------------------------------------------------
    async def start(self) -> None:
        if self._started:
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._started:
                return
            pool = self.config.connection_pool
            self.client = httpx.AsyncClient(
                limits=httpx.Limits(
                    max_connections=pool.max_connections,
                    max_keepalive_connections=pool.max_connections,
                    keepalive_expiry=pool.keepalive_timeout,
                ),
                trust_env=False,
                follow_redirects=False,
            )
            self.session = upstream_session(pool)
            self.forwarder = Forwarder(
                self.config, self.router, self.session, self.breakers, self.leases, clock=self.clock
            )
            await self._configure_actors()
            try:
                await self.breakers.refresh()
            except Exception:
                log.warning("initial breaker snapshot failed", exc_info=True)
            try:
                await self.registry_handle.configure.remote(self.registry_store)
                await self.registry.refresh()
            except Exception as exc:
                log.warning("initial registry snapshot failed", extra={"error": type(exc).__name__})
            self._start_loops()
            self._started = True

    async def _configure_shared(self, config: GatewayConfig) -> None:
        cb, tl = config.circuit_breaker, config.security.threat_ledger
        await self.breaker_handle.configure.remote(cb.failure_threshold, cb.recovery_timeout, cb.probe_timeout)
        await self.budget_handle.configure.remote(config.budget.daily_limit, config.budget.soft_limit)
        await self.threat_handle.configure.remote(tl.threshold, tl.window_seconds, tl.min_events, tl.max_actors)

    async def _configure_actors(self) -> None:
        """Apply this config to the shared actors (they outlive redeploys), then any reloaded sections."""
        await self._configure_shared(self.config)
        try:
            await self.control.refresh()
        except Exception:
            log.warning("initial control snapshot failed", exc_info=True)
        if self.webhook_handle is not None:
            hooks = [ep.model_dump() for ep in self.config.webhooks.endpoints]
            if not await self.webhook_handle.configure.remote(hooks):
                log.warning("webhooks.enabled but no endpoint has its URL variable set: nothing will be delivered")

    def _start_loops(self) -> None:
        tasks = self.tasks
        tasks.start(self.breakers.run(), name="breaker-snapshot")
        tasks.start(self.registry.run(), name="registry-refresh")
        tasks.every(0.25, self.leases.flush, name="lease-flush")
        tasks.every(0.25, self.budget.flush, name="budget-flush")
        tasks.start(self.records.run(), name="records-flush")
        tasks.every(self.control.interval, self.control.refresh, name="control-refresh")
        tasks.every(self.threats.interval, self.threats.flush, name="threat-ledger-flush")
        tasks.every(self.latency.interval, self.latency.flush, name="latency-flush")
        tasks.start(self._restore_budget(), name="budget-restore")
        if self.cache is not None:
            tasks.every(0.2, self._cache_maintenance, name="cache-maintenance")
        if self.config.discovery:
            tasks.start(self._discover(), name="discovery")
        tasks.every(AUTH_FAILURE_WINDOW, self._report_auth_failures, name="auth-failure-events")
        if self.exporter is not None:
            tasks.start(self.exporter.run(), name="metrics-exporter")
        if self.webhook_feed is not None:
            tasks.every(self.webhook_feed.interval, self.webhook_feed.flush, name="webhook-feed")
        if self.audit is not None:
            tasks.every(0.5, self.audit.flush, name="audit-flush")
            if self.config.gdpr.auto_purge:
                tasks.every(86400.0, self._purge_audit, name="audit-purge", first_delay=1.0)
        if self.export is not None:
            tasks.start(self.export.recover(), name="export-recover")
            tasks.every(0.5, self.export.flush, name="export-flush")

    async def render_metrics(self) -> bytes:
        """The cluster-wide Prometheus text (``/metrics`` and the standalone exporter)."""
        await self.budget.flush()
        return await self.metrics_client.render()

    def _breaker_event(self, event: dict[str, Any]) -> None:
        """``circuit_open``/``endpoint_recovered`` from the breaker actor; the id is the actor's, so every
        replica reporting it yields one webhook delivery."""
        self.events.emit(event["event"], event_id=f"evt_breaker_{event['seq']}", endpoint=event["endpoint"])

    def _budget_state(self, state: dict[str, Any]) -> None:
        spent = float(state.get("spent", 0.0))
        self.metrics.budget.set(spent)
        soft, day = self.config.budget.soft_limit, str(state.get("day", self.budget.day))
        if soft > 0 and spent >= soft and self._budget_alerted_day != day:
            self._budget_alerted_day = day
            self.events.emit(
                "budget_threshold",
                event_id=f"evt_budget_threshold_{day}",
                day=day,
                spent_usd=round(spent, 4),
                soft_limit_usd=soft,
                daily_limit_usd=self.config.budget.daily_limit,
            )

    def note_auth_failure(self, reason: str) -> None:
        self.metrics.auth_failures.labels(reason=reason).inc()
        if len(self.auth_failures) < 100 or reason in self.auth_failures:
            self.auth_failures[reason] = self.auth_failures.get(reason, 0) + 1

    async def _report_auth_failures(self) -> None:
        """``auth_failure`` is aggregated: one event per window with the counts by reason."""
        counts, self.auth_failures = self.auth_failures, {}
        if counts:
            self.events.emit(
                "auth_failure", window_seconds=AUTH_FAILURE_WINDOW, failures=sum(counts.values()), by_reason=counts
            )

    async def _purge_audit(self) -> None:
        assert self.audit is not None
        removed = await self.audit.purge(self.config.gdpr.retention_days)
        if removed:
            log.info(
                "audit records purged", extra={"purged": removed, "retention_days": self.config.gdpr.retention_days}
            )

    async def close(self) -> None:
        await self.tasks.stop()
        try:
            await asyncio.to_thread(self.error_tracker.flush)
            await asyncio.to_thread(self.tracer.shutdown)
        except Exception:
            log.warning("tracing shutdown failed", exc_info=True)
        if self.webhook_feed is not None:
            try:
                await self._report_auth_failures()
                await self.webhook_feed.flush()
            except Exception:
                log.warning("final webhook feed flush failed", exc_info=True)
        if self.audit is not None:
            try:
                await self.audit.close()
            except Exception:
                log.warning("final audit flush failed", exc_info=True)
        if self.export is not None:
            try:
                await self.export.close()
            except Exception:
                log.warning("final export flush failed", exc_info=True)
        try:
            await self.latency.flush()
        except Exception:
            log.warning("final latency flush failed", exc_info=True)
        for flush in (self.budget.flush, self.leases.flush):
            try:
                await flush()
            except Exception:
                log.warning("final flush failed", exc_info=True)
        if self.cache is not None:
            await self.cache.close()
        await self.records.close()
        await self.metrics_client.close()
        if self.client is not None:
            await self.client.aclose()
        if self.session is not None:
            await self.session.close()
        self._started = False

    async def _cache_maintenance(self) -> None:
        assert self.cache is not None
        await self.cache.flush()
        if time.monotonic() - self._last_evict >= self.config.caching.eviction_interval:
            self._last_evict = time.monotonic()
            await self.cache.evict()

    def _on_ledger_restart(self) -> None:
        self.tasks.start(self._restore_budget(), name="budget-restore")

    async def _restore_budget(self) -> None:
        try:
            spent = await self.records.today_spend()
            await self.budget_handle.restore.remote(self.budget.day, spent)
        except Exception as exc:
            log.warning("could not restore today's spend from the store", extra={"error": type(exc).__name__})

    async def _discover(self) -> None:
        try:
            reg = self.config.registry
            found = await discover(reg.scan_host, reg.scan_timeout, self.scan_targets())
        finally:
            self.discovery_done = True
        known = {e.base_url for e in self.router.endpoints.values()}
        for server in found:
            if server.base_url in known or server.name in self.router.endpoints:
                continue
            cfg = EndpointConfig.model_validate(
                {"provider": server.provider, "base_url": server.base_url, "models": server.models}
            )
            self.router.endpoints[server.name] = cfg
            self.router.keyrings[server.name] = KeyRing([])
            self.discovered.append(server)
            if self.local_target is None:
                self.local_target = self._local_target()
        if self.discovered:
            log.info(
                "local model servers found",
                extra={
                    "servers": [{"name": s.name, "base_url": s.base_url, "models": s.models} for s in self.discovered]
                },
            )
        else:
            log.warning(
                "no local model server found on the well-known ports (Ollama 11434, LM Studio 1234, "
                "llama.cpp 8080, vLLM 8001); configure an upstream in config/llm_gateway.yaml"
            )

    def scan_targets(self) -> tuple[tuple[str, int, str], ...]:
        return tuple((t.provider, t.port, t.models_path()) for t in self.config.registry.scan_ports)

    def _local_target(self) -> Target | None:
        lm = self.config.server.local_model
        if not lm.enabled:
            return None
        name = lm.endpoint or next((n for n, e in self.router.endpoints.items() if e.is_local), "")
        cfg = self.router.endpoints.get(name)
        if cfg is None:
            return None
        model = lm.model or (cfg.models[0] if cfg.models else "")
        return Target(name, cfg, model) if model else None

    def _circuit_gauges(self, states: dict[str, dict[str, Any]]) -> None:
        for name in set(self.router.endpoints) | set(states):
            view = states.get(name) or {}
            self.metrics.circuit.labels(endpoint=name).set(0.0 if view.get("state", "CLOSED") == "CLOSED" else 1.0)

    # -- INGRESS -------------------------------------------------------------
    async def _stage_auth(self, ctx: Context) -> None:
        ctx.tenant = await self.inference_guard(ctx.request)

    async def _stage_rate_limit(self, ctx: Context) -> None:
        rl = self.config.rate_limiting
        if not rl.enabled or rl.requests_per_minute <= 0:
            return
        ok, retry = await self.leases.take(f"client:{ctx.tenant}", rl.requests_per_minute, 60.0, 1.0)
        if not ok:
            raise GatewayError(
                429,
                f"Rate limit of {rl.requests_per_minute} requests per minute exceeded",
                code="rate_limit_exceeded",
                headers={"Retry-After": str(max(1, math.ceil(retry)))},
                error_class="client_rate_limit",
            )

    async def _stage_admission(self, ctx: Context) -> None:
        if not await self.admission.acquire():
            self.metrics.load_shed.inc()
            raise GatewayError(
                503,
                "Server is at capacity, retry later",
                code="overloaded",
                headers={"Retry-After": str(self.config.admission.retry_after_s)},
                error_class="load_shed",
            )
        ctx.cleanups.append(self.admission.release)

    # -- PRE_FLIGHT ----------------------------------------------------------
    async def _stage_parse(self, ctx: Context) -> None:
        sec = self.config.security
        raw = await read_capped(ctx.request, sec.max_payload_size_kb * 1024 if sec.enabled else 0)
        body = json_object(raw, sec.max_nesting_depth if sec.enabled else 0)
        model, stream = check_inference(ctx.kind, body, sec.max_messages if sec.enabled else None)
        options = body.get("stream_options")
        ctx.raw_body, ctx.body, ctx.stream = raw, body, stream
        ctx.client_wants_usage = bool(options.get("include_usage")) if isinstance(options, dict) else False
        ctx.requested_model = model

    async def _stage_resolve(self, ctx: Context) -> None:
        ctx.model, ctx.targets = self.router.plan(ctx.requested_model)
        ctx.prompt_estimate = estimate_tokens(prompt_text(ctx.body))
        if ctx.kind != "embeddings":
            max_tokens = ctx.body.get("max_tokens") or ctx.body.get("max_completion_tokens")
            per_choice = (
                int(max_tokens)
                if isinstance(max_tokens, int) and max_tokens > 0
                else self.config.budget.default_output_tokens
            )
            ctx.output_estimate = per_choice * max(1, int(ctx.body.get("n") or 1))

    async def _stage_cache_check(self, ctx: Context) -> None:
        if self.cache is None:
            return
        if "no-cache" in ctx.request.headers.get("cache-control", "").lower():
            ctx.cache_status = "BYPASS"
            return
        ctx.cache_key = cache_key(ctx.tenant, ctx.kind, ctx.model, ctx.body)
        hit = await self.cache.get(ctx.cache_key)
        if hit is None:
            ctx.cache_status = "MISS"
            return
        ctx.cache_status = "HIT"
        ctx.status = 200
        headers = {"X-Cache": "HIT", **self._overhead(ctx, 0.0)}
        if ctx.stream:
            chunks = replay_chunks(ctx.kind, hit, ctx.client_wants_usage)
            ctx.response = StreamingResponse(_iterate(chunks), media_type="text/event-stream", headers=headers)
        else:
            ctx.response = JSONResponse(hit, headers=headers)

    async def _stage_budget(self, ctx: Context) -> None:
        budget = self.config.budget
        worst = 0.0
        for target in ctx.targets:
            pin, pout = self.prices.price(target.model, target.config)
            worst = max(worst, (ctx.prompt_estimate * pin + ctx.output_estimate * pout) / 1_000_000)
        if worst <= 0:
            return
        local = self.local_target if budget.fallback_to_local_on_limit else None
        threshold = self.config.server.local_model.fallback_threshold
        if local is not None and self.budget.spent_fraction() >= 1.0 - threshold:
            self._use_local(ctx, local)
            return
        if await self.budget.reserve(worst):
            ctx.reserved = worst
            return
        if local is not None:
            self._use_local(ctx, local)
            return
        raise GatewayError(
            402, f"Daily budget of ${budget.daily_limit:.2f} is exhausted", code="budget_exceeded", error_class="budget"
        )

    def _use_local(self, ctx: Context, local: Target) -> None:
        ctx.targets = [local]
        ctx.model = local.model
        ctx.fallback = "local-model"
        ctx.headers["X-Rayfleet-Budget-Fallback"] = f"local-model; endpoint={local.endpoint}; model={local.model}"
        if ctx.cache_key is not None:
            ctx.cache_key = cache_key(ctx.tenant, ctx.kind, ctx.model, ctx.body)

    # -- ROUTING -------------------------------------------------------------
    async def _stage_forward(self, ctx: Context) -> None:
        assert self.forwarder is not None
        est = ctx.prompt_estimate + ctx.output_estimate
        trace: dict[str, str] = {}
        if self.tracer.active:
            self.tracer.inject(ctx.request.scope, trace)
        result = await self.forwarder.forward(
            ctx.kind, ctx.body, ctx.targets, ctx.stream, ctx.client_wants_usage, est, trace
        )
        ctx.result = result
        ctx.endpoint = result.attempt.target.endpoint
        ctx.model = result.attempt.target.model
        ctx.upstream_ms = result.upstream_ms
        ctx.status = 200
        headers = {"X-LLM-Endpoint": ctx.endpoint, "X-Cache": ctx.cache_status, **ctx.headers}
        if not ctx.stream:
            ctx.usage = result.usage
            ctx.cacheable_body = result.body
            raw = result.raw
            if self.security.links.active and result.body is not None:
                replaced = self.security.links.clean_response(result.body)
                ctx.links_replaced += replaced
                raw = raw if not replaced else None  # re-encoded only when a link was replaced
            await self._store_cache(ctx)  # before the client has the answer
            headers.update(self._overhead(ctx, result.upstream_ms))
            if raw is not None:
                ctx.response = Response(raw, media_type="application/json", headers=headers)
            else:
                ctx.response = JSONResponse(result.body, headers=headers)
            return
        ctx.ttft = result.first_byte_at - ctx.started
        headers.update(self._overhead(ctx, result.upstream_ms, at=result.first_byte_at))
        headers["Cache-Control"] = "no-cache"
        body = self._stream(ctx, result)
        ctx.response = SettledStream(
            body, lambda: ctx.stream_started, lambda: self._unstarted_stream(ctx, result), headers=headers
        )

    def _unstarted_stream(self, ctx: Context, result: UpstreamResult) -> None:
        """The client left before the first chunk was sent: settle as ``_stream``'s ``finally`` would."""
        ctx.stream_failed = True
        ctx.error_class = "client_disconnected"
        if ctx.usage is None and result.translator is not None:
            ctx.usage = result.translator.final_usage(ctx.prompt_estimate)
        asyncio.get_running_loop().create_task(self._end_stream(ctx, result))

    async def _stream(self, ctx: Context, result: UpstreamResult) -> AsyncIterator[bytes]:
        translator = result.translator
        assert translator is not None and result.handle is not None and result.response is not None
        links = StreamLinkFilter(self.security.links)
        ctx.stream_started = True
        try:
            for chunk in result.first:
                yield links.feed(chunk)
            async for chunk in stream_rest(result):
                yield links.feed(chunk)
            tail = links.flush()
            if tail:
                yield tail
            ctx.usage = translator.final_usage(ctx.prompt_estimate)
            ctx.cacheable_body = translator.reassembler.build(ctx.usage)
            if links.active:
                self.security.links.clean_response(ctx.cacheable_body)
            await self._store_cache(ctx)  # before the client reads the end of the stream
            yield DONE
        except Exception as exc:
            ctx.stream_failed = True
            ctx.cacheable_body = None
            ctx.error_class = "stream_" + type(exc).__name__
            log.warning(
                "upstream stream failed after the first byte",
                extra={"endpoint": ctx.endpoint, "error": type(exc).__name__, "request_id": ctx.request_id},
            )
            asyncio.get_running_loop().create_task(self.breakers.report(ctx.endpoint, False))
            reason = type(exc).__name__
            total = self.config.server.total_timeout
            if isinstance(exc, TimeoutError):
                reason = "timed out waiting for the next event"
                if total is not None and not isinstance(exc, aiohttp.ServerTimeoutError):
                    reason = f"server.total_timeout ({total:g} s) reached"
            yield sse_error_event(f"upstream stream from {ctx.endpoint} failed: {reason}")
        finally:
            ctx.links_replaced += links.replaced
            if ctx.usage is None:
                ctx.usage = translator.final_usage(ctx.prompt_estimate)
            asyncio.get_running_loop().create_task(self._end_stream(ctx, result))

    async def _end_stream(self, ctx: Context, result: UpstreamResult) -> None:
        try:
            if result.response is not None:
                result.response.release()
        except Exception:
            log.warning("closing upstream stream failed", exc_info=True)
        finally:
            if result.handle is not None:
                result.handle.release()
            await self.pipeline.finish(ctx)

    def _overhead(self, ctx: Context, upstream_ms: float, at: float | None = None) -> dict[str, str]:
        total = ((at or time.perf_counter()) - ctx.started) * 1000
        return {"x-rayfleet-overhead-ms": f"{max(0.0, total - upstream_ms):.2f}"}

    # -- POST_FLIGHT ---------------------------------------------------------
    async def _stage_charge(self, ctx: Context) -> None:
        usage: Usage | None = ctx.usage
        cost = 0.0
        if usage is None and ctx.result is not None:
            usage = Usage(ctx.prompt_estimate, 0, estimated=True)
        if usage is not None and ctx.result is not None:
            target = ctx.result.attempt.target
            cost = self.prices.cost(target.model, target.config, usage.prompt_tokens, usage.completion_tokens)
            ctx.cost = cost
            self.metrics.tokens.labels(endpoint=ctx.endpoint, role="prompt").inc(usage.prompt_tokens)
            self.metrics.tokens.labels(endpoint=ctx.endpoint, role="completion").inc(usage.completion_tokens)
            self.metrics.cost.labels(endpoint=ctx.endpoint, model=target.model).inc(cost)
            assert self.forwarder is not None
            self.forwarder.charge_tokens(target, ctx.prompt_estimate + ctx.output_estimate, usage.total)
        if ctx.reserved or cost:
            self.budget.settle(ctx.reserved, cost)
            ctx.reserved = 0.0

    async def _store_cache(self, ctx: Context) -> None:
        """Store a complete answer of a cache miss (the ``cache_check`` plugin decides whether there is one)."""
        if self.cache is None or ctx.cache_key is None or ctx.cache_status != "MISS" or ctx.cacheable_body is None:
            return
        try:
            await self.cache.put(ctx.cache_key, ctx.model, ctx.cacheable_body)
        except Exception:
            log.warning("cache store failed", exc_info=True)

    # -- BACKGROUND ----------------------------------------------------------
    async def _stage_record(self, ctx: Context) -> None:
        usage: Usage | None = ctx.usage
        self.records.add(
            Record(
                ts=ctx.wall,
                request_id=ctx.request_id,
                tenant=ctx.tenant,
                route=ctx.route,
                model=ctx.model,
                endpoint=ctx.endpoint,
                status=ctx.status,
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                cost_usd=ctx.cost,
                latency_ms=round((time.perf_counter() - ctx.started) * 1000, 3),
                ttft_ms=round(ctx.ttft * 1000, 3) if ctx.ttft is not None else None,
                cache=ctx.cache_status,
                stream=ctx.stream,
                fallback=ctx.fallback,
            )
        )

    def _outcome(self, ctx: Context) -> dict[str, Any]:
        """What the audit trail and the export keep of a request (never its text or its key)."""
        usage: Usage | None = ctx.usage
        return {
            "request_id": ctx.request_id,
            "route": ctx.route,
            "model": ctx.model or ctx.requested_model,
            "endpoint": ctx.endpoint,
            "status": ctx.status,
            "prompt_tokens": usage.prompt_tokens if usage else 0,
            "completion_tokens": usage.completion_tokens if usage else 0,
            "cost_usd": round(ctx.cost, 8),
            "stream": ctx.stream,
            "security": {
                "injection_score": ctx.injection_score,
                "links_replaced": ctx.links_replaced,
                "refusal": ctx.error_class if ctx.status >= 400 else None,
            },
            "cache": ctx.cache_status,
            "fallback": ctx.fallback,
        }

    async def _stage_audit(self, ctx: Context) -> None:
        if self.audit is None:
            return
        self.audit.add(ctx.wall, {"tenant": ctx.tenant, "client_ip": client_ip(ctx.request), **self._outcome(ctx)})

    async def _stage_export(self, ctx: Context) -> None:
        if self.export is None:
            return
        self.export.add(
            ctx.wall,
            {
                "key_fingerprint": ctx.tenant,
                **self._outcome(ctx),
                "latency_ms": round((time.perf_counter() - ctx.started) * 1000, 3),
                "ttft_ms": round(ctx.ttft * 1000, 3) if ctx.ttft is not None else None,
            },
        )

    async def _stage_metrics(self, ctx: Context) -> None:
        m = self.metrics
        m.requests.labels(method=ctx.request.method, endpoint=ctx.route, status=str(ctx.status)).inc()
        m.latency.observe(time.perf_counter() - ctx.started)
        if ctx.ttft is not None:
            m.ttft.observe(ctx.ttft)
        if ctx.error_class:
            m.errors.labels(error_class=ctx.error_class).inc()

    def _trace(self, ctx: Context) -> None:
        total_ms = round((time.perf_counter() - ctx.started) * 1000, 3)
        try:
            self.tracer.record(ctx)
        except Exception:
            log.warning("tracing a request failed", exc_info=True)
        self.latency.add(
            {
                "req_id": ctx.request_id,
                "timestamp": ctx.wall,
                "rings": ctx.rings,
                "total_ms": total_ms,
                "upstream_ms": round(ctx.upstream_ms, 3),
                "ttft_ms": round(ctx.ttft * 1000, 3) if ctx.ttft is not None else None,
            }
        )

    # -- entry point ---------------------------------------------------------
    async def handle(self, ctx: Context) -> Response:
        await self.start()
        if self.tracer.active:
            self.tracer.claim(ctx)  # the pipeline ends the request's span, with its rings
        try:
            await self.pipeline.run(ctx)
        except GatewayError as exc:
            ctx.status, ctx.error_class = exc.status, exc.error_class
            if exc.status == 401 or exc.code == "wrong_key_scope":
                self.note_auth_failure(exc.error_class)
            ctx.response = error_response(exc, ctx.headers)
        except Exception as exc:
            log.exception("unexpected error in the request path", extra={"request_id": ctx.request_id})
            self.error_tracker.capture(exc, {"request_id": ctx.request_id, "route": ctx.route, "model": ctx.model})
            ctx.status, ctx.error_class = 500, "internal"
            ctx.response = error_response(GatewayError(500, "Internal error"))
        response = ctx.response
        assert response is not None
        if isinstance(response, StreamingResponse) and ctx.cache_status != "HIT":
            return response  # POST_FLIGHT and BACKGROUND run when the stream ends
        await self.pipeline.finish(ctx)
        return response


def _merged(base: Any, change: Any) -> Any:
    """``change`` deep-merged into ``base`` (objects merge, anything else replaces)."""
    if isinstance(base, dict) and isinstance(change, dict):
        return {**base, **{k: _merged(base.get(k), v) for k, v in change.items()}}
    return change


async def _iterate(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk
