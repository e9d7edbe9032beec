"""The web UI story in headless Chromium, against uvicorn with pve-sim behind it."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from tests.conftest import ROOT, free_port, in_ci
from tests.deployments.lxc.simenv import API_KEY, SimEnv
from tests.polling import eventually_sync

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
pytestmark = pytest.mark.realserver
SCREENSHOTS = ROOT / "var" / "screenshots"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, SimEnv]]:
    if not os.path.exists(CHROMIUM):
        message = f"{CHROMIUM} missing (scripts/system-deps.sh installs the chromium package)"
        pytest.fail(message) if in_ci() else pytest.skip(message)
    from deployments.lxc.app import create_app

    sim = SimEnv(tmp_path / "sim")
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(sim.config(tmp_path)), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    eventually_sync(
        lambda: httpx.get(base + "/api/v1/health").status_code == 200,
        timeout=10,
        what="the API answered /health",
        ignore=(httpx.HTTPError,),
    )
    yield base, sim
    server.should_exit = True
    thread.join(10)
    sim.stop()


def test_ui_headers_have_no_inline_script(served):
    base, _ = served
    page = httpx.get(base + "/")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
    assert '<script src="/static/app.js" defer></script>' in page.text
    assert page.text.count("<script") == 1 and "onclick" not in page.text
    js = httpx.get(base + "/static/app.js").text
    assert "innerHTML" not in js and "textContent" in js


def _signed_in(pw: Any, base: str) -> tuple[Any, Any, list[str]]:
    """Chromium on the page with the API key saved and the templates loaded; the page's errors."""
    from playwright.sync_api import expect

    browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(base + "/")
    page.fill("#api-key", API_KEY)
    page.click("#save-key")
    # the first listing opens the SSH pool to the simulated host: patience for a loaded machine
    expect(page.locator("#create-image option")).to_have_count(3, timeout=30_000)
    return browser, page, errors


def test_ui_story(served):
    from playwright.sync_api import expect, sync_playwright

    base, sim = served
    with sync_playwright() as pw:
        browser, page, errors = _signed_in(pw, base)
        page.select_option("#create-image", "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst")
        page.fill("#create-count", "2")
        page.fill("#create-hostname", "web")
        page.click("#btn-create")
        expect(page.locator("#instances tbody tr")).to_have_count(2, timeout=30_000)
        assert page.text_content("#result-status").startswith("Create")
        assert "HTTP 200" in page.text_content("#result-status")
        assert "Instance 100 created and started." in page.text_content("#result")
        rows = page.locator("#instances tbody tr")
        assert rows.count() == 2 and "running" in rows.nth(0).text_content()

        def run_on_selection(button: str, label: str) -> str:
            for box in page.locator("#instances tbody input[type=checkbox]").all():
                box.check()
            page.click(button)
            expect(page.locator("#result-status")).to_contain_text(re.compile(rf"^{label}.*HTTP"))
            return page.text_content("#result-status")

        assert "HTTP 200" in run_on_selection("#btn-stop", "stop")
        expect(page.locator("#instances tbody")).to_contain_text("stopped")
        assert "HTTP 200" in run_on_selection("#btn-start", "start")
        page.fill("#scale-memory", "1024")
        assert "HTTP 200" in run_on_selection("#btn-scale", "Scale")
        assert sim.model.containers["101"]["config"]["memory"] == 1024
        page.fill("#snapshot-name", "before-upgrade")
        assert "HTTP 200" in run_on_selection("#btn-snapshot", "Snapshots")
        assert "before-upgrade" in sim.model.containers["100"]["snapshots"]
        assert "HTTP 200" in run_on_selection("#btn-backup", "Backups")
        assert "vzdump-lxc-101-" in page.text_content("#result")

        page.fill("#exec-vmid", "100")
        page.fill("#exec-command", "hostname")
        page.click("#btn-exec")
        expect(page.locator("#result-status")).to_have_text("Exec in 100 \u2192 HTTP 200")
        assert page.text_content("#result") == '{\n  "output": "web-100"\n}'

        sent = len(sim.commands())
        page.fill("#exec-command", "hostname; reboot")
        page.click("#btn-exec")
        expect(page.locator("#result-status")).to_contain_text("HTTP 400")
        assert "forbidden characters" in page.text_content("#result-summary")
        assert len(sim.commands()) == sent

        sim.model.containers["101"]["config"]["hostname"] = '<img src=x onerror="window.__xss=1">'
        page.click("#btn-list")
        expect(page.locator("#instances tbody")).to_contain_text("<img")
        assert page.evaluate("window.__xss") is None
        assert page.locator("#instances img").count() == 0
        assert errors == []
        browser.close()


def test_ui_lists_running_jobs_with_their_progress_and_cancels_one(served):
    from playwright.sync_api import expect, sync_playwright

    base, sim = served
    with sync_playwright() as pw:
        browser, page, errors = _signed_in(pw, base)
        page.fill("#create-count", "2")
        page.click("#btn-create")
        expect(page.locator("#instances tbody tr")).to_have_count(2, timeout=30_000)

        sim.slow_down(30.0)  # each vzdump holds its container for 30 s: long enough to watch and cancel
        for box in page.locator("#instances tbody input[type=checkbox]").all():
            box.check()
        page.click("#btn-backup-job")
        expect(page.locator("#result-status")).to_have_text("Backup jobs \u2192 HTTP 202")
        rows = page.locator("#jobs tbody tr")
        expect(rows).to_have_count(2)
        expect(page.locator("#jobs-state")).to_have_text("2 running")
        for n in range(2):
            expect(rows.nth(n).locator("td").nth(0)).to_have_text("backup")
            expect(rows.nth(n).locator("td").nth(2)).to_have_text("running")
            # the table reads the jobs again while they run: the newest output line shows up
            expect(rows.nth(n).locator("td.progress")).to_contain_text("INFO: ", timeout=20_000)
        targets = {rows.nth(n).locator("td").nth(1).text_content() for n in range(2)}
        assert targets == {"CT 100 on eu-south-1/az1", "CT 101 on eu-south-1/az1"}
        assert page.locator("#jobs button.cancel-job").count() == 2
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#jobs-section").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "lxc-jobs.png"), full_page=True)

        page.locator("#jobs button.cancel-job").first.click()
        expect(page.locator("#jobs tbody td.state-cancelled")).to_have_count(1, timeout=30_000)
        expect(page.locator("#jobs-state")).to_have_text("1 running")
        assert sim.sim.sim.killed == 1  # the host command really stopped
        assert page.locator("#jobs button.cancel-job").count() == 1
        assert errors == []
        browser.close()
