"""The console page in headless Chromium, served by uvicorn on loopback over a fixed fleet."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import httpx
import pytest
import uvicorn

from rayfleet.console.app import create_app
from rayfleet.console.state import ConsoleState
from rayfleet.status import Probe, http_prober
from tests.conftest import free_port
from tests.polling import eventually_sync
from tests.rayfleet.console.browse import console_page, screenshot
from tests.rayfleet.fleet_fakes import BASE, FLEET, FakeHealth, FakePlacement

pytestmark = pytest.mark.realserver
XSS = '<img src=x onerror="window.__xss=1">'


@pytest.fixture
def served() -> Iterator[tuple[str, FakeHealth]]:
    health = FakeHealth()
    state = ConsoleState(FLEET, FakePlacement(), probes=health.session, max_age=0.0)
    port = free_port()
    config = uvicorn.Config(create_app(FLEET, state), host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    eventually_sync(
        lambda: httpx.get(url + "/api/health").status_code == 200, ignore=(httpx.HTTPError,), what="console up"
    )
    yield url, health
    server.should_exit = True
    thread.join(10)


def test_the_probe_reads_status_and_json_and_a_refused_port_is_no_answer(served):
    url, _ = served

    async def probes() -> list[Probe]:
        async with http_prober(timeout=2.0) as probe:
            return list(
                await asyncio.gather(
                    probe(url + "/api/health"), probe(url + "/"), probe(f"http://127.0.0.1:{free_port()}/")
                )
            )

    assert asyncio.run(probes()) == [Probe(200, {"status": "ok"}), Probe(200, None), Probe(0)]


def test_the_page_lists_every_component_and_shows_a_health_change(served):
    from playwright.sync_api import expect

    url, health = served
    mitigation = BASE + "/mitigation/health"
    health.answers[mitigation].body["data_plane"].append(XSS)  # type: ignore[union-attr]
    with console_page(url + "/") as (page, errors):
        rows = page.locator("#components tbody tr")
        expect(rows).to_have_count(4)
        assert [r.get_attribute("data-component") for r in rows.all()] == ["asn", "lxc", "mitigation", "webfilter"]
        expect(page.locator("#summary-text")).to_have_text("All 4 components healthy")
        asn = page.locator('tr[data-component="asn"]')
        expect(asn.locator(".badge")).to_have_text("ok")
        expect(asn).to_contain_text("127.0.0.2")
        assert asn.locator("a").evaluate_all("links => links.map(a => a.href)") == [
            BASE + "/asn/",
            "http://127.0.0.2:8091/",
            "http://127.0.0.3:8091/",
            BASE + "/asn/api/docs",
        ]
        assert page.locator('tr[data-component="lxc"] a', has_text="web UI").get_attribute("href") == BASE + "/lxc/"
        webfilter = page.locator('tr[data-component="webfilter"]')
        expect(webfilter).to_contain_text("squid 127.0.0.1:3128")
        expect(webfilter).to_contain_text("dnsmasq 127.53.0.1:53")
        mitigation_row = page.locator('tr[data-component="mitigation"]')
        expect(mitigation_row).to_contain_text("haproxy 127.0.0.1:41002")
        expect(mitigation_row).to_contain_text(XSS)  # shown as text, never parsed
        assert page.locator("#components img").count() == 0 and page.evaluate("window.__xss") is None
        expect(page.locator("#base-url")).to_have_text(BASE)

        health.answers[BASE + "/lxc/api/v1/health"] = Probe(503, {"status": "degraded"})
        health.answers[mitigation].body["data_plane"].remove(XSS)  # type: ignore[union-attr]
        lxc = page.locator('tr[data-component="lxc"]')
        expect(lxc.locator(".badge")).to_have_text("unhealthy", timeout=10_000)  # the next poll
        expect(lxc).to_contain_text("serve 503")
        expect(page.locator("#summary-text")).to_have_text("1 of 4 components unhealthy: lxc")
        expect(asn.locator(".badge")).to_have_text("ok")
        screenshot(page, "console.png")
        assert errors == []
