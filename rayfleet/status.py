"""The fleet's status: the one report behind `rayfleet status --json` and the console's `/api/status`.

Each caller brings what it can see and the report is built the same way from it:

- the `Fleet`: what `rayfleet up` deployed (base URL, components, direct URL templates),
  from the state file (CLI) or from the console application's ``args`` (`up` hands them over);
- Serve's `Placement` of each component: the snapshot `up` keeps in the state file (CLI),
  or Ray itself (the console runs inside the cluster);
- a `Prober`: an HTTP GET of a health route (`http_prober`, or a fake in the tests).

Per component: its URLs (Serve, direct per node, docs, web UI), its health (the Serve health
route and the first direct one answer 200), replicas and nodes, and the addresses of the data
planes its health route reports (`rayfleet.catalog.DATA_PLANES`: the web filter's Squid and
dnsmasq, each mitigation node's HAProxy).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from typing_extensions import TypedDict  # pydantic (the console's response model) needs it before 3.12

from rayfleet.catalog import DATA_PLANES, PLATFORM, UI_PATHS, application
from rayfleet.placement import Placement

PROBE_TIMEOUT = 3.0


class Probe(NamedTuple):
    """A health route's answer: its HTTP status (0: no answer) and its JSON body (None if not JSON)."""

    status: int
    body: object = None


Prober = Callable[[str], Awaitable[Probe]]


class FleetArgs(TypedDict):
    """A `Fleet` as JSON (the console application's ``args.fleet``)."""

    base_url: str
    apps: list[str]
    direct: dict[str, str]
    ingress: str | None
    platform: list[str]


@dataclass(frozen=True)
class Fleet:
    """What `rayfleet up` deployed: where Serve listens and which applications run there."""

    base_url: str
    apps: tuple[str, ...]  # the components
    direct: dict[str, str] = field(default_factory=dict)  # component → direct URL (``{node}`` per node)
    ingress: str | None = None
    platform: tuple[str, ...] = ()  # the platform's own applications (the console)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], base_url: str, ingress: str | None = None) -> Fleet:
        """The fleet a serve.yaml config (already selected and prepared) deploys."""
        from rayfleet.deploy import direct_urls

        names = [str(app["name"]) for app in config.get("applications", [])]
        return cls(
            base_url=base_url,
            apps=tuple(n for n in names if n not in PLATFORM),
            direct=direct_urls(dict(config)),
            ingress=ingress,
            platform=tuple(n for n in names if n in PLATFORM),
        )

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Fleet:
        """The fleet `rayfleet up` recorded in its state file."""
        return cls(
            base_url=str(state["base_url"]),
            apps=tuple(state["apps"]),
            direct=dict(state.get("direct") or {}),
            ingress=state.get("ingress"),
            platform=tuple(state.get("platform") or ()),
        )

    @classmethod
    def from_args(cls, args: FleetArgs) -> Fleet:
        return cls(
            base_url=args["base_url"],
            apps=tuple(args["apps"]),
            direct=dict(args["direct"]),
            ingress=args["ingress"],
            platform=tuple(args["platform"]),
        )

    def to_args(self) -> FleetArgs:
        return {
            "base_url": self.base_url,
            "apps": list(self.apps),
            "direct": dict(self.direct),
            "ingress": self.ingress,
            "platform": list(self.platform),
        }


def hand_to_platform(config: dict[str, Any], fleet: Fleet) -> None:
    """Give the platform's applications in ``config`` (the console) the fleet as ``args.fleet``."""
    for app in config.get("applications", []):
        if app["name"] in PLATFORM:
            app.setdefault("args", {})["fleet"] = fleet.to_args()


class HealthStatus(TypedDict):
    serve: int
    direct: int | None


class DataPlane(TypedDict):
    kind: str  # squid, dnsmasq, haproxy
    address: str  # host:port


class ComponentStatus(TypedDict):
    serve_url: str
    direct_url: str | None
    direct_urls: list[str]
    docs: str | None
    ui: str | None
    health: Literal["ok", "unhealthy"]
    health_status: HealthStatus
    serve_status: str | None
    replicas: int | None
    nodes: list[str]
    data_planes: list[DataPlane]
    children: list[dict[str, Any]]


class FleetReport(TypedDict):
    ingress: str | None
    base_url: str
    console_url: str | None
    placement_at: float | None
    components: dict[str, ComponentStatus]


