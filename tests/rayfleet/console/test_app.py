"""The console app over a fixed fleet: its page, assets and `/api/status` (no Ray, no HTTP probes)."""

from __future__ import annotations

import httpx
import pytest

from rayfleet.console.app import create_app
from rayfleet.console.state import ConsoleState
from rayfleet.status import fleet_report
from tests.rayfleet.fleet_fakes import BASE, FLEET, FakeHealth, FakePlacement, placed


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def console():
    placement, health, clock = FakePlacement(), FakeHealth(), Clock()
    state = ConsoleState(FLEET, placement, probes=health.session, max_age=2.0, clock=clock)
    transport = httpx.ASGITransport(app=create_app(FLEET, state))
    return httpx.AsyncClient(transport=transport, base_url="http://console"), placement, health, clock


async def test_the_page_is_one_static_shell_with_a_strict_csp(console):
    client, *_ = console
    page = await client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert page.text.count("<script") == 1 and '<script src="static/console.js" defer></script>' in page.text
    assert "onclick" not in page.text and "http" not in page.text.split("<body>")[1]  # no CDN, no data
    js = await client.get("/static/console.js")
    assert js.headers["content-type"].startswith("text/javascript")
    assert "innerHTML" not in js.text and "textContent" in js.text and "api/status" in js.text
    assert (await client.get("/static/console.css")).headers["content-type"].startswith("text/css")
    assert (await client.get("/static/nothing.js")).status_code == 404
    assert (await client.get("/api/health")).json() == {"status": "ok"}


async def test_api_status_is_the_fleet_report(console):
    client, _, health, _ = console
    response = await client.get("/api/status")
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    body = response.json()
    expected = await fleet_report(FLEET, placed(), health, placement_at=body["placement_at"])
    assert body == expected
    assert body["console_url"] == BASE + "/" and body["components"]["webfilter"]["data_planes"]


async def test_polls_within_max_age_share_one_report(console):
    client, placement, health, clock = console
    first = (await client.get("/api/status")).json()
    health.answers[BASE + "/lxc/api/v1/health"] = health.answers[BASE + "/lxc/api/v1/health"]._replace(status=503)
    clock.now += 1.0
    assert (await client.get("/api/status")).json() == first and placement.calls == 1
    clock.now += 1.5
    after = (await client.get("/api/status")).json()
    assert placement.calls == 2 and after["components"]["lxc"]["health"] == "unhealthy"


async def test_when_ray_does_not_answer_the_last_placement_stays_with_its_time(console):
    client, placement, _, clock = console
    first = (await client.get("/api/status")).json()
    placement.fail = True
    clock.now += 5
    second = (await client.get("/api/status")).json()
    assert placement.calls == 2 and second["placement_at"] == first["placement_at"]
    assert second["components"]["asn"]["replicas"] == 2


def test_without_up_the_console_finds_the_fleet_in_serve_yaml(monkeypatch):
    from rayfleet.console.deployment import discovered_fleet
    from tests.conftest import ROOT

    monkeypatch.setenv("RAYFLEET_HOME", str(ROOT))
    monkeypatch.setenv("RAYFLEET_HOST", "0.0.0.0")
    monkeypatch.setenv("RAYFLEET_PORT", "8123")
    fleet = discovered_fleet()
    assert fleet.base_url == "http://127.0.0.1:8123" and fleet.platform == ("console",)
    assert "asn" in fleet.apps and "console" not in fleet.apps and fleet.direct["asn"] == "http://127.0.0.1:8091"
