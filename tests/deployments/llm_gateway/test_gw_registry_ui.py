"""The registry UI (``/ui/registry``) in headless Chromium, against the real app on loopback.

Every action of the page is clicked, and its effect is read back through the API, not from
the page. The page runs under its strict CSP; the test records every CSP violation the
browser reports and requires none (and checks that the recorder does see one).
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from deployments.llm_gateway.routes.ui import CSP
from deployments.llm_gateway.sessions import COOKIE
from tests.browser import ARGS, CHROMIUM, require_chromium
from tests.deployments.llm_gateway.conftest import (
    ADMIN_KEY,
    INFER_KEY,
    base_config,
    chat,
    identity_config,
    start_double,
)
from tests.polling import eventually

pytestmark = pytest.mark.realserver
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
XSS_NAME = '<img src=x onerror="window.__xss=1">'

# Runs before the page's own script: records CSP violations and console errors.
RECORDER = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push({directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample});
});
"""


def entry(name: str, base_url: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "base_url": base_url, "provider": "openai_compat", "priority": 0, **extra}


async def test_ui_responses_carry_the_strict_csp_and_no_inline_code(serve, up1, tmp_path, auth_env):
    gw = await serve(base_config(tmp_path, {"a": {"base_url": up1.base_url, "models": ["m"]}}))
    async with httpx.AsyncClient(base_url=gw.url, trust_env=False) as c:
        for path, media in (
            ("/ui/registry", "text/html"),
            ("/ui/registry.js", "text/javascript"),
            ("/ui/registry.css", "text/css"),
        ):
            r = await c.get(path)
            assert r.status_code == 200 and r.headers["content-type"].startswith(media)
            assert r.headers["content-security-policy"] == (
                "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
                "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
            )
            assert r.headers["x-content-type-options"] == "nosniff"
            assert r.headers["referrer-policy"] == "no-referrer" and r.headers["cache-control"] == "no-store"
        page = (await c.get("/ui/registry")).text
        js = (await c.get("/ui/registry.js")).text
    assert re.findall(r"<script[^>]*>", page) == ['<script src="registry.js" defer>']
    assert "<style" not in page and " style=" not in page and not re.search(r"\son[a-z]+=", page)
    for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "new Function", "document.write"):
        assert banned not in js
    assert "textContent" in js


