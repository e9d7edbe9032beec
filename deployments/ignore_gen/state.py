"""What the generator's routes share: the service and the request counters.

The generator keeps no shared state between replicas: counters go to the platform's
metrics hub, so `from_ray` needs no named actor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deployments.ignore_gen.config import IgnoreGenConfig
from deployments.ignore_gen.service import Service
from rayfleet.metrics import Metrics


@dataclass
class IgnoreGenState:
    config: IgnoreGenConfig
    service: Service
    metrics: Metrics
    requests_total: Any  # the counter of answered requests (method, route, status)

    @classmethod
    def from_ray(cls, config: IgnoreGenConfig) -> IgnoreGenState:
        metrics = Metrics("ignore_gen")
        requests_total = metrics.counter(
            "ignore_gen_requests_total", "Requests by route and status", ("method", "route", "status")
        )
        return cls(config, Service(config), metrics, requests_total)
