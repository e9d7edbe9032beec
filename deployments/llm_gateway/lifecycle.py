"""A replica's background work, started and stopped by the app's lifespan (never from a request).

``start`` opens the clients (the aiohttp session of the data plane, the httpx client of
registry probes), applies the configuration to the shared actors, takes their first
snapshots and starts the loops; ``stop`` ends the loops and flushes what is batched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import httpx

from actors.llm_gateway import BudgetLedger, RegistryBoard, WebhookQueue
from deployments.llm_gateway.forwarder import upstream_session
from deployments.llm_gateway.notices import AUTH_FAILURE_WINDOW
from deployments.llm_gateway.state import GatewayState, registry_store
from deployments.llm_gateway.switches import LatencyFeed, ThreatView
from rayfleet import state as state_mod
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")


async def start(state: GatewayState) -> None:
    pool = state.config.connection_pool
    state.client = httpx.AsyncClient(
        limits=httpx.Limits(
            max_connections=pool.max_connections,
            max_keepalive_connections=pool.max_connections,
            keepalive_expiry=pool.keepalive_timeout,
        ),
        trust_env=False,
        follow_redirects=False,
    )
    state.forwarder.session = upstream_session(pool)
    state.views.budget.on_ledger_restart = lambda: _restore_budget_soon(state)
    await _configure_actors(state)
    try:
        await state.views.breakers.refresh()
    except Exception:
        log.warning("initial breaker snapshot failed", exc_info=True)
    try:
        await state_mod.call(state.handles.registry, RegistryBoard.configure, registry_store(state.config))
        await state.views.registry.refresh()
        await state.views.keys.refresh()
    except Exception as exc:
        log.warning("initial registry snapshot failed", extra={"error": type(exc).__name__})
    _start_loops(state)


async def _configure_actors(state: GatewayState) -> None:
    """Apply this config to the shared actors (they outlive redeploys), then any reloaded sections."""
    await state.handles.configure(state.config)
    try:
        await state.views.control.refresh()
    except Exception:
        log.warning("initial control snapshot failed", exc_info=True)
    webhooks = state.handles.webhooks
    if webhooks is not None:
        default_secret = state.config.webhooks.secret_env
        hooks = [
            {**ep.model_dump(), "secret_env": ep.secret_env or default_secret} for ep in state.config.webhooks.endpoints
        ]
        if not await state_mod.call(webhooks, WebhookQueue.configure, hooks):
            log.warning(
                "webhooks.enabled but no endpoint has both its URL and its signing secret set: nothing will be delivered"
            )


LEASE_FLUSH = 0.25  # batching bound of the rate-limit and budget leases' settlements
KEY_BUDGET_FLUSH = 0.5
CACHE_FLUSH = 0.2  # batching bound of the response cache's writes
TRAIL_FLUSH = 0.5  # audit trail and request export
EXPORT_ROTATE = 60.0  # how late after midnight UTC an idle replica closes (and compresses) the day's export
RECORDS_PURGE = 3600.0  # how often the record retention purge is considered (it runs once a day)


def _start_loops(state: GatewayState) -> None:
    """The replica's background work. Three kinds (README "Background work"):

    - follows: a long-poll per shared actor (``follow.py``), answered when the actor's state changes;
    - flushes: a batch is sent ``bound`` seconds after its producer woke its flush (``Wake``), never on
      an empty timer; a flush holding a lease calls itself again until the lease is given back;
    - timers, only where time itself is the trigger: cache eviction (``caching.eviction_interval``), the
      health prober's targets (a restarted prober has them within ``PUSH_INTERVAL``), the audit head
      export, the auth-failure window, the export's day rotation, the retention purges, and the
      webhook feed's tick (a restarted webhook queue resumes its deliveries).
    """
    tasks, v, s, config = state.tasks, state.views, state.stores, state.config
    tasks.start(v.breakers.run(), name="breaker-follow")
    tasks.start(v.registry.run(), name="registry-follow")
    tasks.start(v.keys.run(), name="virtual-keys-follow")
    tasks.start(v.control.follow(), name="control-follow")
    tasks.start(v.threats.follow(), name="threat-ledger-follow")
    tasks.start(v.budget.follow(), name="budget-follow")
    tasks.when(v.leases.wake, LEASE_FLUSH, v.leases.flush, name="lease-flush")
    tasks.when(v.budget.wake, LEASE_FLUSH, v.budget.flush, name="budget-flush")
    tasks.when(v.key_budgets.wake, KEY_BUDGET_FLUSH, v.key_budgets.flush, name="key-budget-flush")
    tasks.when(s.records.wake, s.records.flush_interval, s.records.flush_queued, name="records-flush")
    tasks.every(RECORDS_PURGE, s.records.purge, name="records-purge", first_delay=s.records.flush_interval)
    tasks.when(v.threats.wake, ThreatView.interval, v.threats.flush, name="threat-ledger-flush")
    tasks.when(v.latency.wake, LatencyFeed.interval, v.latency.flush, name="latency-flush")
    tasks.start(_restore_budget(state), name="budget-restore")
    if s.cache is not None:
        tasks.when(s.cache.wake, CACHE_FLUSH, s.cache.flush, name="cache-flush")
        tasks.every(float(config.caching.eviction_interval), s.cache.evict, name="cache-eviction")
    if config.discovery:
        tasks.start(state.local.run(), name="discovery")
    tasks.every(AUTH_FAILURE_WINDOW, state.notices.report_auth_failures, name="auth-failure-events")
    if state.exporter is not None:
        tasks.start(state.exporter.run(), name="metrics-exporter")
    if v.webhook_feed is not None:
        tasks.every(v.webhook_feed.interval, v.webhook_feed.flush, name="webhook-feed")
    if v.health is not None:
        tasks.every(v.health.interval, v.health.push, name="health-prober-feed", first_delay=0.0)
    if s.audit is not None:
        tasks.when(s.audit.wake, TRAIL_FLUSH, s.audit.flush, name="audit-flush")
        tasks.every(config.logging.audit_trail.head_export_interval, s.audit.export_head, name="audit-head-export")
        if config.gdpr.auto_purge:
            tasks.every(86400.0, lambda: _purge_audit(state), name="audit-purge", first_delay=1.0)
    if s.export is not None:
        tasks.start(s.export.recover(), name="export-recover")
        tasks.when(s.export.wake, TRAIL_FLUSH, s.export.flush, name="export-flush")
        tasks.every(EXPORT_ROTATE, s.export.flush, name="export-rotate")


def _restore_budget_soon(state: GatewayState) -> None:
    """The ledger's actor restarted (its epoch changed): restore today's spend from the records."""
    state.tasks.start(_restore_budget(state), name="budget-restore")


async def _restore_budget(state: GatewayState) -> None:
    try:
        spent = await state.stores.records.today_spend()
        await state_mod.call(state.handles.budget, BudgetLedger.restore, state.views.budget.day, spent)
    except Exception as exc:
        log.warning("could not restore today's spend from the store", extra={"error": type(exc).__name__})


async def _purge_audit(state: GatewayState) -> None:
    audit, days = state.stores.audit, state.config.gdpr.retention_days
    assert audit is not None
    removed = await audit.purge(days)
    if removed:
        log.info("audit records purged", extra={"purged": removed, "retention_days": days})


async def stop(state: GatewayState) -> None:
    await state.tasks.stop()
    s, v = state.stores, state.views
    try:
        await asyncio.to_thread(s.error_tracker.flush)
        await asyncio.to_thread(s.tracer.shutdown)
    except Exception:
        log.warning("tracing shutdown failed", exc_info=True)
    if v.webhook_feed is not None:
        try:
            await state.notices.report_auth_failures()
            await v.webhook_feed.flush()
        except Exception:
            log.warning("final webhook feed flush failed", exc_info=True)
    await _final("final audit flush failed", s.audit.close() if s.audit is not None else None)
    await _final("final export flush failed", s.export.close() if s.export is not None else None)
    await _final("final latency flush failed", v.latency.flush())
    await _final("final flush failed", v.budget.flush())
    await _final("final flush failed", v.key_budgets.flush())
    await _final("final flush failed", v.leases.flush())
    if s.cache is not None:
        await s.cache.close()
    await s.records.close()
    await state.metrics_client.close()
    if state.client is not None:
        await state.client.aclose()
    if state.forwarder.session is not None:
        await state.forwarder.session.close()


async def _final(failure: str, step: Coroutine[Any, Any, Any] | None) -> None:
    if step is None:
        return
    try:
        await step
    except Exception:
        log.warning(failure, exc_info=True)
