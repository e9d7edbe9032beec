"""The security pipeline's stages (``security.*``): panic switch, threat ledger, injection scan, links.

- ``panic`` (INGRESS, first): while the cluster-wide panic switch is on, every ``/v1/*``
  request is refused with 503 ``panic_active`` before anything else runs.
- ``threat_ledger`` (INGRESS, after auth): an actor (client IP + key fingerprint prefix)
  the ledger has blocked is refused with 403 ``threat_blocked`` until its window passes,
  checked against the replica's local snapshot.
- ``injection_scan`` (PRE_FLIGHT, after the body limits): the prompt text is scored
  (the ``injection`` package); a score at or over ``security.injection.block_score`` is refused with
  403 ``injection_blocked``, counted in ``llm_proxy_injection_blocked_total`` and raised as
  event ``injection_blocked``. Every non-zero score goes to the threat ledger. A block is
  remembered in the negative cache (``caching.negative_cache``): a repeat of the same model
  and prompt is refused at once with the remembered score (counted as a block and in
  ``llm_proxy_negative_cache_hits_total``, sent to the ledger, no second event).
- ``link_sanitizer`` (PRE_FLIGHT): blocked links are replaced in the request; answers are
  cleaned by the router stage (``LinkSanitizer``/``StreamLinkFilter``).
"""

from __future__ import annotations

import math
import time

from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.events import EventLog
from deployments.llm_gateway.injection import classifier, score
from deployments.llm_gateway.links import LinkSanitizer
from deployments.llm_gateway.negative_cache import NegativeCache
from deployments.llm_gateway.pipeline import Context
from deployments.llm_gateway.providers.base import prompt_text
from deployments.llm_gateway.switches import ControlView, ThreatView
from deployments.llm_gateway.telemetry import GatewayMetrics
from rayfleet.http import client_ip


def actor_of(ctx: Context) -> str:
    """The threat-ledger actor of a request: client IP and the first 8 hex digits of the key's fingerprint."""
    return f"{client_ip(ctx.request)}|{ctx.tenant[:8]}"


class SecurityStages:
    def __init__(
        self,
        config: GatewayConfig,
        control: ControlView,
        threats: ThreatView,
        metrics: GatewayMetrics,
        events: EventLog,
    ) -> None:
        self.config = config
        self.control = control
        self.threats = threats
        self.metrics = metrics
        self.events = events
        neg = config.caching.negative_cache
        self.negative = NegativeCache(neg.maxsize, neg.ttl)
        self.reconfigure(config)
        classifier.model()  # its weights (about 0.9 MB of JSON) read at start, not by the first request on the loop

    def reconfigure(self, config: GatewayConfig) -> None:
        """Apply a (reloaded) configuration; the stages are bound methods, so they see it at once."""
        self.config = config
        if hasattr(self, "negative"):
            self.negative.resize(config.caching.negative_cache.maxsize, config.caching.negative_cache.ttl)
        links = config.security.link_sanitization
        self.links = LinkSanitizer(links.blocked_domains if config.security.enabled and links.enabled else [])

    async def panic(self, ctx: Context) -> None:
        if self.control.panic["active"]:
            raise GatewayError(
                503,
                "Forwarding is stopped by the panic switch",
                code="panic_active",
                headers={"Retry-After": "30"},
                error_class="panic",
            )

    async def threat_ledger(self, ctx: Context) -> None:
        sec = self.config.security
        if not (sec.enabled and sec.threat_ledger.enabled):
            return
        remaining = self.threats.is_blocked(actor_of(ctx), time.time())
        if remaining is not None:
            raise GatewayError(
                403,
                "Too many suspicious requests from this client; try again later",
                code="threat_blocked",
                headers={"Retry-After": str(max(1, math.ceil(remaining)))},
                error_class="threat_ledger",
            )

    async def injection_scan(self, ctx: Context) -> None:
        sec = self.config.security
        if not (sec.enabled and sec.injection.enabled):
            return
        remembered = self.negative.get(ctx.body)
        if remembered is not None:
            self.metrics.negative_hits.inc()
            self._refuse(ctx, remembered)
        verdict = score(prompt_text(ctx.body), sec.injection.classifier_alone)
        if verdict.score >= sec.injection.block_score:
            self.negative.add(ctx.body, verdict.score)
            self.events.emit(
                "injection_blocked",
                request_id=ctx.request_id,
                actor=actor_of(ctx),
                score=verdict.score,
                signals=list(verdict.signals),
            )
        self._refuse(ctx, verdict.score)

    def _refuse(self, ctx: Context, injection_score: float) -> None:
        """Record the score (request, ledger); refuse with 403 when it reaches the block score."""
        sec = self.config.security
        ctx.injection_score = injection_score
        if injection_score > 0 and sec.threat_ledger.enabled:
            self.threats.add(actor_of(ctx), injection_score)
        if injection_score >= sec.injection.block_score:
            self.metrics.injection.inc()
            raise GatewayError(
                403,
                "Request refused by the security pipeline: the prompt looks like an injection attempt",
                code="injection_blocked",
                error_class="injection",
            )

    async def link_sanitizer(self, ctx: Context) -> None:
        if self.links.active:
            ctx.links_replaced += self.links.clean_request(ctx.body)
