"""The six `autoscale_api_*` families (spec §4), cluster-wide through rayfleet.metrics.

`RequestMetrics` is an ASGI middleware outside everything else, so every
request is counted: ones refused by validation, rate limiting or
authentication included. `endpoint` is the matched route's path template
(`unmatched` otherwise) and `method` is clamped to the known verbs (`other`),
so label cardinality stays bounded whatever clients send.
"""

from __future__ import annotations

import importlib.util
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rayfleet.metrics import Metrics
from rayfleet.supervisor import ChildMetrics

METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
RESOURCES = ("cpu", "ram", "storage")
ACTIONS = ("set", "increase")


def metrics_library_available() -> bool:
    return importlib.util.find_spec("prometheus_client") is not None


class ApiMetrics:
    def __init__(self, registry: Metrics | None = None) -> None:
        self.registry = registry or Metrics("autoscale")
        m = self.registry
        self.requests = m.counter("autoscale_api_requests_total", "API requests", ("method", "endpoint", "status"))
        self.duration = m.histogram(
            "autoscale_api_request_duration_seconds", "API request duration", ("method", "endpoint")
        )
        self.actions = m.counter(
            "autoscale_api_scaling_actions_total", "Scaling actions applied", ("container_id", "resource", "action")
        )
        self.failures = m.counter(
            "autoscale_api_scaling_failures_total",
            "Scaling actions that failed",
            ("container_id", "resource", "reason"),
        )
        self.cores = m.gauge("autoscale_api_container_cpu_cores", "Allocated CPU cores", ("container_id",))
        self.memory = m.gauge("autoscale_api_container_memory_mb", "Allocated memory (MB)", ("container_id",))
        self._children: ChildMetrics | None = None

    def children(self) -> ChildMetrics:
        """The supervised children's families, declared on first use (only when children are configured,
        so a fleet without them exposes exactly the spec's six families)."""
        if self._children is None:
            self._children = ChildMetrics(self.registry)
        return self._children

    def action(self, vmid: str, resource: str, action: str) -> None:
        self.actions.labels(container_id=vmid, resource=resource, action=action).inc()

    def failure(self, vmid: str, resource: str, reason: str) -> None:
        self.failures.labels(container_id=vmid, resource=resource, reason=reason or "unknown").inc()


class RequestMetrics:
    def __init__(self, app: ASGIApp, metrics: ApiMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "GET").upper()
        method = method if method in METHODS else "other"
        status = [500]
        started = time.perf_counter()

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = scope.get("route")  # the router records the matched route in the request scope
            endpoint = str(getattr(route, "path", None) or "unmatched")
            self.metrics.requests.labels(method=method, endpoint=endpoint, status=str(status[0])).inc()
            self.metrics.duration.labels(method=method, endpoint=endpoint).observe(time.perf_counter() - started)
