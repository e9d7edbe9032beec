"""A fixed fleet for the status report and the console: placement and health answers without Ray or HTTP."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any

from rayfleet.placement import Placement
from rayfleet.status import Fleet, Probe

BASE = "http://127.0.0.1:8000"

FLEET = Fleet(
    base_url=BASE,
    apps=("asn", "lxc", "mitigation", "webfilter"),
    direct={"asn": "http://{node}:8091"},
    ingress="proxy",
    platform=("console",),
)


def placed(status: str = "RUNNING") -> dict[str, Placement]:
    def where(replicas: int, nodes: list[str]) -> Placement:
        return {"status": status, "replicas": replicas, "nodes": nodes, "node_ids": [f"id-{n}" for n in nodes]}

    return {
        "asn": where(2, ["127.0.0.2", "127.0.0.3"]),
        "lxc": where(1, ["127.0.0.2"]),
        "mitigation": where(1, ["127.0.0.3"]),
        "webfilter": where(2, ["127.0.0.2"]),
    }


def health_answers() -> dict[str, Probe]:
    """URL → what its health route answers; a URL missing here does not answer (status 0)."""
    return {
        BASE + "/asn/api/health": Probe(200, {"status": "ok"}),
        "http://127.0.0.2:8091/api/health": Probe(200, {"status": "ok"}),
        BASE + "/lxc/api/v1/health": Probe(200, {"status": "ok"}),
        BASE + "/mitigation/health": Probe(
            200,
            {"status": "healthy", "nodes": 2, "healthy_nodes": 2, "data_plane": ["127.0.0.1:41001", "127.0.0.1:41002"]},
        ),
        BASE + "/webfilter/health": Probe(
            200,
            {
                "status": "healthy",
                "proxy": {"running": True, "address": "127.0.0.1:3128"},
                "data_plane": ["127.0.0.1:3128"],
                "dns": "127.53.0.1:53",
            },
        ),
    }


class FakeHealth:
    """A `Prober` over a mutable answer table; records the URLs it was asked."""

    def __init__(self, answers: dict[str, Probe] | None = None) -> None:
        self.answers = answers if answers is not None else health_answers()
        self.asked: list[str] = []

    async def __call__(self, url: str) -> Probe:
        self.asked.append(url)
        return self.answers.get(url, Probe(0))

    @asynccontextmanager
    async def session(self) -> Any:
        yield self


class FakePlacement:
    """A placement source returning `placed()` (or raising once `fail` is set); counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.value = placed()
        self.fail = False

    async def __call__(self, apps: Any) -> dict[str, Placement]:
        self.calls += 1
        if self.fail:
            raise RuntimeError("GCS unavailable")
        return {a: self.value[a] for a in apps if a in self.value}
