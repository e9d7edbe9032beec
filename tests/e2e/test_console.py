"""The fleet console at Serve's root `/` of a deployed cluster: the page, `/api/status`, the same
report as `rayfleet status --json`, with the placement the console reads from Ray itself."""

from __future__ import annotations

import httpx

from rayfleet.catalog import COMPONENTS
from tests.e2e.test_platform import status_json
from tests.polling import eventually_sync
from tests.rayfleet.console.browse import console_page, screenshot


def placed_report(http: httpx.Client, apps: list[str]) -> dict:
    """`/api/status` once every deployed component is placed (replicas running, nodes known)."""

    def check() -> dict | None:
        body = http.get("/api/status").json()
        components = body["components"]
        return body if set(components) == set(apps) and all(c["replicas"] for c in components.values()) else None

    return eventually_sync(check, timeout=60, interval=1.0, what="every component placed in /api/status")


def test_the_console_page_is_served_at_the_root(cluster, http):
    page = http.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers.get("x-rayfleet-replica"), "the console is a Serve replica like the components"
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert http.get("/static/console.js").status_code == 200
    assert http.get("/api/health").json() == {"status": "ok"}
    assert http.get("/no-such-page").json() == {"detail": "Not Found"}  # the console's own 404 under `/`


def test_api_status_reports_every_component_healthy_and_placed(cluster, http):
    report = placed_report(http, cluster.apps)
    assert report["base_url"] == cluster.base_url and report["console_url"] == cluster.base_url + "/"
    for name, comp in report["components"].items():
        assert comp["health"] == "ok", (name, comp)
        assert comp["serve_url"] == f"{cluster.base_url}{COMPONENTS[name].route_prefix}/"
        assert comp["serve_status"] == "RUNNING" and comp["nodes"], (name, comp)
        assert http.get(comp["serve_url"] + COMPONENTS[name].health_path.lstrip("/")).status_code == 200


def test_the_console_and_the_cli_give_the_same_report(cluster, http):
    report = placed_report(http, cluster.apps)
    cli = status_json(cluster)
    assert set(cli["components"]) == set(report["components"])
    for name, comp in report["components"].items():
        other = cli["components"][name]
        for key in ("serve_url", "docs", "ui", "health", "direct_urls"):
            assert comp[key] == other[key], (name, key, comp[key], other[key])


def test_data_planes_are_the_addresses_the_components_report(cluster, http):
    for name, kind, path in (
        ("webfilter", "squid", "/webfilter/health"),
        ("mitigation", "haproxy", "/mitigation/health"),
    ):
        if name not in cluster.apps:
            continue

        def same(name: str = name, kind: str = kind, path: str = path) -> bool:
            planes = http.get("/api/status").json()["components"][name]["data_planes"]
            listed = [d["address"] for d in planes if d["kind"] == kind]
            return bool(listed) and listed == http.get(path).json()["data_plane"]

        eventually_sync(same, timeout=30, interval=1.0, what=f"{name}'s {kind} addresses in /api/status")


def test_the_page_renders_every_component_in_a_browser(cluster):
    from playwright.sync_api import expect

    with console_page(cluster.base_url + "/") as (page, errors):
        expect(page.locator("#components tbody tr")).to_have_count(len(cluster.apps), timeout=30_000)
        for name in cluster.apps:
            expect(page.locator(f'tr[data-component="{name}"] .badge')).to_have_text("ok", timeout=30_000)
        screenshot(page, "console-e2e.png")
        assert errors == []
