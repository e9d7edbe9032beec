"""The page at `/autoscale/` in headless Chromium: per-container timelines of usage, allocation and decisions.

The app runs under uvicorn with a real monitor and scaling model over pve-sim
(SSH on loopback): the monitor samples, the model decides and applies through
the same API, and the page draws what `GET /api/v1/timelines` returns.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import cast

import httpx
import pytest
import uvicorn

from actors.autoscale.monitor import MonitorActor
from actors.autoscale.scaler import ScalerActor
from deployments.autoscale.app import create_app
from deployments.autoscale.state import AutoscaleState
from rayfleet.ssh import SSHHost
from rayfleet.state import ActorHandle, LocalActorHandle, local_state
from sims.pve.load import Curve, LoadModel, ManualClock
from sims.pve.scenario import day_scenario, install
from tests.browser import ARGS, CHROMIUM, require_chromium
from tests.conftest import free_port
from tests.deployments.autoscale.conftest import API_KEY, make_config
from tests.polling import eventually
from tests.sims.pve.simenv import SimEnv

HOSTILE_TIER = '<img src=x onerror="window.__xss=1">'
FAST = {"window_seconds": 5, "trend_seconds": 3, "horizon_seconds": 1, "memory_window_seconds": 5}


@pytest.fixture
def sim(tmp_path: Path):
    env = SimEnv(tmp_path / "sim")
    install(env.model, {v: c for v, c in day_scenario(7)["pve1"].items() if v in ("101", "103")})
    clock = ManualClock(0.0)
    curves = {
        "101": Curve.from_dict({"kind": "steady", "cpu": 3.5, "mem": 400, "noise": 0}),
        "103": Curve.from_dict({"kind": "steady", "cpu": 0.2, "mem": 200, "noise": 0}),
    }
    env.sim.host.load_file.model = LoadModel(curves, clock)
    yield env, clock
    env.stop()


async def test_the_page_draws_each_containers_usage_allocation_and_decisions(sim, tmp_path, monkeypatch):
    require_chromium()
    from playwright.async_api import async_playwright, expect

    env, clock = sim
    monkeypatch.setenv("AUTOSCALE_API_KEY", API_KEY)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with local_state():
        config = make_config(env)
        state = AutoscaleState.from_ray(config, background=False)
        ssh = SSHHost("127.0.0.1", env.port, key_file=str(env.client_key), known_hosts=str(env.known_hosts))
        monitor = MonitorActor("pve1", ssh)
        scaler = ScalerActor(
            {"pve1": cast(ActorHandle[MonitorActor], LocalActorHandle(monitor))},
            {"pve1": (32, 32768)},
            base,
            "AUTOSCALE_API_KEY",
            settings=FAST,
            nodes={"pve1": env.model.node},
            tiers={"101": {"name": HOSTILE_TIER, "max_cores": 6, "priority": 1}},
        )
        state.scaler = cast(ActorHandle[ScalerActor], LocalActorHandle(scaler))
        server = uvicorn.Server(
            uvicorn.Config(create_app(config, state), host="127.0.0.1", port=port, log_level="warning", lifespan="off")
        )
        task = asyncio.create_task(server.serve())
        try:
            await eventually(lambda: server.started, timeout=10, what="the API server started")
            for _ in range(5):
                clock.t += 1
                await monitor.cycle()
                await scaler.cycle()
            async with httpx.AsyncClient(base_url=base) as plain:
                page_response = await plain.get("/")
                script = (await plain.get("/static/app.js")).text
            assert "script-src 'self'" in page_response.headers["content-security-policy"]
            assert page_response.text.count("<script") == 1 and "onclick" not in page_response.text
            assert "innerHTML" not in script and "textContent" in script

            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                page = await browser.new_page(viewport={"width": 1100, "height": 1000})
                errors: list[str] = []
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                await page.goto(base + "/")
                await page.click("#load")  # no key yet: the API's refusal is shown, not a blank page
                await expect(page.locator("#status")).to_have_text("HTTP 401: Missing API key")

                await page.fill("#api-key", API_KEY)
                await page.click("#save-key")
                cards = page.locator("article.container")
                await expect(cards).to_have_count(2)
                hot = page.locator('article[data-vmid="101"]')
                await expect(hot.locator("h2")).to_have_text(f"CT 101 on pve1 \u00b7 tier {HOSTILE_TIER}")
                await expect(hot.locator('[data-resource="cpu"] polyline.used')).to_have_count(1)
                await expect(hot.locator('[data-resource="cpu"] polyline.alloc')).to_have_count(1)
                applied = hot.locator('[data-resource="cpu"] circle[data-outcome="applied"]')
                assert await applied.count() >= 1
                assert "scale up" in (await applied.first.locator("title").text_content() or "")
                assert await hot.locator("td.outcome.applied").count() >= 1
                cold = page.locator('article[data-vmid="103"]')
                await expect(cold.locator("h2")).to_have_text("CT 103 on pve1 \u00b7 tier default")

                await page.fill("#filter-id", "١٠١")
                await page.click("#load")
                await expect(page.locator("#status")).to_contain_text("HTTP 400: Validation failed")
                await page.fill("#filter-id", "101")
                await page.click("#load")
                await expect(cards).to_have_count(1)

                assert await page.evaluate("window.__xss") is None
                assert await page.locator("#containers img").count() == 0
                shot = Path(os.environ.get("AUTOSCALE_PAGE_SCREENSHOT", str(tmp_path / "autoscale-page.png")))
                await page.fill("#filter-id", "")
                await page.click("#load")
                await expect(cards).to_have_count(2)
                await page.screenshot(path=str(shot), full_page=True)
                assert shot.stat().st_size > 10_000
                assert errors == []
                await browser.close()
        finally:
            server.should_exit = True
            await task
    assert env.model.containers["101"]["config"]["cores"] > 2  # the decisions drawn were really applied
