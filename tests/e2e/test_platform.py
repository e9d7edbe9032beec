"""The platform through a real cluster: metrics stay cluster-wide across replicas."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import needs_app
from tests.polling import eventually_sync


def healthz_count(body: str) -> float:
    for family in text_string_to_metric_families(body):
        if family.name == "ignore_gen_requests":
            return sum(
                s.value
                for s in family.samples
                if s.name == "ignore_gen_requests_total"
                and s.labels.get("route") == "/healthz"
                and s.labels.get("status") == "200"
            )
    return 0.0


def test_counters_are_monotonic_whichever_of_two_replicas_answers(cluster, http):
    needs_app(cluster, "ignore_gen")
    before = healthz_count(http.get("/ignore/metrics").text)
    sent, replicas, seen = 0, set(), []
    for _ in range(40):
        for _ in range(3):
            response = http.get("/ignore/healthz")
            assert response.status_code == 200
            replicas.add(response.headers["x-rayfleet-replica"])
            sent += 1
        scrape = http.get("/ignore/metrics")
        replicas.add(scrape.headers["x-rayfleet-replica"])
        seen.append(healthz_count(scrape.text))
    assert len(replicas) >= 2, "the test needs two replicas answering"
    assert seen == sorted(seen), f"a counter went backwards between scrapes: {seen}"
    eventually_sync(
        lambda: healthz_count(http.get("/ignore/metrics").text) - before >= sent,
        timeout=15,
        interval=0.5,
        what=f"{sent} new /healthz requests counted",
    )


def test_health_table_and_replica_header(cluster, http):
    for app in cluster.apps:
        from rayfleet.catalog import COMPONENTS

        comp = COMPONENTS[app]
        response = http.get(comp.route_prefix + comp.health_path)
        assert response.status_code == 200, f"{app}: {response.status_code}"
        assert response.headers.get("x-rayfleet-replica")


def test_docs_pages_render_offline_in_a_browser(cluster):
    """Swagger UI and ReDoc come from the cluster itself, never a CDN: they render with no internet."""
    import os

    import pytest

    from rayfleet.catalog import COMPONENTS

    chromium = "/usr/bin/chromium"
    if not os.path.exists(chromium):
        message = "chromium missing (scripts/system-deps.sh installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    external: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=args)
        try:
            page = browser.new_page()
            page.on(
                "request",
                lambda r: (
                    None if r.url.startswith(cluster.base_url) or r.url.startswith("data:") else external.append(r.url)
                ),
            )
            for app in cluster.apps:
                comp = COMPONENTS[app]
                if not comp.docs_path:
                    continue
                page.goto(cluster.base_url + comp.route_prefix + comp.docs_path)
                page.locator(".opblock").first.wait_for(timeout=90_000)
                assert page.locator(".opblock").count() > 0, f"{app}: Swagger UI shows no operations"
        finally:
            browser.close()
    assert not external, f"docs pages reached outside the cluster: {external[:5]}"


def status_json(cluster) -> dict:
    """`rayfleet status --json` of this session's cluster (its own state folder)."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "RAYFLEET_STATE_DIR": str(cluster.state_dir)}
    out = subprocess.run(
        [sys.executable, "-m", "rayfleet.cli", "status", "--json"], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_status_json_lists_urls_health_replicas_and_nodes_and_direct_urls_answer(cluster):
    import httpx

    from rayfleet.catalog import COMPONENTS

    eventually_sync(  # `rayfleet status` asks `up` for a placement snapshot taken now
        lambda: all(c["replicas"] for c in status_json(cluster)["components"].values()),
        timeout=30,
        interval=1,
        what="every component placed",
    )
    report = status_json(cluster)
    assert report["running"] is True and report["phase"] == "up"
    assert set(report["components"]) == set(cluster.apps)
    for name, comp in report["components"].items():
        assert comp["health"] == "ok", (name, comp)
        assert comp["serve_url"] == f"{cluster.base_url}{COMPONENTS[name].route_prefix}/"
        assert comp["replicas"] >= 1 and comp["nodes"], (name, comp)
        if name in ("asn", "ignore_gen", "llm_gateway"):
            assert comp["direct_url"], f"{name} has no direct URL"
            health = httpx.get(comp["direct_url"].rstrip("/") + COMPONENTS[name].health_path, timeout=10)
            assert health.status_code == 200, (name, health.status_code)


def test_direct_ingress_serves_the_same_app_with_shared_metrics_and_the_client_address(cluster, http):
    import httpx

    needs_app(cluster, "ignore_gen")
    direct = cluster.direct["ignore_gen"]
    before = healthz_count(http.get("/ignore/metrics").text)
    replicas = set()
    for _ in range(30):
        with httpx.Client(trust_env=False) as client:  # a new connection each time: the kernel picks a replica
            r = client.get(direct + "/healthz", headers={"X-Forwarded-For": "203.0.113.7"})
        assert r.status_code == 200
        replicas.add(r.headers["x-rayfleet-replica"])
    assert len(replicas) >= 2, "SO_REUSEPORT should spread new connections over both replicas"
    eventually_sync(  # counted in the same cluster-wide metrics as the Serve path
        lambda: healthz_count(http.get("/ignore/metrics").text) - before >= 30,
        timeout=15,
        interval=0.5,
        what="the direct requests counted",
    )
    assert healthz_count(http.get("/ignore/metrics").text) - before >= 30
    assert httpx.get(direct + "/openapi.json").json()["paths"], "the direct path serves the whole app"


def test_direct_listener_refuses_a_1_mb_header(cluster):
    import socket

    needs_app(cluster, "ignore_gen")
    host, port = cluster.direct["ignore_gen"].removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
        assert s.recv(64).startswith(b"HTTP/1.1 431 ")
