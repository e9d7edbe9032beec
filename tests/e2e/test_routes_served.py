"""Every route that routes.tsv names for a deployed component is served through Serve.

"Served" means: Serve routes it to the component (not Serve's or the framework's
"Not Found"), the method is allowed (not 405), and the component documents it in
its OpenAPI schema, or, for routes outside the schema (docs pages, /metrics),
answers it successfully with the component's credentials.
"""

from __future__ import annotations

import csv
import re

import httpx
import pytest
import websockets.exceptions
import websockets.sync.client

from rayfleet.catalog import COMPONENTS
from tests.conftest import DATA

SAMPLE_PARAMS = {"asn": "15169", "instance_id": "100", "id": "1"}


def routes_by_component() -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    with open(DATA / "routes.tsv", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh, delimiter="\t") if r and not r[0].startswith("#")]
    for component, method, path in rows[1:]:
        out.setdefault(component, []).append((method, path))
    return out


ROUTES = routes_by_component()


def credentials(component: str, path: str, secrets: dict[str, str]) -> dict[str, str]:
    """The headers a legitimate operator sends to this route (`component` as in routes.tsv)."""
    if component.startswith("mitigation"):
        return {"X-Service-API-Key": secrets.get("MANAGEMENT_API_KEY", "")}
    if component == "asn":
        return {"X-API-Key": secrets.get("API_SECRET_KEY", "")}
    if component == "lxc":
        return {
            "X-API-Key": secrets.get("LXC_API_KEY", ""),
            "Authorization": f"Bearer {secrets.get('LXC_API_KEY', '')}",
        }
    if component == "llm_gateway":
        name = "LLM_PROXY_API_KEYS" if path.startswith("/v1/") else "LLM_PROXY_ADMIN_KEYS"
        return {"Authorization": f"Bearer {secrets.get(name, '').split(',')[0]}"}
    return {}


def concrete(path: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: SAMPLE_PARAMS.get(m.group(1), "sample"), path)


# routes.tsv table -> (the built component serving it, the table's base below its prefix)
TABLES = {table: (comp, base) for comp in COMPONENTS.values() for table, base in comp.tables().items()}


def schema_routes(client: httpx.Client, table: str, headers: dict[str, str]) -> set[tuple[str, str]]:
    comp, base = TABLES[table]
    if not comp.openapi_path:
        return set()
    response = client.get(comp.route_prefix + base + comp.openapi_path, headers=headers)
    assert response.status_code == 200, f"{table}: OpenAPI document not served"
    return {(m.upper(), p) for p, ops in response.json().get("paths", {}).items() for m in ops}


def is_framework_not_found(response: httpx.Response) -> bool:
    if response.status_code != 404:
        return False
    try:
        return response.json() in ({"detail": "Not Found"}, {"detail": "Not found"})
    except ValueError:
        return True  # Serve's own plain-text 404 for an unknown prefix


def websocket_problem(base_url: httpx.URL, path: str, headers: dict[str, str]) -> str | None:
    """None when the route is served: the handshake completes, or the app itself refuses it.

    An unrouted WebSocket path is closed by the framework before the upgrade, which the
    server turns into a bare 403 (or 404) with no body; an app's own refusal (a missing
    token, say) has another status or a body that says why.
    """
    url = str(base_url).replace("http", "ws", 1).rstrip("/") + path
    try:
        with websockets.sync.client.connect(url, additional_headers=headers, open_timeout=10):
            return None
    except websockets.exceptions.InvalidStatus as exc:
        status, body = exc.response.status_code, exc.response.body or b""
        if status in (403, 404) and not body.strip():
            return f"handshake refused with a bare {status}"
        return None


@pytest.mark.parametrize("component", sorted(c for c in ROUTES if c in TABLES))
def test_every_route_of_routes_tsv_is_served(component, cluster, http):
    comp, base = TABLES[component]
    if comp.name not in cluster.apps:
        pytest.skip(f"{comp.name} is not deployed in this run")
    prefix = comp.route_prefix + base
    documented = schema_routes(http, component, credentials(component, "/api/v1/", cluster.secrets))
    problems = []
    for method, path in ROUTES[component]:
        headers = credentials(component, path, cluster.secrets)
        if method == "WebSocket":
            problem = websocket_problem(http.base_url, prefix + concrete(path), headers)
            if problem:
                problems.append(f"WebSocket {path}: {problem}")
            continue
        kwargs = {"json": {}} if method in ("POST", "PUT", "PATCH") else {}
        response = http.request(method, prefix + concrete(path), headers=headers, **kwargs)
        if is_framework_not_found(response) or response.status_code == 405:
            problems.append(f"{method} {path}: {response.status_code} {response.text[:120]}")
        elif (method, path) not in documented and response.status_code >= 400:
            problems.append(f"{method} {path}: not in the OpenAPI schema and answered {response.status_code}")
    assert not problems, f"{component}: routes not served:\n" + "\n".join(problems)
