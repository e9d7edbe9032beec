"""Shared state of the LLM gateway: circuit breakers, budget ledger, rate-limit buckets, endpoint
registry, virtual keys and their budgets, cluster-wide switches (panic, plugins), the threat ledger, ring latencies, the webhook queue and the health prober.

Each class is a plain class; ``rayfleet.state.actor`` turns it into a named Ray actor
(or an in-process stand-in for tier-1 tests).
"""

from actors.llm_gateway.breaker import BreakerBoard, CircuitBreaker
from actors.llm_gateway.budget import BudgetLedger
from actors.llm_gateway.control import ControlBoard
from actors.llm_gateway.key_budgets import KeyBudgets
from actors.llm_gateway.keys import KeyBoard
from actors.llm_gateway.latency import LatencyBoard
from actors.llm_gateway.prober import EndpointProber
from actors.llm_gateway.ratelimit import RateLimiter
from actors.llm_gateway.registry import RegistryBoard
from actors.llm_gateway.threats import ThreatLedger
from actors.llm_gateway.webhooks import WebhookQueue

__all__ = [
    "BreakerBoard",
    "BudgetLedger",
    "CircuitBreaker",
    "ControlBoard",
    "EndpointProber",
    "KeyBoard",
    "KeyBudgets",
    "LatencyBoard",
    "RateLimiter",
    "RegistryBoard",
    "ThreatLedger",
    "WebhookQueue",
]