def direct_urls(template: str | None, nodes: Iterable[str]) -> list[str]:
    """A direct URL per node for a ``{node}`` template (loopback when no node is known yet)."""
    if not template:
        return []
    if "{node}" not in template:
        return [template]
    return [template.replace("{node}", ip) for ip in (list(nodes) or ["127.0.0.1"])]


def data_planes(name: str, health_body: object) -> list[DataPlane]:
    """The data-plane addresses a component's health body names (`DATA_PLANES`), in order."""
    if not isinstance(health_body, dict):
        return []
    out: list[DataPlane] = []
    for kind, key in DATA_PLANES.get(name, ()):
        value = health_body.get(key)
        addresses = value if isinstance(value, list) else [value]
        out += [{"kind": kind, "address": str(a)} for a in addresses if isinstance(a, str) and a]
    return out


def children(health_body: object) -> list[dict[str, Any]]:
    """The supervised child processes a component's health body lists (``children``): name,
    state, pid, restarts and last exit (`rayfleet.supervisor.Status`)."""
    listed = health_body.get("children") if isinstance(health_body, dict) else None
    if not isinstance(listed, list):
        return []
    return [c for c in listed if isinstance(c, dict) and isinstance(c.get("name"), str)]


async def _no_direct() -> None:
    return None


async def component_status(fleet: Fleet, name: str, where: Placement | None, probe: Prober) -> ComponentStatus:
    """One component's row: its URLs, the answers of its health routes, where it runs."""
    comp = application(name)
    nodes = list(where["nodes"]) if where else []
    direct_list = direct_urls(fleet.direct.get(name), nodes)
    first = direct_list[0] if direct_list else None
    serve, direct = await asyncio.gather(
        probe(comp.url(fleet.base_url, comp.health_path)),
        probe(first + comp.health_path) if first else _no_direct(),
    )
    direct_code = direct.status if direct is not None else None
    ui = UI_PATHS.get(name)
    return {
        "serve_url": comp.url(fleet.base_url, "/"),
        "direct_url": (first + "/") if first else None,
        "direct_urls": [d + "/" for d in direct_list],
        "docs": comp.url(fleet.base_url, comp.docs_path) if comp.docs_path else None,
        "ui": comp.url(fleet.base_url, ui) if ui else None,
        "health": "ok" if serve.status == 200 and direct_code in (None, 200) else "unhealthy",
        "health_status": {"serve": serve.status, "direct": direct_code},
        "serve_status": where["status"] if where else None,
        "replicas": where["replicas"] if where else None,
        "nodes": nodes,
        "data_planes": data_planes(name, serve.body),
        "children": children(serve.body),
    }


async def fleet_report(
    fleet: Fleet, placed: Mapping[str, Placement], probe: Prober, placement_at: float | None = None
) -> FleetReport:
    """Every component's status, its health routes probed concurrently."""
    names = sorted(fleet.apps)
    rows = await asyncio.gather(*(component_status(fleet, n, placed.get(n), probe) for n in names))
    console = [application(n).url(fleet.base_url, "/") for n in fleet.platform if n == "console"]
    return {
        "ingress": fleet.ingress,
        "base_url": fleet.base_url,
        "console_url": console[0] if console else None,
        "placement_at": placement_at,
        "components": dict(zip(names, rows, strict=True)),
    }


def all_healthy(report: FleetReport) -> bool:
    return all(c["health"] == "ok" for c in report["components"].values())


@asynccontextmanager
async def http_prober(timeout: float = PROBE_TIMEOUT) -> AsyncIterator[Prober]:
    """Probes over one HTTP client. A liveness probe on the operator's own listeners: TLS is not
    verified (a self-signed direct certificate must not read as down), no proxy from the environment."""
    import httpx

    async with httpx.AsyncClient(timeout=timeout, trust_env=False, verify=False) as client:

        async def probe(url: str) -> Probe:
            try:
                response = await client.get(url)
            except Exception:  # refused, reset, TLS failure, timeout: not healthy
                return Probe(0)
            try:
                body: object = response.json()
            except ValueError:
                body = None
            return Probe(response.status_code, body)

        yield probe


async def probed_report(
    fleet: Fleet, placed: Mapping[str, Placement], placement_at: float | None = None
) -> FleetReport:
    """`fleet_report` with real HTTP probes."""
    async with http_prober() as probe:
        return await fleet_report(fleet, placed, probe, placement_at)
