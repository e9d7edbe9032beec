"""The fleet dashboard at `/mitigation/`, in headless Chromium (Debian's chromium through Playwright),
served by the mitigation app under the route prefix Serve gives it, over a fleet of real HAProxy nodes:
sign in with the management key, the live fleet, threats and top attackers, bans with their lift
button (a lifted ban is gone from `GET /api/v1/blacklist` and HAProxy serves the source again), rules
and policy. Server values (a ban's reason) are shown as text; any script error or CSP refusal fails
the test. Each view is saved as var/screenshots/mitigation-*.png once the test has checked it."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

from tests.browser import Tab, expect, launched_chromium, open_tab, screenshot, served_modules
from tests.conftest import free_port
from tests.deployments.mitigation.conftest import API_KEY, Fleet
from tests.deployments.mitigation.test_kept_state import get
from tests.polling import eventually

pytestmark = pytest.mark.realserver

PREFIX = "/mitigation"
HOSTILE = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script><b>bold</b>'


@pytest.fixture
async def chromium() -> AsyncIterator[Any]:
    async with launched_chromium() as browser:
        yield browser


@pytest.fixture
async def dashboard(make_fleet: Any) -> AsyncIterator[tuple[Fleet, str]]:
    """A fleet of two real nodes and its app over HTTP at 127.0.0.1:<port>/mitigation (uvicorn here)."""
    fleet = await make_fleet(initial_nodes=2)
    port = free_port()
    outer = Starlette(routes=[Mount(PREFIX, app=fleet.app)])
    server = uvicorn.Server(uvicorn.Config(outer, host="127.0.0.1", port=port, lifespan="off", log_level="error"))
    task = asyncio.create_task(server.serve())
    await eventually(lambda: server.started, timeout=5, what="uvicorn started")
    yield fleet, f"http://127.0.0.1:{port}{PREFIX}"
    server.should_exit = True
    await task


@contextlib.asynccontextmanager
async def signed_in(browser: Any, base: str) -> AsyncIterator[Tab]:
    """A fresh tab signed in with the management key; no script error or CSP refusal happened in it."""
    tab = await open_tab(browser)
    try:
        page = tab.page
        await page.goto(base + "/")
        await expect(page.locator("#login-form")).to_be_visible()
        await page.fill("#api-key", API_KEY)
        await page.click("#login-form button[type=submit]")
        await expect(page).to_have_url(re.compile(r"#/fleet$"))
        yield tab
        assert tab.problems == []
    finally:
        await tab.page.context.close()


async def test_the_page_and_its_modules_are_served_under_a_strict_policy(dashboard):
    _, base = dashboard
    async with httpx.AsyncClient(base_url=base, trust_env=False) as http:
        page = await http.get("/")  # the page itself needs no key; every route it calls does
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        csp = page.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page.text, re.S)
        assert scripts == [(f' type="module" src="{PREFIX}/static/app.js"', "")]
        assert not re.search(r"\son\w+=|\sstyle=|<style", page.text)
        assert await served_modules(http, csp) == {
            "app.js",
            "api.js",
            "views.js",
            "dom.js",
        }  # dom.js: the platform's shared module
        for name in ("nope.js", "index.html", "..%2Fapp.py"):
            missing = await http.get(f"/static/{name}")
            assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found", name
        assert (await http.get("/api/v1/nodes")).status_code == 401


async def test_a_wrong_key_is_refused_and_the_page_stays_signed_out(dashboard, chromium):
    _, base = dashboard
    tab = await open_tab(chromium)
    try:
        await tab.page.goto(base + "/")
        await tab.page.fill("#api-key", "x" * 48)
        await tab.page.click("#login-form button[type=submit]")
        await expect(tab.page.locator("#login-error")).to_contain_text("HTTP 403")
        assert await tab.page.locator("#nav").is_hidden()
        await screenshot(tab, "mitigation-login")
    finally:
        await tab.page.context.close()


async def test_the_fleet_view_lists_the_live_nodes_with_mode_and_load(dashboard, chromium):
    fleet, base = dashboard
    async with signed_in(chromium, base) as tab:
        rows = tab.page.locator("#view-fleet tbody tr")
        await expect(rows).to_have_count(2)
        for node_id in ("node-1", "node-2"):
            row = rows.filter(has_text=node_id)
            await expect(row).to_contain_text("healthy")
            await expect(row).to_contain_text("l7")
            await expect(row).to_contain_text(fleet.node(node_id).address)
            await expect(row.locator(".load")).to_have_text(re.compile(r"^\d+\.\d %$"))
        await screenshot(tab, "mitigation-fleet")


async def test_a_ban_made_through_the_api_shows_and_its_lift_button_lifts_it(dashboard, chromium):
    fleet, base = dashboard
    url = f"http://{fleet.node().address}/"
    ban = {"ip": "127.0.0.77", "reason": HOSTILE, "duration_seconds": 600}
    assert (await fleet.client.post("/api/v1/blacklist", json=ban)).status_code == 201
    assert await get(url, "127.0.0.77") == 0  # refused by HAProxy at connection time
    async with signed_in(chromium, base) as tab:
        page = tab.page
        await page.goto(base + "/#/bans")
        row = page.locator("#view-bans tbody tr", has_text="127.0.0.77")
        await expect(row).to_contain_text("fleet")
        await expect(row.locator("td").nth(1)).to_have_text(HOSTILE)  # the markup shown as text
        assert await page.evaluate("window.__xss") is None
        await screenshot(tab, "mitigation-bans")
        await row.locator("button.lift").click()
        await expect(tab.notice()).to_contain_text("ban on 127.0.0.77 lifted")
        await expect(page.locator("#view-bans tbody tr", has_text="127.0.0.77")).to_have_count(0)
    listed = (await fleet.client.get("/api/v1/blacklist")).json()["entries"]
    assert "127.0.0.77" not in [e["ip"] for e in listed]
    assert await get(url, "127.0.0.77") == 200  # HAProxy serves the source again


async def test_threats_rules_and_policy_views_show_what_the_fleet_enforces(dashboard, chromium):
    fleet, base = dashboard
    url = f"http://{fleet.node().address}"
    for _ in range(3):
        assert await get(url + "/?q=%3Cscript%3Ealert(1)%3C/script%3E", "127.0.0.66") == 403

    async def counted() -> bool:  # the WAF hits reach the node's threat book from HAProxy's log stream
        top = (await fleet.fleet.threats())["top_attackers"]
        return any(a["ip"] == "127.0.0.66" and a["attacks"] >= 3 for a in top)

    await eventually(counted, what="the WAF hits counted")
    rule = await fleet.client.post("/api/v1/rules", json={"pattern": "dashboard-evil-[0-9]+", "action": "block"})
    assert rule.status_code == 201
    policy = {"name": "dash", "rules": [{"type": "rate_limit", "value": 25}]}
    assert (await fleet.client.post("/api/v1/policy", json=policy)).status_code == 200
    async with signed_in(chromium, base) as tab:
        page = tab.page
        await page.goto(base + "/#/threats")
        await expect(page.locator("#view-threats tbody tr", has_text="127.0.0.66")).to_contain_text("3")
        await expect(page.locator("#view-threats tbody tr", has_text="waf")).to_contain_text("3")
        await screenshot(tab, "mitigation-threats")
        await page.goto(base + "/#/rules")
        await expect(page.locator("#view-rules tbody tr", has_text=rule.json()["id"])).to_contain_text(
            "dashboard-evil-[0-9]+"
        )
        await screenshot(tab, "mitigation-rules")
        await page.goto(base + "/#/policy")
        await expect(page.locator("#view-policy tbody tr", has_text="Policy")).to_contain_text("dash")
        await expect(page.locator("#view-policy tbody tr", has_text="Rate limit")).to_contain_text("25 requests/s")
        await expect(page.locator("#view-policy tbody tr", has_text="WAF")).to_contain_text("HAProxy rules")
        await screenshot(tab, "mitigation-policy")