async def test_every_action_in_chromium(serve, up1, up2, issuer, tmp_path, auth_env):
    require_chromium()
    from playwright.async_api import async_playwright, expect

    flaky = start_double("ui-flaky")
    try:
        cfg = base_config(
            tmp_path,
            {"a": {"base_url": up1.base_url, "models": ["m"]}},
            registry={"refresh_interval": 0.1},
            identity=identity_config(issuer),
        )
        gw = await serve(cfg)
        api = httpx.AsyncClient(base_url=gw.url, headers=ADMIN, trust_env=False, timeout=30)
        for body in (
            entry("alpha", up2.base_url, models=["am"]),
            entry("beta", "http://127.0.0.1:9/v1", priority=0),
            entry("flaky", flaky.base_url, models=["fm"], priority=5),
            entry(XSS_NAME, up2.base_url, priority=9),
        ):
            assert (await api.post("/api/v1/registry", json=body)).status_code == 201, body

        async def registry() -> dict[str, dict[str, Any]]:
            return {e["id"]: e for e in (await api.get("/api/v1/registry")).json()["data"]}

        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            context = await browser.new_context()
            await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=gw.url)
            await context.add_init_script(RECORDER)
            page = await context.new_page()
            errors: list[str] = []
            console: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
            try:
                response = await page.goto(gw.url + "/ui/registry")
                assert response is not None and response.headers["content-security-policy"] == CSP

                # signed out: the sign-in form, with the configured provider offered
                await expect(page.locator("#signin")).to_be_visible()
                await expect(page.locator("#registry")).to_be_hidden()
                await expect(page.locator("#providers a")).to_have_text("Sign in with local")
                await page.fill("#admin-key", INFER_KEY)
                await page.click("#key-submit")
                await expect(page.locator("#status")).to_contain_text("401 invalid_api_key")
                await page.fill("#admin-key", ADMIN_KEY)
                await page.click("#key-submit")
                await expect(page.locator("#registry")).to_be_visible()
                await expect(page.locator("#who")).to_contain_text("(admin)")
                cookie = next(c for c in await context.cookies() if c["name"] == COOKIE)
                assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
                assert await page.evaluate("document.cookie") == ""  # HttpOnly: invisible to scripts
                rows = page.locator("#entries tbody tr")
                await expect(rows).to_have_count(5)  # the four entries and endpoint "a" of the config file

                def row(entry_id: str) -> Any:
                    return page.locator(f'#entries tbody tr[data-id="{entry_id}"]')

                # the configured endpoint: shown read-only, with no button that would change it
                await expect(row("a").locator("td.status")).to_have_text("Config (read-only)")
                assert await row("a").get_attribute("data-read-only") == "true"
                actions = await row("a").locator("button").evaluate_all("(bs) => bs.map((b) => b.dataset.action)")
                assert actions == ["copy", "inspect", "reset"]

                async def click(entry_id: str, action: str) -> None:
                    await row(entry_id).locator(f'button[data-action="{action}"]').click()

                # escaped: the name is shown as text and never runs
                xss_id = next(i for i in await registry() if i not in {"alpha", "beta", "flaky"})
                await expect(row(xss_id).locator("td").first).to_have_text(XSS_NAME)
                assert await page.evaluate("window.__xss") is None
                assert await page.locator("#entries img").count() == 0

                # copy: a curl command in the clipboard, with a placeholder and never a real key
                await click("alpha", "copy")
                await expect(page.locator("#status")).to_have_text("curl command for alpha copied")
                copied = await page.evaluate("navigator.clipboard.readText()")
                assert copied.startswith(f"curl -s '{gw.url}/v1/chat/completions'")
                assert '"model":"am"' in copied and "$LLM_PROXY_API_KEY" in copied
                assert ADMIN_KEY not in copied and INFER_KEY not in copied

                # test: the probe route; FOUND becomes verified (Live) with a latency
                assert (await registry())["alpha"]["latency_ms"] is None
                await click("alpha", "test")
                await expect(page.locator("#status")).to_contain_text("Test alpha: answered in")
                probed = (await registry())["alpha"]
                assert probed["status"] == "verified" and probed["latency_ms"] is not None
                await expect(row("alpha").locator("td.status")).to_have_text("Live")

                # a failed test says why, and the entry keeps its status
                await click("beta", "test")
                await expect(page.locator("#status")).to_contain_text("Test beta failed: HTTP 502 probe_failed")
                failed = (await registry())["beta"]
                assert failed["status"] == "FOUND" and failed["last_error"]

                # inspect: the details view
                await click("alpha", "inspect")
                await expect(page.locator("#details")).to_be_visible()
                await expect(page.locator("#details-id")).to_have_text("alpha")
                await expect(page.locator("#details-list")).to_contain_text(up2.base_url)
                await page.click("#details-close")
                await expect(page.locator("#details")).to_be_hidden()

                # reset breaker: open flaky's breaker with real failures, then reset it from the page
                flaky.faults({"status": 500, "times": -1})
                await api.post("/api/v1/registry/flaky/toggle")
                async with gw.client() as c:
                    for _ in range(3):
                        await c.post("/v1/chat/completions", json=chat("fm"))
                assert (await registry())["flaky"]["circuit_state"] == "OPEN"
                await page.click("#refresh")
                await expect(row("flaky").locator("td.breaker")).to_have_text("OPEN")
                await click("flaky", "reset")
                await expect(row("flaky").locator("td.breaker")).to_have_text("CLOSED")
                assert (await registry())["flaky"]["circuit_state"] == "CLOSED"

                # toggle: verified → IGNORED and back
                await click("alpha", "toggle")
                await expect(row("alpha").locator("td.status")).to_have_text("IGNORED")
                assert (await registry())["alpha"]["status"] == "IGNORED"
                await click("alpha", "toggle")
                await expect(row("alpha").locator("td.status")).to_have_text("Live")
                assert (await registry())["alpha"]["status"] == "verified"

                # priority: raise (tried earlier: one lower) and lower (one higher)
                await click("alpha", "raise")
                await expect(row("alpha").locator("td.priority")).to_have_text("-1")
                assert (await registry())["alpha"]["priority"] == -1
                await click("beta", "lower")
                await expect(row("beta").locator("td.priority")).to_have_text("1")
                assert (await registry())["beta"]["priority"] == 1

                # delete: nothing happens before the confirmation; cancel keeps it; confirm removes it
                await click("beta", "delete")
                await expect(row("beta").locator('button[data-action="confirm-delete"]')).to_be_visible()
                assert "beta" in await registry()
                await click("beta", "cancel-delete")
                await expect(row("beta").locator('button[data-action="delete"]')).to_be_visible()
                assert "beta" in await registry()
                await click("beta", "delete")
                await click("beta", "confirm-delete")
                await expect(row("beta")).to_have_count(0)
                assert "beta" not in await registry()

                # the page refreshes on its own every 30 s
                loads = int(await page.get_attribute("body", "data-loads") or 0)
                assert (await api.post("/api/v1/registry", json=entry("gamma", up2.base_url))).status_code == 201
                await expect(row("gamma")).to_have_count(1, timeout=45_000)
                assert int(await page.get_attribute("body", "data-loads") or 0) == loads + 1

                # sign out: the session is revoked and the page asks to sign in again
                await page.click("#logout")
                await expect(page.locator("#signin")).to_be_visible()
                status = await page.evaluate("fetch('../api/v1/registry').then((r) => r.status)")
                assert status == 401

                # sign in through the OIDC provider: the real code flow, back to the page
                issuer.user = {"sub": "ada-1", "email": "ada@example.test", "email_verified": True}
                await page.click("#providers a")
                await page.wait_for_url(gw.url + "/ui/registry")
                await expect(page.locator("#who")).to_have_text("oidc:local:ada-1 (admin)")
                await expect(rows).to_have_count(5)
                await click("gamma", "raise")
                await expect(row("gamma").locator("td.priority")).to_have_text("-1")
                assert (await registry())["gamma"]["priority"] == -1

                # no CSP violation in the whole run, and no script error
                assert await page.evaluate("window.__csp") == []
                assert errors == [] and not [m for m in console if "Content Security Policy" in m]
                # the recorder does see one: an inline script is refused by the page's CSP
                await page.evaluate(
                    "() => { const s = document.createElement('script'); s.textContent = 'window.__ran = 1';"
                    " document.body.append(s); }"
                )
                seen = await eventually(lambda: page.evaluate("window.__csp"), what="the CSP violation recorded")
                assert seen and seen[0]["directive"].startswith("script-src")
                assert await page.evaluate("window.__ran") is None
            finally:
                await browser.close()
        await api.aclose()
    finally:
        flaky.stop()
        if flaky.proc.stderr is not None:
            flaky.proc.stderr.close()


async def test_a_viewer_gets_no_registry_page(serve, up1, issuer, tmp_path, auth_env):
    require_chromium()
    from playwright.async_api import async_playwright, expect

    gw = await serve(base_config(tmp_path, {"a": {"base_url": up1.base_url}}, identity=identity_config(issuer)))
    issuer.user = {"sub": "vic-1", "email": "vic@example.test"}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = await browser.new_page()
            await page.goto(gw.url + "/ui/registry")
            await page.click("#providers a")
            await page.wait_for_url(gw.url + "/ui/registry")
            await expect(page.locator("#status")).to_contain_text("with role viewer: this page needs admin")
            await expect(page.locator("#registry")).to_be_hidden()
        finally:
            await browser.close()
