"""The spec's six `service_*` families, recorded twice: under the node's own component
(its /metrics) and under the fleet component with a `node` label (the fleet's /metrics)."""

from __future__ import annotations

from typing import Any

from rayfleet.metrics import Metrics

FLEET_COMPONENT = "mitigation"
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
FAMILIES = (
    ("service_packets_processed_total", "counter", "Requests (l7) or connections (syn) the data plane handled"),
    ("service_attacks_blocked_total", "counter", "Requests and connections the data plane denied"),
    ("service_latency_seconds", "histogram", "Total request time through the node (sampled from HAProxy's log)"),
    ("service_connections_active", "gauge", "Client connections open on the node"),
    ("service_cpu_usage_percent", "gauge", "CPU used by the node's HAProxy processes (percent of one core)"),
    ("service_memory_usage_bytes", "gauge", "Resident memory of the node's HAProxy processes"),
)


def node_component(node_id: str) -> str:
    return f"mitigation_node_{node_id}"


def declare(metrics: Metrics, labels: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kind, doc in FAMILIES:
        if kind == "counter":
            out[name] = metrics.counter(name, doc, labels)
        elif kind == "gauge":
            out[name] = metrics.gauge(name, doc, labels)
        else:
            out[name] = metrics.histogram(name, doc, labels, buckets=LATENCY_BUCKETS)
    return out


class NodeMetrics:
    def __init__(self, node_id: str) -> None:
        self.node_id = node_id
        self.own = Metrics(node_component(node_id))
        self.fleet = Metrics(FLEET_COMPONENT)
        own = declare(self.own, ())
        fleet = declare(self.fleet, ("node",))
        self._pairs = {name: (own[name], fleet[name].labels(node=node_id)) for name in own}

    def inc(self, name: str, amount: float) -> None:
        if amount > 0:
            for child in self._pairs[name]:
                child.inc(amount)

    def set(self, name: str, value: float) -> None:
        for child in self._pairs[name]:
            child.set(value)

    def observe(self, name: str, value: float) -> None:
        for child in self._pairs[name]:
            child.observe(value)

    async def render(self) -> bytes:
        await self.fleet.flush()
        return await self.own.render()

    async def flush(self) -> None:
        await self.own.flush()
        await self.fleet.flush()
