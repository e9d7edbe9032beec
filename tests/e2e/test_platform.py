"""The platform through a real cluster: metrics stay cluster-wide across replicas."""

from __future__ import annotations

import time

from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import needs_app


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
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        final = healthz_count(http.get("/ignore/metrics").text)
        if final - before >= sent:
            break
        time.sleep(0.5)
    assert final - before >= sent, f"expected {sent} new /healthz requests counted, got {final - before}"


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
                page.locator(".opblock").first.wait_for(timeout=30_000)
                assert page.locator(".opblock").count() > 0, f"{app}: Swagger UI shows no operations"
        finally:
            browser.close()
    assert not external, f"docs pages reached outside the cluster: {external[:5]}"
