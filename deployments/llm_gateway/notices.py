"""What the gateway tells operators besides answering: events, alert thresholds and gauges.

- breaker ``circuit_open``/``endpoint_recovered`` and health ``endpoint_down``/``endpoint_up`` events (the breaker actor's id, so every
  replica reporting one yields one webhook delivery), and the circuit gauges;
- ``budget_threshold`` once a day when the spend reaches ``budget.soft_limit``;
- ``auth_failure``, aggregated: one event per window with the counts by reason.
"""

from __future__ import annotations

from typing import Any

from actors.llm_gateway.breaker import BreakerEvent, BreakerView
from deployments.llm_gateway.events import EventLog
from deployments.llm_gateway.reload import LiveConfig
from deployments.llm_gateway.routing import Router
from deployments.llm_gateway.shared_state import BudgetLeases
from deployments.llm_gateway.telemetry import GatewayMetrics

AUTH_FAILURE_WINDOW = 60.0
MAX_REASONS = 100


class Notices:
    def __init__(
        self, live: LiveConfig, metrics: GatewayMetrics, events: EventLog, router: Router, budget: BudgetLeases
    ) -> None:
        self.live = live
        self.budget = budget
        self.metrics = metrics
        self.events = events
        self.router = router
        self.auth_failures: dict[str, int] = {}
        self._budget_alerted_day = ""

    def breaker_event(self, event: BreakerEvent) -> None:
        reason = {"reason": event["reason"]} if event.get("reason") else {}
        self.events.emit(event["event"], event_id=f"evt_breaker_{event['seq']}", endpoint=event["endpoint"], **reason)

    def circuit_gauges(self, states: dict[str, BreakerView]) -> None:
        for name in set(self.router.endpoints) | set(states):
            view = states.get(name)
            closed = view is None or view["state"] == "CLOSED"
            self.metrics.circuit.labels(endpoint=name).set(0.0 if closed else 1.0)

    def budget_state(self, state: dict[str, Any]) -> None:
        """The ledger's answer: the spend gauge, and the soft-limit event once per day."""
        spent = float(state.get("spent", 0.0))
        self.metrics.budget.set(spent)
        budget = self.live.current.budget
        soft, day = budget.soft_limit, str(state.get("day", self.budget.day))
        if soft > 0 and spent >= soft and self._budget_alerted_day != day:
            self._budget_alerted_day = day
            self.events.emit(
                "budget_threshold",
                event_id=f"evt_budget_threshold_{day}",
                day=day,
                spent_usd=round(spent, 4),
                soft_limit_usd=soft,
                daily_limit_usd=budget.daily_limit,
            )

    def auth_failure(self, reason: str) -> None:
        self.metrics.auth_failures.labels(reason=reason).inc()
        if len(self.auth_failures) < MAX_REASONS or reason in self.auth_failures:
            self.auth_failures[reason] = self.auth_failures.get(reason, 0) + 1

    async def report_auth_failures(self) -> None:
        """Emit the window's ``auth_failure`` event (none when nothing failed)."""
        counts, self.auth_failures = self.auth_failures, {}
        if counts:
            self.events.emit(
                "auth_failure", window_seconds=AUTH_FAILURE_WINDOW, failures=sum(counts.values()), by_reason=counts
            )
