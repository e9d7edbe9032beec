"""The built components: where each is served and how it is checked.

Data only: `rayfleet up` and the tests read it; nothing here imports a component.
A component gets its entry here when it is built, together with its application in
`serve.yaml` (which decides what `rayfleet up` deploys). `PLATFORM` holds the
applications that are the platform's own (the fleet console at `/`): deployed with
every component, never a component of the spec (no routes.tsv table).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Component:
    name: str
    route_prefix: str
    health_path: str
    docs_path: str | None
    openapi_path: str | None = "/openapi.json"
    # "module:function" called with the var/ folder before deploying (demo dependencies)
    prestart: str | None = None
    # routes.tsv tables this component serves -> their base below route_prefix (default: its own name, at "")
    route_tables: tuple[tuple[str, str], ...] = ()

    def tables(self) -> dict[str, str]:
        """The routes.tsv component names served here and the base path each is relative to."""
        return dict(self.route_tables) or {self.name: ""}

    def url(self, base_url: str, path: str = "") -> str:
        """``path`` below this application on ``base_url`` (the root prefix ``/`` adds nothing)."""
        return base_url.rstrip("/") + self.route_prefix.rstrip("/") + path


COMPONENTS: dict[str, Component] = {
    c.name: c
    for c in (
        Component(
            "lxc",
            "/lxc",
            "/api/v1/health",
            "/api/v1/docs",
            "/api/v1/openapi.json",
            prestart="sims.pve.demo:ensure_demo_host",
        ),
        Component("llm_gateway", "/llm", "/health", "/docs"),
        Component("ignore_gen", "/ignore", "/healthz", "/docs"),
        Component("asn", "/asn", "/api/health", "/api/docs", "/api/openapi.json"),
        Component(
            "autoscale", "/autoscale", "/health/check", "/docs", prestart="deployments.autoscale.demo:ensure_demo_hosts"
        ),
        Component("tasknet", "/tasknet", "/health", "/docs"),
        Component("webfilter", "/webfilter", "/health", "/docs"),
        Component(
            "mitigation",
            "/mitigation",
            "/health",
            "/docs",
            route_tables=(("mitigation_orchestrator", ""), ("mitigation_node", "/nodes/node-1")),
        ),
    )
}

# What operators open besides the APIs (the fleet console shows both):
# a component's web page below its route prefix,
UI_PATHS: dict[str, str] = {
    "lxc": "/",
    "llm_gateway": "/ui/registry",
    "tasknet": "/",
    "webfilter": "/",
    "autoscale": "/",
    "mitigation": "/",
}
# and the data planes its health route reports: (kind, field of the health body holding "host:port" or a list).
DATA_PLANES: dict[str, tuple[tuple[str, str], ...]] = {
    "webfilter": (("squid", "data_plane"), ("dnsmasq", "dns")),
    "mitigation": (("haproxy", "data_plane"),),
}

PLATFORM: dict[str, Component] = {c.name: c for c in (Component("console", "/", "/api/health", None, None),)}


def application(name: str) -> Component:
    """The catalog entry of a serve.yaml application (a component or a platform application);
    one the catalog does not know is taken to live at ``/<name>`` with ``/health``."""
    return COMPONENTS.get(name) or PLATFORM.get(name) or Component(name, f"/{name}", "/health", None)
