"""Model resolution and target planning: aliases, groups, fallback chains, rotation.

``Router.plan(model)`` returns the ordered list of (endpoint, model) targets for one
request. It runs per request on replica-local state only (rotation counters, latency
averages, key cooldowns); breakers and rate limits are consulted by the forwarder.

Endpoints of one model are tried in ``priority`` order, lower number first; the rotation
strategy applies among endpoints of equal priority. Configured endpoints default to
priority 0. Verified registry entries join and leave the endpoint set through
:meth:`Router.set_dynamic`; a configured endpoint of the same name always wins.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from deployments.llm_gateway.config import EndpointConfig, GatewayConfig, GroupMember
from deployments.llm_gateway.errors import GatewayError
from deployments.llm_gateway.pricing import PriceTable

EMA_ALPHA = 0.2


@dataclass(slots=True)
class Target:
    endpoint: str
    config: EndpointConfig
    model: str


@dataclass
class KeyRing:
    """The keys of one endpoint with their cooldowns (a key that got 429 rests)."""

    keys: list[str]
    cooldown_until: list[float] = field(default_factory=list)
    used: list[int] = field(default_factory=list)
    cursor: int = 0

    def __post_init__(self) -> None:
        self.cooldown_until = [0.0] * len(self.keys)
        self.used = [0] * len(self.keys)

    def pick(self, strategy: str, now: float, exclude: set[int]) -> int | None:
        """Index of the key to use, or None when every key rests or is excluded."""
        ready = [i for i in range(len(self.keys)) if self.cooldown_until[i] <= now and i not in exclude]
        if not ready:
            return None
        if strategy == "least_used":
            choice = min(ready, key=lambda i: self.used[i])
        elif strategy in ("random", "weighted"):
            choice = random.choice(ready)
        else:
            choice = ready[self.cursor % len(ready)]
            self.cursor += 1
        self.used[choice] += 1
        return choice

    def cool(self, index: int, seconds: float, now: float) -> None:
        self.cooldown_until[index] = max(self.cooldown_until[index], now + seconds)

    def next_ready(self, now: float) -> float:
        return max(0.0, min(self.cooldown_until, default=now) - now)


class Router:
    def __init__(self, config: GatewayConfig, prices: PriceTable) -> None:
        self.config = config
        self.prices = prices
        self.endpoints = {n: e for n, e in config.endpoints.items() if e.enabled}
        self.keyrings = {n: KeyRing(e.api_keys()) for n, e in self.endpoints.items()}
        self.latency: dict[tuple[str, str], float] = {}
        self.in_flight: dict[str, int] = {n: 0 for n in self.endpoints}
        self.served: dict[str, int] = {n: 0 for n in self.endpoints}
        self._rr: dict[str, int] = {}
        self.dynamic: set[str] = set()

    def set_dynamic(self, entries: dict[str, tuple[EndpointConfig, list[str]]]) -> None:
        """Replace the registry-provided endpoints with ``entries`` (name -> (config, keys))."""
        for name in self.dynamic - set(entries):
            self.endpoints.pop(name, None)
            self.keyrings.pop(name, None)
        added: set[str] = set()
        for name, (cfg, keys) in entries.items():
            if name in self.endpoints and name not in self.dynamic:
                continue  # a configured or startup-discovered endpoint keeps its name
            self.endpoints[name] = cfg
            ring = self.keyrings.get(name)
            if ring is None or ring.keys != keys:
                self.keyrings[name] = KeyRing(list(keys))
            added.add(name)
        self.dynamic = added

    def static_names(self) -> set[str]:
        return set(self.endpoints) - self.dynamic

    # -- model resolution ---------------------------------------------------
    def resolve_alias(self, model: str) -> str:
        seen = set()
        while model in self.config.model_aliases and model not in seen:
            seen.add(model)
            model = self.config.model_aliases[model]
        return model

    def serving(self, model: str) -> list[str]:
        """Enabled endpoints listing ``model`` (an empty ``models`` list serves any model)."""
        return [n for n, e in self.endpoints.items() if not e.models or model in e.models]

    def _order_group(self, members: list[GroupMember], strategy: str) -> list[GroupMember]:
        if strategy == "cheapest":
            return sorted(
                members,
                key=lambda m: self.prices.price(m.model, self.endpoints.get(m.provider or "") if m.provider else None)[
                    0
                ],
            )
        if strategy == "fastest":

            def lat(m: GroupMember) -> float:
                names = [m.provider] if m.provider else self.serving(m.model)
                values = [self.latency[(n, m.model)] for n in names if (n, m.model) in self.latency]
                return min(values) if values else 0.0  # unmeasured first, so it gets measured

            return sorted(members, key=lat)
        pool = list(members)
        ordered: list[GroupMember] = []
        while pool:
            if strategy == "weighted":
                pick = random.choices(pool, weights=[max(m.weight, 0.0) or 1e-9 for m in pool])[0]
            else:
                pick = random.choice(pool)
            ordered.append(pick)
            pool.remove(pick)
        return ordered

    def _rotate(self, names: list[str], key: str) -> list[str]:
        if len(names) <= 1:
            return names
        strategy = self.config.rotation.strategy
        if strategy == "round_robin":
            start = self._rr.get(key, 0)
            self._rr[key] = start + 1
            start %= len(names)
            return names[start:] + names[:start]
        if strategy == "least_used":
            return sorted(names, key=lambda n: (self.in_flight.get(n, 0), self.served.get(n, 0)))
        if strategy == "weighted":
            pool, ordered = list(names), []
            while pool:
                pick = random.choices(pool, weights=[max(self.endpoints[n].weight, 0.0) or 1e-9 for n in pool])[0]
                ordered.append(pick)
                pool.remove(pick)
            return ordered
        shuffled = list(names)
        random.shuffle(shuffled)
        return shuffled

    def _by_priority(self, names: list[str], key: str) -> list[str]:
        """Lower ``priority`` first; rotation among endpoints of the same priority."""
        levels = sorted({self.endpoints[n].priority for n in names})
        if len(levels) <= 1:
            return self._rotate(names, key)
        ordered: list[str] = []
        for level in levels:
            ordered += self._rotate([n for n in names if self.endpoints[n].priority == level], f"{key}\0{level}")
        return ordered

    def plan(self, requested: str) -> tuple[str, list[Target]]:
        """(resolved model, ordered targets) for a requested model, alias or group."""
        model = self.resolve_alias(requested)
        pairs: list[tuple[str | None, str]] = []
        group = self.config.model_groups.get(model)
        if group is not None:
            pairs = [(m.provider, m.model) for m in self._order_group(group.models, group.strategy)]
            resolved = pairs[0][1] if pairs else model
        else:
            pairs = [(None, model)]
            resolved = model
        targets: list[Target] = []
        seen: set[tuple[str, str]] = set()

        def add(name: str, target_model: str) -> None:
            if name in self.endpoints and (name, target_model) not in seen:
                seen.add((name, target_model))
                targets.append(Target(name, self.endpoints[name], target_model))

        for provider, member_model in pairs:
            names = [provider] if provider else self._by_priority(self.serving(member_model), member_model)
            for name in names:
                add(name, member_model)
        for fb in self.config.fallback_chains.get(model, []) + (
            self.config.fallback_chains.get(requested, []) if requested != model else []
        ):
            add(fb.provider, fb.model)
        if not targets:
            raise GatewayError(
                404, f"The model '{requested}' does not exist or no endpoint serves it", code="model_not_found"
            )
        return resolved, targets

    # -- bookkeeping ---------------------------------------------------------
    def observe_latency(self, endpoint: str, model: str, seconds: float) -> None:
        key = (endpoint, model)
        prev = self.latency.get(key)
        self.latency[key] = seconds if prev is None else prev + EMA_ALPHA * (seconds - prev)

    def list_models(self) -> list[dict[str, object]]:
        """Models for ``GET /v1/models``: served models, aliases and groups."""
        now = int(time.time())
        out: dict[str, dict[str, object]] = {}
        for name, ep in self.endpoints.items():
            for m in ep.models:
                out.setdefault(m, {"id": m, "object": "model", "created": now, "owned_by": name})
        for alias, target in self.config.model_aliases.items():
            out.setdefault(
                alias,
                {
                    "id": alias,
                    "object": "model",
                    "created": now,
                    "owned_by": "alias",
                    "alias_of": self.resolve_alias(target),
                },
            )
        for group, cfg in self.config.model_groups.items():
            out.setdefault(
                group,
                {
                    "id": group,
                    "object": "model",
                    "created": now,
                    "owned_by": "group",
                    "strategy": cfg.strategy,
                    "members": [m.model for m in cfg.models],
                },
            )
        return list(out.values())
