"""The admin UI at `/webfilter/`, in headless Chromium (Debian's chromium through Playwright), served by the
web filter itself under the route prefix Serve gives it (a Starlette `Mount`, as Serve sets `root_path`),
with the real Squid and dnsmasq behind: sign in, add a domain to the blacklist, the proxy refuses it and
the dashboard's live log shows the row from the WebSocket stream; list import, the settings with the
security score, the WAF toggles and rule tester, the TLS splice list and categories, the analytics, DNS
detection, client groups, maintenance (backup, restore, cleanup, masking client addresses, export, lockouts),
the token refresh and signing out each do what the API says. Markup from the server (an entry's description, a
logged URL) is shown as text, and any script error or Content-Security-Policy refusal fails the test. Each
page is saved as a screenshot under var/screenshots/ (webfilter-*.png) once the test has checked what it
shows."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from aiohttp import web
from starlette.applications import Starlette
from starlette.routing import Mount

from deployments.webfilter import ui
from tests.browser import Tab, expect, launched_chromium, open_tab, served_modules
from tests.browser import screenshot as save_screenshot
from tests.conftest import free_port
from tests.deployments.webfilter.conftest import (
    ADMIN_PASSWORD,
    Origin,
    Receiver,
    Service,
    subscribing_service,
)
from tests.polling import eventually

pytestmark = pytest.mark.realserver

PREFIX = "/webfilter"
SESSION_KEY = "webfilter.session"
# a description that is HTML and script if anything parsed it as markup
HOSTILE = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script><b>bold</b>'
XSS_URL_PATH = "/waf?q=%3Cscript%3Ealert(1)%3C/script%3E"  # what the XSS category refuses


@pytest.fixture(scope="module")
async def wf(origin: Origin) -> AsyncIterator[Service]:
    """The web filter (real Squid and dnsmasq) with subscriptions allowed to this test's list server."""
    async for service in subscribing_service(origin):
        yield service


@pytest.fixture(scope="module")
async def ui_base(wf: Service) -> AsyncIterator[str]:
    """The web filter's app over HTTP at 127.0.0.1:<port>/webfilter (uvicorn in this process)."""
    port = free_port()
    outer = Starlette(routes=[Mount(PREFIX, app=wf.app)])
    server = uvicorn.Server(uvicorn.Config(outer, host="127.0.0.1", port=port, lifespan="off", log_level="error"))
    task = asyncio.create_task(server.serve())
    await eventually(lambda: server.started, timeout=5, what="uvicorn started")
    yield f"http://127.0.0.1:{port}{PREFIX}"
    server.should_exit = True
    await task


@pytest.fixture
async def restored(wf: Service) -> AsyncIterator[None]:
    """The policy (settings, WAF toggles, lists) as it was before the test, put back after it."""
    before = (await wf.api.get("/api/maintenance/backup-config")).json()["data"]
    yield
    r = await wf.api.post("/api/maintenance/restore-config", json={"config": before})
    assert r.status_code == 200, r.text


@pytest.fixture(scope="module")
async def chromium() -> AsyncIterator[Any]:
    async with launched_chromium() as browser:
        yield browser


async def sign_in(tab: Tab, base: str, password: str = ADMIN_PASSWORD) -> None:
    page = tab.page
    await page.goto(base + "/")
    await expect(page).to_have_url(re.compile(r"#/login$"))
    await page.fill("#login-user", "admin")
    await page.fill("#login-password", password)
    await page.click("#login-form button[type=submit]")
    if password == ADMIN_PASSWORD:
        await expect(page).to_have_url(re.compile(r"#/dashboard$"))


@contextlib.asynccontextmanager
async def browsing(browser: Any, base: str, where: str | None = None) -> AsyncIterator[Tab]:
    """A fresh tab, signed in and at `where` (not signed in when None); once the test is done with it, no
    script error and no Content-Security-Policy refusal happened in it."""
    tab = await open_tab(browser)
    try:
        if where is not None:
            await sign_in(tab, base)
            await tab.page.goto(base + "/" + where)
        yield tab
        assert tab.problems == []
    finally:
        await tab.page.context.close()


async def screenshot(tab: Tab, name: str) -> Path:
    return await save_screenshot(tab, f"webfilter-{name}")


async def raw_get(proxy_port: int, url: str) -> bytes:
    """GET `url` through Squid exactly as written (an HTTP client would percent-encode `<`, `>` and quotes)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    writer.write(f"GET {url} HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def cells(row: Any) -> list[str]:
    return [t.strip() for t in await row.locator("td").all_text_contents()]


async def add_with_markup(tab: Tab, entry: str) -> Any:
    """Add `entry` with the markup description HOSTILE through the list card of the page shown; its row, where
    the description is text, character for character (no element made, nothing run)."""
    page = tab.page
    await page.fill("#entry-value", entry)
    await page.fill("#entry-description", HOSTILE)
    await page.click("#add-form button[type=submit]")
    await expect(tab.notice()).to_have_text(f"added {entry}")
    row = page.locator("#entries tbody tr", has_text=entry)
    await expect(row).to_have_count(1)
    assert (await cells(row))[1:3] == [entry, HOSTILE]
    assert await page.locator("#entries img, #entries script, #entries b").count() == 0
    assert await page.evaluate("() => window.__xss") is None
    return row


async def test_the_page_and_its_modules_are_served_under_a_strict_policy(ui_base):
    async with httpx.AsyncClient(base_url=ui_base, trust_env=False) as http:
        page = await http.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        csp = page.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "connect-src 'self'" in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "frame-ancestors 'none'" in csp
        assert page.headers["x-content-type-options"] == "nosniff"
        # one script, a module from the package, under the prefix; no inline script, handler or style
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page.text, re.S)
        assert scripts == [(f' type="module" src="{PREFIX}/static/app.js"', "")]
        assert not re.search(r"\son\w+=|\sstyle=|<style", page.text)
        assert f'href="{PREFIX}/static/app.css"' in page.text and f'data-prefix="{PREFIX}"' in page.text

        # every module the page loads, followed through its imports, is served with the same policy
        seen = await served_modules(http, csp)
        assert seen == {n for n in ui.ASSETS if n.endswith(".js")}  # no module left unused
        assert {"login.js", "dashboard.js", "lists.js", "settings.js", "tls.js", "waf.js", "maintenance.js"} <= seen
        css = await http.get("/static/app.css")
        assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")

        # only the package's files: anything else is the API's 404
        for name in ("nope.js", "index.html", "..%2Fui.py", "%2E%2E%2Fapp.py"):
            missing = await http.get(f"/static/{name}")
            assert missing.status_code == 404 and missing.json()["status"] == "error", name


async def test_a_blacklisted_domain_is_refused_and_the_live_log_shows_the_row(wf, ui_base, chromium, restored):
    probe = f"/ui-refused-{uuid.uuid4().hex[:8]}"
    url = wf.url("other.test", probe)
    assert (await wf.fetch(wf.url("other.test", "/ui-before"))).status_code == 200  # allowed until listed
    async with browsing(chromium, ui_base) as tab:
        page = tab.page
        # a wrong password is refused on the page; the right one signs in
        await sign_in(tab, ui_base, "Wrong-password-1!")
        await expect(page.locator("#login-error")).to_contain_text("HTTP 401")
        await expect(page.locator("#nav")).to_be_hidden()
        await screenshot(tab, "login")
        await sign_in(tab, ui_base)
        await expect(page.locator("#live-state")).to_have_text("live")
        stored, local = await page.evaluate(f"() => [sessionStorage.getItem('{SESSION_KEY}'), localStorage.length]")
        session = json.loads(stored)
        assert session["username"] == "admin" and local == 0
        check = await wf.api.get("/api/settings", headers={"Authorization": "Bearer " + session["access_token"]})
        assert check.status_code == 200  # the token the page keeps is the API's own

        # Lists: add the domain with a description that looks like markup
        await page.click("#nav a[data-page=lists]")
        await expect(page.locator(".tabs a.active")).to_have_text("Domain blacklist")
        await add_with_markup(tab, "other.test")
        listed = (await wf.api.get("/api/domain-blacklist", params={"search": "other.test"})).json()["data"]
        assert [(e["domain"], e["description"]) for e in listed] == [("other.test", HOSTILE)]
        await screenshot(tab, "lists")

        # Dashboard: the live log is connected before the request is sent
        await page.click("#nav a[data-page=dashboard]")
        await expect(page.locator("#live-state")).to_have_text("live")
        fanout = wf.app.state.component.fanout
        await eventually(lambda: fanout.seq >= 0 and fanout.clients, what="the stream's poller")
        live = page.locator("#live-log tbody tr", has_text=probe)
        assert await live.count() == 0

        refused = await wf.fetch(url)
        assert refused.status_code == 403 and "domain_blacklist" in refused.text

        await expect(live).to_have_count(1, timeout=15_000)  # it came over the WebSocket: no reload happened
        time, client, method, destination, status, outcome, rule = await cells(live)
        assert (client, method, destination, status, outcome, rule) == (
            "127.0.0.1",
            "GET",
            url,
            "403",
            "blocked",
            "domain_blacklist",
        )
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", time)
        assert "blocked" in (await live.get_attribute("class") or "")

        # a URL that is markup (Squid logs it as sent) is shown as text in the live log too
        markup = wf.url("allowed.test", '/ui-raw"><svg/onload=window.__xss=3>')
        assert (await raw_get(wf.proxy_port, markup)).startswith(b"HTTP/1.1 403 ")  # the WAF's XSS category
        shown = page.locator("#live-log tbody tr", has_text="/ui-raw")
        await expect(shown).to_have_count(1, timeout=15_000)
        assert (await cells(shown))[3:] == [markup, "403", "blocked", "waf:XSS"]
        assert await page.locator("#live-log svg").count() == 0
        assert await page.evaluate("() => window.__xss") is None

        # a DNS query our dnsmasq answers arrives in the same live log as a DNS row
        assert await wf.resolve("ui-dns.other.test") == ["0.0.0.0"]
        dns_row = page.locator("#live-log tbody tr", has_text="ui-dns.other.test")
        await expect(dns_row).to_have_count(1, timeout=15_000)
        assert (await cells(dns_row))[1:] == [
            "127.0.0.1",
            "DNS A",
            "ui-dns.other.test",
            "sinkholed",
            "blocked",
            "other.test",
        ]
        assert "dns" in (await dns_row.get_attribute("class") or "")

        # the figures follow the same traffic
        await page.click("#refresh-stats")
        await expect(page.locator("#top-blocked")).to_contain_text("other.test")
        summary = (await wf.api.get("/api/dashboard/summary")).json()["data"]
        await expect(page.locator("#total-blocked")).to_have_text(f"{summary['totals']['blocked']:,}")
        await expect(page.locator("#top-domains")).to_contain_text("other.test")
        await expect(page.locator("#top-clients")).to_contain_text("127.0.0.1")
        await screenshot(tab, "dashboard")


async def test_lists_import_search_and_delete(wf, ui_base, chromium, restored):
    async with browsing(chromium, ui_base, "#/lists/domain-blacklist") as tab:
        page = tab.page
        pasted = "# a comment\n0.0.0.0 imported-one.test\n||imported-two.test^\nnot a domain!\n"
        await page.fill("#import-content", pasted)
        await page.fill("#import-description", "pasted")
        await page.click("#import-form button[type=submit]")
        await expect(page.locator("#import-result")).to_have_text(
            "added 2, already listed 0, invalid 1, bogons dropped 0"
        )
        rows = page.locator("#entries tbody tr")
        await expect(rows).to_have_count(2)
        refused = await wf.fetch(wf.url("imported-one.test", "/ui-imported"))
        assert refused.status_code == 403 and "domain_blacklist" in refused.text

        # the refusal is credited to its entry in the hits card, as the API credits it
        async def credited() -> dict[str, Any] | None:
            hits = (await wf.api.get("/api/domain-blacklist/hits")).json()["data"]["rules"]
            return next((dict(h) for h in hits if h["rule"] == "imported-one.test"), None)

        hit: dict = await eventually(credited, what="the refused request credited to imported-one.test")
        await page.click("#hits-refresh")
        credit = page.locator("#hits tbody tr", has_text="imported-one.test")
        await expect(credit).to_have_count(1)
        assert (await cells(credit))[:4] == ["imported-one.test", "domain-blacklist", str(hit["hits"]), "1"]

        await page.fill("#entry-search", "two")
        await page.click("#entry-search + button")
        await expect(rows).to_have_count(1)
        assert (await cells(rows.first))[1:3] == ["imported-two.test", "pasted"]
        await page.fill("#entry-search", "")
        await page.click("#entry-search + button")
        await expect(page.locator("#pager")).to_have_text("1-2 of 2")

        await page.locator("#entries tbody tr", has_text="imported-one.test").locator("input").check()
        await page.click("#delete-selected")
        await expect(tab.notice()).to_have_text("deleted 1")
        await expect(rows).to_have_count(1)
        await rows.first.locator("button").click()
        await expect(tab.notice()).to_have_text("deleted imported-two.test")
        await expect(page.locator("#entries tbody tr.empty")).to_have_text("no entries")
        assert (await wf.api.get("/api/domain-blacklist")).json()["meta"]["total"] == 0

        # the IP blacklist's import drops bogons; a bad entry typed in is refused with the API's words
        await page.click(".tabs a >> text=IP blacklist")
        await expect(page.locator(".card h2").first).to_have_text("IP blacklist")
        await page.fill("#import-content", "10.0.0.0/8\n192.0.2.7\n8.8.8.0/24\n")
        await page.click("#import-form button[type=submit]")
        await expect(page.locator("#import-result")).to_have_text(
            "added 1, already listed 0, invalid 0, bogons dropped 2"
        )
        await page.fill("#entry-value", "300.1.2.3")
        await page.click("#add-form button[type=submit]")
        await expect(tab.notice()).to_contain_text("(HTTP 400)")
        listed = (await wf.api.get("/api/ip-blacklist")).json()["data"]
        assert [e["ip"] for e in listed] == ["8.8.8.0/24"]

        # import by country: the prefixes come from the ASN API (a local one over HTTP), bogons dropped
        async with asn_api(wf) as asked:
            await page.fill("#geo-countries", "us, fr")
            await page.click("#geo-form button[type=submit]")
            await expect(page.locator("#geo-result")).to_have_text("added 2 (US 1, FR 1), bogons dropped 2")
            assert asked == ["US", "FR"]
            await expect(page.locator("#entries tbody tr", has_text="GeoIP: FR")).to_have_count(1)
            await page.fill("#geo-countries", "USA")
            await page.click("#geo-form button[type=submit]")
            await expect(tab.notice()).to_have_text("countries must be ISO 3166 alpha-2 codes (HTTP 400)")
        listed = (await wf.api.get("/api/ip-blacklist")).json()["data"]
        assert sorted((e["ip"], e["description"]) for e in listed) == [
            ("8.8.4.0/24", "GeoIP: US"),
            ("8.8.8.0/24", "import"),
            ("9.9.9.0/24", "GeoIP: FR"),
        ]


@contextlib.asynccontextmanager
async def asn_api(wf: Service) -> AsyncIterator[list[str]]:
    """An ASN API on loopback (its route and JSON) that the web filter's geo import asks while this runs;
    yields the country codes it was asked for."""
    asked: list[str] = []
    answers = {"US": ["8.8.4.0/24", "10.0.0.0/8"], "FR": ["9.9.9.0/24", "2001:db8::/32"]}

    async def prefixes(request: web.Request) -> web.Response:
        cc = request.match_info["cc"]
        asked.append(cc)
        return web.json_response({"country": cc, "count": len(answers[cc]), "prefixes": answers[cc]})

    receiver = await Receiver([("GET", "/asn/api/v1/country/{cc}/prefixes", prefixes)]).start()
    context = wf.app.state.component
    original = context.config
    context.config = original.model_copy(update={"asn_url": f"http://127.0.0.1:{receiver.port}/asn"})
    try:
        yield asked
    finally:
        context.config = original
        await receiver.stop()


async def test_a_subscription_is_added_refreshed_and_removed_from_the_lists_page(wf, ui_base, chromium, lists):
    lists.body = b"# a hosts file\n0.0.0.0 sub-one.test\n0.0.0.0 sub-two.test\n"
    async with browsing(chromium, ui_base, "#/lists/domain-blacklist") as tab:
        page = tab.page
        await expect(page.locator("#subscriptions tbody tr.empty")).to_have_text("no subscriptions")
        await page.fill("#subscription-url", lists.url("/ui.txt"))
        await page.fill("#subscription-description", HOSTILE)
        await page.click("#subscription-form button[type=submit]")
        await expect(tab.notice()).to_have_text("subscribed: 2 entries")
        row = page.locator("#subscriptions tbody tr").first
        await expect(row.locator("td").nth(3)).to_have_text("HTTP 200")
        assert (await cells(row))[:3] == [lists.url("/ui.txt"), HOSTILE, "2"]  # markup shown as text
        assert await page.evaluate("window.__xss") is None
        refused = await wf.fetch(wf.url("sub-one.test", "/ui-subscribed"))
        assert refused.status_code == 403 and "domain_blacklist" in refused.text

        lists.body += b"0.0.0.0 sub-three.test\n"
        await row.locator("button", has_text="Refresh").click()
        await expect(tab.notice()).to_contain_text("HTTP 200, 3 entries")
        await expect(row.locator("td").nth(2)).to_have_text("3")
        await row.locator("button", has_text="Refresh").click()  # unchanged: the list server answers 304
        await expect(tab.notice()).to_contain_text("not modified, 3 entries")
        await screenshot(tab, "subscriptions")

        await row.locator("button", has_text="Unsubscribe").click()
        await expect(tab.notice()).to_have_text(f"unsubscribed {lists.url('/ui.txt')}")
        await expect(page.locator("#subscriptions tbody tr.empty")).to_have_text("no subscriptions")
        allowed = await wf.fetch(wf.url("sub-one.test", "/ui-unsubscribed"))
        assert allowed.status_code == 200


async def test_an_access_token_refused_is_renewed_once_with_the_refresh_token(ui_base, chromium):
    async with httpx.AsyncClient(base_url=ui_base, trust_env=False) as http:
        pair = (await http.post("/api/auth/login", json={"username": "admin", "password": ADMIN_PASSWORD})).json()
        revoked = await http.post("/api/logout", headers={"Authorization": "Bearer " + pair["access_token"]})
        assert revoked.json()["revoked"] == ["access"]  # the refresh token still works
        async with browsing(chromium, ui_base) as tab:
            page = tab.page
            await page.goto(ui_base + "/")
            stale = {"username": "admin", "access_token": pair["access_token"], "refresh_token": pair["refresh_token"]}
            await page.evaluate(f"(s) => sessionStorage.setItem('{SESSION_KEY}', JSON.stringify(s))", stale)
            await page.goto(ui_base + "/#/settings")
            await expect(page.locator("#score-value")).to_have_text(re.compile(r"^\d+ / 100$"))
            renewed = json.loads(await page.evaluate(f"() => sessionStorage.getItem('{SESSION_KEY}')"))
            assert renewed["access_token"] != pair["access_token"]
            assert renewed["refresh_token"] != pair["refresh_token"]
            again = await http.post("/api/auth/refresh", json={"refresh_token": pair["refresh_token"]})
            assert again.status_code == 401  # the page used it, once


async def test_settings_show_the_score_with_what_each_item_needs_and_apply_an_edit(wf, ui_base, chromium, restored):
    score = (await wf.api.get("/api/security/score")).json()["data"]
    assert sum(i["points"] for i in score["items"] if i["passed"]) == score["score"]
    assert [i["needs"] for i in score["items"] if not i["passed"]] == score["recommendations"]
    assert (await wf.api.get("/api/settings")).json()["data"]["block_direct_ip"] is False
    async with browsing(chromium, ui_base, "#/settings") as tab:
        page = tab.page
        await expect(page.locator("#score-value")).to_have_text(f"{score['score']} / 100")
        rows = page.locator("#score-items tbody tr")
        await expect(rows).to_have_count(len(score["items"]))
        for index, item in enumerate(score["items"]):
            _, points, in_effect, needs = await cells(rows.nth(index))
            assert points == str(item["points"])
            assert (in_effect, needs) == (("yes", "") if item["passed"] else ("no", item["needs"])), item

        await page.check("#setting-block_direct_ip")
        await page.click("#settings-form button[type=submit]")
        await expect(tab.notice()).to_have_text("saved: block_direct_ip")
        await expect(page.locator("#score-value")).to_have_text(f"{score['score'] + 5} / 100")
        assert (await wf.api.get("/api/settings")).json()["data"]["block_direct_ip"] is True
        bare = await wf.fetch(f"http://127.0.0.1:{wf.origin.port}/ui-direct")
        assert bare.status_code == 403 and "direct_ip" in bare.text  # Squid applies what the page saved
        block_row = page.locator("#score-items tbody tr", has_text="Direct IP blocking")
        assert (await cells(block_row))[2:] == ["yes", ""]

        # a list of rule ids is edited as lines and saved as numbers (the API refuses "942130")
        kept = (await wf.api.get("/api/settings")).json()["data"]["waf_exclusions"][1:]
        await page.fill("#setting-waf_exclusions", "\n".join(str(i) for i in kept))
        await page.click("#settings-form button[type=submit]")
        await expect(tab.notice()).to_have_text("saved: waf_exclusions")
        assert (await wf.api.get("/api/settings")).json()["data"]["waf_exclusions"] == kept

        # a bad value is refused with the API's words, and nothing is written
        await page.fill("#setting-log_retention_days", "0")
        await page.click("#settings-form button[type=submit]")
        await expect(tab.notice()).to_contain_text("log_retention_days: must be between 1 and 3650 (HTTP 400)")
        assert (await wf.api.get("/api/settings")).json()["data"]["log_retention_days"] == 30
        await page.fill("#setting-log_retention_days", "30")

        # the notification test: refused while no target is set, then delivered to a real receiver
        await page.click("#notify-test")
        await expect(tab.notice()).to_have_text("no notification target is configured (HTTP 400)")
        received: list[dict[str, Any]] = []

        async def hook(request: web.Request) -> web.Response:
            received.append(await request.json())
            return web.Response(text="ok")

        receiver = await Receiver([("POST", "/hook", hook)]).start()
        try:
            hook_url = f"http://127.0.0.1:{receiver.port}/hook"
            await page.fill("#setting-notify_webhook_url", hook_url)
            await page.check("#setting-notify_allow_private_targets")  # the receiver is on loopback
            await page.click("#settings-form button[type=submit]")
            await expect(tab.notice()).to_have_text("saved: notify_webhook_url, notify_allow_private_targets")
            assert (await wf.api.get("/api/settings")).json()["data"]["notify_webhook_url"] == hook_url
            await page.click("#notify-test")
            await expect(tab.notice()).to_have_text("test sent to: webhook")
            await expect(page.locator("#notify-result li")).to_have_text(["webhook: delivered (HTTP 200)"])
            assert [r["event"] for r in received] == ["test"]
        finally:
            await receiver.stop()
        await screenshot(tab, "settings")


async def test_waf_categories_toggle_and_the_rule_tester(wf, ui_base, chromium, restored):
    categories = (await wf.api.get("/api/waf/categories")).json()["data"]
    xss = wf.url("allowed.test", XSS_URL_PATH)
    assert (await wf.fetch(xss)).status_code == 403
    async with browsing(chromium, ui_base, "#/waf") as tab:
        page = tab.page
        rows = page.locator("#waf-categories tbody tr")
        await expect(rows).to_have_count(len(categories))
        for index, category in enumerate(categories):
            _, name, description, rules, _ = await cells(rows.nth(index))
            assert (name, description, rules) == (category["name"], category["description"], str(category["rules"]))
        await expect(page.locator("#waf-state")).to_contain_text("WAF on")

        await page.uncheck("#waf-XSS")
        await expect(tab.notice()).to_have_text("XSS disabled")
        enabled = {c["name"]: c["enabled"] for c in (await wf.api.get("/api/waf/categories")).json()["data"]}
        assert enabled["XSS"] is False
        assert (await wf.fetch(xss)).status_code == 200  # Squid no longer refuses it
        await page.check("#waf-XSS")
        await expect(tab.notice()).to_have_text("XSS enabled")
        assert (await wf.fetch(xss)).status_code == 403

        async def tested_by_the_api() -> dict[str, Any] | None:
            r = await wf.api.post("/api/waf/test-rule", json={"regex": r"q=%3Cscript", "hours": 1})
            return dict(r.json()["data"]) if r.json()["data"]["matched"] >= 3 else None

        tested: dict = await eventually(tested_by_the_api, what="the three requests above logged")
        await page.fill("#rule-regex", r"q=%3Cscript")
        await page.fill("#rule-hours", "1")
        await page.click("#rule-form button[type=submit]")
        summary = f"{tested['matched']:,} of {tested['scanned']:,} URLs match"
        await expect(page.locator("#rule-summary")).to_contain_text(summary)
        await expect(page.locator("#rule-summary strong")).to_have_text("would block")
        await expect(page.locator("#rule-examples li")).to_have_count(min(tested["matched"], 50))
        assert xss in await page.locator("#rule-examples li").all_text_contents()

        await page.fill("#rule-regex", "(unclosed")
        await page.click("#rule-form button[type=submit]")
        await expect(tab.notice()).to_contain_text("invalid regex")
        await screenshot(tab, "waf")


async def test_maintenance_backs_up_restores_and_cleans_up(wf, ui_base, chromium, restored):
    await wf.api.post("/api/domain-blacklist", json={"domain": "kept.test", "description": "in the backup"})
    assert (await wf.api.get("/api/settings", auth=("admin", "Wrong-password-2!"))).status_code == 401
    async with browsing(chromium, ui_base, "#/maintenance") as tab:
        page = tab.page
        stats = (await wf.api.get("/api/database/stats")).json()["data"]
        blacklist = page.locator("#db-tables tbody tr", has_text="domain_blacklist")
        await expect(blacklist).to_have_count(1)
        assert (await cells(blacklist))[1] == f"{stats['tables']['domain_blacklist']:,}"
        logs = page.locator("#db-tables tbody tr", has_text="log rows")
        assert int((await cells(logs))[1].replace(",", "")) >= 1

        async with page.expect_download() as download:
            await page.click("#backup")
        saved = Path(await (await download.value).path())
        backup = json.loads(saved.read_text())
        assert backup == (await wf.api.get("/api/maintenance/backup-config")).json()["data"]
        assert [e["domain"] for e in backup["lists"]["domain-blacklist"]] == ["kept.test"]

        # an entry added after the backup is gone once the backup is restored through the page
        await wf.api.post("/api/domain-blacklist", json={"domain": "after.test"})
        await page.set_input_files("#restore-file", str(saved))
        await page.click("#restore")
        await expect(page.locator("#restore-result")).to_contain_text("domain-blacklist 1")
        after = (await wf.api.get("/api/domain-blacklist")).json()["data"]
        assert [e["domain"] for e in after] == ["kept.test"]

        # a file that is not a backup is refused with the API's words, nothing changes
        bogus = saved.with_name("not-a-backup.json")
        bogus.write_text(json.dumps({"lists": {"no-such-list": []}}))
        await page.set_input_files("#restore-file", str(bogus))
        await page.click("#restore")
        await expect(tab.notice()).to_contain_text("backup refused")
        assert [e["domain"] for e in (await wf.api.get("/api/domain-blacklist")).json()["data"]] == ["kept.test"]

        await page.fill("#retention-days", "1")
        await page.click("#clear-old")
        await expect(page.locator("#cleanup-result")).to_have_text("deleted 0 rows older than 1 days")
        await page.click("#check-cert")
        await expect(page.locator("#cert-findings")).to_contain_text("rayfleet webfilter interception CA")
        await expect(page.locator("#audit")).to_contain_text("restore-config")

        # the failed sign-in above is listed, and cleared from the page
        failures = (await wf.api.get("/api/security/rate-limits")).json()["data"]
        lockout = page.locator("#lockouts tbody tr", has_text="127.0.0.1")
        assert (await cells(lockout))[:3] == ["127.0.0.1", str(failures[0]["failures"]), "not locked"]
        await lockout.locator("button").click()
        await expect(tab.notice()).to_have_text("cleared 127.0.0.1")
        await expect(page.locator("#lockouts tbody tr.empty")).to_have_text("no failed sign-in")
        assert (await wf.api.get("/api/security/rate-limits")).json()["data"] == []
        cve = (await wf.api.get("/api/security/cve")).json()["data"]
        await expect(page.locator("#squid-version")).to_have_text(
            f"{cve['version']}; package {cve['package_version']}: its changelog records {len(cve['cves'])} CVE fixes"
        )
        await screenshot(tab, "maintenance")


async def test_signing_out_revokes_the_token_and_clears_the_tab(wf, ui_base, chromium):
    async with browsing(chromium, ui_base, "#/lists") as tab:
        page = tab.page
        session = json.loads(await page.evaluate(f"() => sessionStorage.getItem('{SESSION_KEY}')"))
        await page.click("#logout")
        await expect(page).to_have_url(re.compile(r"#/login$"))
        await expect(tab.notice()).to_have_text("signed out")
        assert await page.evaluate("() => [sessionStorage.length, localStorage.length]") == [0, 0]
        bearer = {"Authorization": "Bearer " + session["access_token"]}
        async with httpx.AsyncClient(base_url=ui_base, trust_env=False) as http:
            assert (await http.get("/api/settings", headers=bearer)).status_code == 401
            used = await http.post("/api/auth/refresh", json={"refresh_token": session["refresh_token"]})
            assert used.status_code == 401
        await page.goto(ui_base + "/#/settings")  # no token: back to the sign-in form
        await expect(page).to_have_url(re.compile(r"#/login$"))
        await expect(page.locator("#nav")).to_be_hidden()


async def test_client_groups_and_the_dns_log_have_their_pages(wf, ui_base, chromium):
    added = await wf.api.post("/api/domain-blacklist", json={"domain": "dnsui.test"})
    assert added.status_code == 200, added.text
    try:
        async with browsing(chromium, ui_base, "#/groups") as tab:
            page = tab.page
            await expect(page.locator("#groups tbody tr.empty")).to_have_text("no client groups")
            await page.fill("#group-name", "kids")
            await page.fill("#group-networks", "127.0.5.0/24")
            await page.fill("#group-blacklist", "other.test\n*.games.test")
            await page.fill("#group-whitelist", "school.games.test")
            await expect(page.locator("#group-always")).to_be_visible()  # no window: always
            await page.click("#group-add-window")
            await fill_window(page, 0, ["mon", "tue", "wed", "thu", "fri"], "08:00", "16:30")
            await page.click("#group-form button[type=submit]")
            await expect(tab.notice()).to_have_text("created the group kids")
            row = page.locator("#groups tbody tr", has_text="kids")
            await expect(row).to_have_count(1)
            assert (await cells(row))[:6] == [
                "kids",
                "127.0.5.0/24",
                "other.test *.games.test",
                "school.games.test",
                "mon,tue,wed,thu,fri 08:00-16:30",
                "group:kids",
            ]
            (stored,) = (await wf.api.get("/api/groups")).json()["data"]
            assert stored["windows"] == [
                {"days": ["mon", "tue", "wed", "thu", "fri"], "start": "08:00", "end": "16:30"}
            ]
            # a group overlapping it is refused with the API's words, and nothing is added
            await page.fill("#group-name", "teens")
            await page.fill("#group-networks", "127.0.5.128/25")
            await page.click("#group-form button[type=submit]")
            await expect(tab.notice()).to_contain_text(
                "overlaps 127.0.5.0/24 of the group kids: a client belongs to one group at most (HTTP 422)"
            )
            await expect(page.locator("#groups tbody tr")).to_have_count(1)

            # Edit fills the form with the group; saving replaces it (PUT), under the same checks
            await row.locator("button", has_text="Edit").click()
            await expect(page.locator("#group-name")).to_have_value("kids")
            await expect(page.locator("#group-networks")).to_have_value("127.0.5.0/24")
            await expect(page.locator("#group-blacklist")).to_have_value("other.test\n*.games.test")
            await expect(window_row(page, 0).locator("input[data-day=fri]")).to_be_checked()
            await expect(window_row(page, 0).locator("input.window-start")).to_have_value("08:00")
            await page.fill("#group-blacklist", "other.test\n*.games.test\nvideo.test")
            await window_row(page, 0).locator("input[data-day=fri]").uncheck()
            await page.click("#group-form button[type=submit]")
            await expect(tab.notice()).to_have_text("saved the group kids")
            await expect(page.locator("#group-name")).to_have_value("")  # back to creating
            (edited,) = (await wf.api.get("/api/groups")).json()["data"]
            assert edited["id"] == stored["id"]
            assert edited["blacklist"] == ["other.test", "*.games.test", "video.test"]
            assert edited["windows"] == [{"days": ["mon", "tue", "wed", "thu"], "start": "08:00", "end": "16:30"}]
            # the table is redrawn after the notice: wait for the row to show the edit
            await expect(row.locator("td").nth(2)).to_have_text("other.test *.games.test video.test")
            assert (await cells(row))[2:5] == [
                "other.test *.games.test video.test",
                "school.games.test",
                "mon,tue,wed,thu 08:00-16:30",
            ]
            await row.locator("button", has_text="Edit").click()
            await page.fill("#group-networks", "127.0.5.0/24\n10.0.0.1/8")  # host bits set: the API's 422
            await page.click("#group-form button[type=submit]")
            await expect(tab.notice()).to_contain_text("(HTTP 422)")
            assert (await wf.api.get("/api/groups")).json()["data"][0]["networks"] == ["127.0.5.0/24"]
            await page.click("#group-cancel")
            await expect(page.locator("#group-networks")).to_have_value("")
            await screenshot(tab, "groups")

            # DNS: a blocked name our resolver answered, with the rule that decided it
            assert await wf.resolve("ads.dnsui.test") == ["0.0.0.0"]
            await eventually(
                lambda: _dns_logged(wf, "ads.dnsui.test"), timeout=10, what="the DNS row of ads.dnsui.test"
            )
            await page.click("#nav a[data-page=dns]")
            logged = page.locator("#dns-log tbody tr", has_text="ads.dnsui.test")
            await expect(logged).to_have_count(1)
            _, client, name, qtype, outcome, answer, rule, source, group = await cells(logged.first)
            assert group == ""  # no client group's own dnsmasq answered it
            assert (client, name, qtype, outcome, answer, rule, source) == (
                "127.0.0.1",
                "ads.dnsui.test",
                "A",
                "sinkholed",
                "0.0.0.0",
                "dnsui.test",
                "domain-blacklist",
            )
            assert await logged.first.evaluate("(row) => row.classList.contains('blocked')")
            await screenshot(tab, "dns")

            # deleting the group from its page
            await page.click("#nav a[data-page=groups]")
            await page.locator("#groups tbody tr", has_text="kids").locator("button.danger").click()
            await expect(tab.notice()).to_have_text("deleted the group kids")
            assert (await wf.api.get("/api/groups")).json()["data"] == []
    finally:
        for group in (await wf.api.get("/api/groups")).json()["data"]:
            await wf.api.delete(f"/api/groups/{group['id']}")
        await wf.api.delete(f"/api/domain-blacklist/{added.json()['data']['id']}")


def window_row(page: Any, index: int) -> Any:
    """The form's time window row `index` (0: the first)."""
    return page.locator("#group-windows .group-window").nth(index)


async def fill_window(page: Any, index: int, days: list[str], start: str, end: str) -> None:
    """Set the form's window row `index` to exactly `days` from `start` to `end`."""
    row = window_row(page, index)
    for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun"):
        await row.locator(f"input[data-day={day}]").set_checked(day in days)
    await row.locator("input.window-start").fill(start)
    await row.locator("input.window-end").fill(end)


async def form_windows(page: Any) -> list[dict[str, Any]]:
    """What the form's window rows hold, as the API's windows."""
    out = []
    rows = page.locator("#group-windows .group-window")
    for index in range(await rows.count()):
        row = rows.nth(index)
        days = [await box.get_attribute("value") for box in await row.locator("input[type=checkbox]:checked").all()]
        start = await row.locator("input.window-start").input_value()
        out.append({"days": days, "start": start, "end": await row.locator("input.window-end").input_value()})
    return out


async def shown_windows(page: Any, group: str) -> list[str]:
    """The windows the group list shows for `group`, one text a window."""
    cell = page.locator("#groups tbody tr", has_text=group).locator("td").nth(4)
    return [t.strip() for t in await cell.locator(".window").all_text_contents()]


async def saved(tab: Tab, notice: str) -> None:
    """The group form's save is done: its notice shows and the form is back to creating (it is emptied only
    once the API answered, so this waits for that save even when an earlier save's same notice still shows)."""
    await expect(tab.notice()).to_have_text(notice)
    await expect(tab.page.locator("#group-windows .group-window")).to_have_count(0)
    await expect(tab.page.locator("#group-name")).to_have_value("")


async def test_a_group_form_shows_adds_edits_and_removes_every_time_window(wf, ui_base, chromium):
    weekdays = {"days": ["mon", "tue", "wed", "thu", "fri"], "start": "08:00", "end": "12:00"}
    weekend = {"days": ["sat", "sun"], "start": "10:00", "end": "18:00"}

    async def stored() -> dict[str, Any]:
        (group,) = [g for g in (await wf.api.get("/api/groups")).json()["data"] if g["name"] == "multi"]
        return dict(group)

    try:
        async with browsing(chromium, ui_base, "#/groups") as tab:
            page = tab.page
            # created with two windows through the form
            await page.fill("#group-name", "multi")
            await page.fill("#group-networks", "127.0.6.0/24")
            await page.fill("#group-blacklist", "multi.test")
            await page.click("#group-add-window")
            await page.click("#group-add-window")
            await expect(page.locator("#group-always")).to_be_hidden()
            await fill_window(page, 0, weekdays["days"], weekdays["start"], weekdays["end"])
            await fill_window(page, 1, weekend["days"], weekend["start"], weekend["end"])
            await page.click("#group-form button[type=submit]")
            await saved(tab, "created the group multi")
            assert (await stored())["windows"] == [weekdays, weekend]
            await expect(page.locator("#groups tbody tr", has_text="multi").locator(".window")).to_have_count(2)
            assert await shown_windows(page, "multi") == ["mon,tue,wed,thu,fri 08:00-12:00", "sat,sun 10:00-18:00"]

            # Edit shows every window; the second is edited
            row = page.locator("#groups tbody tr", has_text="multi")
            await row.locator("button", has_text="Edit").click()
            await expect(page.locator("#group-windows .group-window")).to_have_count(2)
            assert await form_windows(page) == [weekdays, weekend]
            sunday = {"days": ["sun"], "start": "09:30", "end": "20:00"}
            await fill_window(page, 1, sunday["days"], sunday["start"], sunday["end"])
            await page.click("#group-form button[type=submit]")
            await saved(tab, "saved the group multi")
            assert (await stored())["windows"] == [weekdays, sunday]
            await expect(row.locator(".window").nth(1)).to_have_text("sun 09:30-20:00")
            assert await shown_windows(page, "multi") == ["mon,tue,wed,thu,fri 08:00-12:00", "sun 09:30-20:00"]

            # the first is removed
            await row.locator("button", has_text="Edit").click()
            await expect(page.locator("#group-windows .group-window")).to_have_count(2)
            await window_row(page, 0).locator("button.window-remove").click()
            await expect(page.locator("#group-windows .group-window")).to_have_count(1)
            assert await form_windows(page) == [sunday]
            await page.click("#group-form button[type=submit]")
            await saved(tab, "saved the group multi")
            assert (await stored())["windows"] == [sunday]
            await expect(row.locator(".window")).to_have_count(1)
            assert await shown_windows(page, "multi") == ["sun 09:30-20:00"]

            # after a reload the page shows what the API holds, in the list and in the form
            await page.reload()
            row = page.locator("#groups tbody tr", has_text="multi")
            await expect(row.locator(".window")).to_have_count(1)
            assert await shown_windows(page, "multi") == ["sun 09:30-20:00"]
            await row.locator("button", has_text="Edit").click()
            await expect(page.locator("#group-windows .group-window")).to_have_count(1)
            assert await form_windows(page) == [sunday]

            # an invalid window shows the API's refusal in the form and changes nothing
            before = await stored()
            await page.click("#group-add-window")
            await fill_window(page, 1, ["mon"], "17:00", "09:00")  # end before start
            await page.click("#group-form button[type=submit]")
            await expect(tab.notice()).to_contain_text("end must be after start")
            await expect(tab.notice()).to_contain_text("(HTTP 422)")
            assert await stored() == before
            await expect(page.locator("#group-windows .group-window")).to_have_count(2)  # the form keeps it
            await fill_window(page, 1, [], "09:00", "17:00")  # no day
            await page.click("#group-form button[type=submit]")
            await expect(tab.notice()).to_contain_text("windows.1.days")
            assert await stored() == before
            # a day that is not one (the box's value changed, as a tampered page would send it)
            await fill_window(page, 1, ["mon"], "09:00", "17:00")
            await window_row(page, 1).locator("input[data-day=mon]").evaluate("(box) => { box.value = 'funday'; }")
            await page.click("#group-form button[type=submit]")
            await expect(tab.notice()).to_contain_text("windows.1.days.0")
            await expect(tab.notice()).to_contain_text("(HTTP 422)")
            assert await stored() == before
            await screenshot(tab, "group-windows")
            await page.click("#group-cancel")
            assert await shown_windows(page, "multi") == ["sun 09:30-20:00"]
    finally:
        for group in (await wf.api.get("/api/groups")).json()["data"]:
            await wf.api.delete(f"/api/groups/{group['id']}")


async def _dns_logged(wf: Service, name: str) -> bool:
    rows = (await wf.api.get("/api/dns/logs", params={"search": name})).json()["data"]
    return any(row["name"] == name for row in rows)


async def test_analytics_dns_detection_and_the_maintenance_extras_show_what_the_api_answers(wf, ui_base, chromium):
    probe = f"/ui-analytics-{uuid.uuid4().hex[:8]}.pdf"
    assert (await wf.fetch(wf.url("files.dropbox.com", probe))).status_code == 200
    await wf.wait_logged(probe)
    async with browsing(chromium, ui_base, "#/analytics") as tab:
        page = tab.page
        agents = (await wf.api.get("/api/analytics/user-agents", params={"hours": 168})).json()["data"]
        agent_rows = page.locator("#user-agents tbody tr")
        await expect(agent_rows).to_have_count(len(agents["user_agents"]))
        shown = [await cells(agent_rows.nth(i)) for i in range(len(agents["user_agents"]))]
        assert shown == [[a["user_agent"], f"{a['requests']:,}"] for a in agents["user_agents"]]
        saas = page.locator("#shadow-it tbody tr", has_text="Dropbox")
        await expect(saas).to_have_count(1)
        (dropbox,) = [
            s for s in (await wf.api.get("/api/analytics/shadow-it")).json()["data"] if s["name"] == "Dropbox"
        ]
        assert await cells(saas) == ["Dropbox", dropbox["category"], "dropbox.com", f"{dropbox['requests']:,}"]
        await expect(page.locator("#file-extensions tbody tr", has_text="pdf")).to_have_count(1)
        await expect(page.locator("#top-registrable tbody tr", has_text="dropbox.com")).to_have_count(1)
        traffic = (await wf.api.get("/api/traffic/statistics", params={"period": "day"})).json()["data"]
        await expect(page.locator("#traffic-totals")).to_contain_text(
            f"{sum(traffic['requests']):,} requests, {sum(traffic['blocked']):,} blocked"
        )
        await expect(page.locator("#traffic .timeline .bar")).to_have_count(len(traffic["labels"]))
        await page.select_option("#traffic-period", "hour")
        hour = (await wf.api.get("/api/traffic/statistics", params={"period": "hour"})).json()["data"]
        await expect(page.locator("#traffic .timeline .bar")).to_have_count(len(hour["labels"]))
        await screenshot(tab, "analytics")

        # DNS: our own dnsmasq is detected by its version.bind answer; an address outside is refused
        await page.click("#nav a[data-page=dns]")
        dns_address = (await wf.api.get("/health")).json()["dns"]["address"].removesuffix(":53")
        await page.fill("#detect-addresses", dns_address)
        await page.click("#detect-form button[type=submit]")
        found = page.locator("#detect-result tbody tr")
        await expect(found).to_have_count(1)
        address, answers, product, version, filtering = await cells(found)
        assert (address, answers, product, filtering) == (f"{dns_address}:53", "yes", "dnsmasq", "")
        assert version.startswith("dnsmasq-")
        await screenshot(tab, "dns-detect")
        await page.fill("#detect-addresses", "192.0.2.1")
        await page.click("#detect-form button[type=submit]")
        await expect(tab.notice()).to_contain_text("is neither loopback nor in the configured subnet")
        await expect(page.locator("#detect-result tbody tr")).to_have_count(0)

        # Maintenance: the log figures, the export, Squid's children and cache, the audit log's pages. The
        # query above may still reach the DNS log while the page loads: the figures are the API's before or after
        before = await log_figures(wf)
        await page.click("#nav a[data-page=maintenance]")
        await expect(page.locator("#log-stats")).to_have_text(re.compile(r"^log rows: "))
        shown_figures = await page.inner_text("#log-stats")
        assert shown_figures in (before, await log_figures(wf))
        async with page.expect_download() as download:
            await page.click("#export")
        exported = json.loads(Path(await (await download.value).path()).read_text())
        expected = (await wf.api.get("/api/database/export")).json()["data"]
        assert exported.keys() == expected.keys() and exported["settings"] == expected["settings"]
        assert [u["password_hash"] for u in exported["users"]] == ["[redacted]"]
        status = page.locator("#proxy-status")
        for child in (await wf.api.get("/health")).json()["children"]:
            row = status.locator("tr", has_text=re.compile(rf"child {re.escape(child['name'])}(?!-)"))
            await expect(row).to_contain_text(child["state"])
        await expect(status).to_contain_text("hit ratio (5 min)")
        total = (await wf.api.get("/api/audit-log", params={"limit": 1})).json()["meta"]["total"]
        assert total > 15  # the sign-ins and edits of this module
        await expect(page.locator("#audit-pager")).to_have_text(f"1-15 of {total:,}")
        await expect(page.locator("#audit-newer")).to_be_disabled()
        await page.click("#audit-older")
        await expect(page.locator("#audit-pager")).to_have_text(f"16-{min(30, total)} of {total:,}")
        older = (await wf.api.get("/api/audit-log", params={"limit": 15, "offset": 15})).json()["data"]
        await expect(page.locator("#audit tbody tr")).to_have_count(len(older))
        assert (await cells(page.locator("#audit tbody tr").first))[3] == older[0]["action"]


async def log_figures(wf: Service) -> str:
    """The line of log row counts the maintenance page shows, from `/api/logs/stats`."""
    by_source = (await wf.api.get("/api/logs/stats")).json()["data"]["by_source"]
    http, dns = by_source["http"], by_source["dns"]
    return (
        f"log rows: HTTP {http['total_count']:,} ({http['blocked_count']:,} blocked), "
        f"DNS {dns['total_count']:,} ({dns['blocked_count']:,} blocked)"
    )


async def _rendered_splice_list(wf: Service) -> str:
    """Squid's splice ACL files (names, then patterns) as the proxy actor last rendered them."""
    status = await wf.app.state.component.proxy.status.remote()
    acl = Path(status["access_log"]).parent.parent / "acl"
    return (acl / "tls_splice.txt").read_text() + (acl / "tls_splice_patterns.txt").read_text()


async def test_the_tls_page_edits_the_splice_list_and_its_categories(wf, ui_base, chromium, restored):
    assert (await wf.api.get("/api/settings")).json()["data"]["tls_splice_categories"] == [
        "banking",
        "health",
        "pinned_apps",
    ]
    async with browsing(chromium, ui_base, "#/tls") as tab:
        page = tab.page
        await expect(page.locator("#nav a.active")).to_have_text("TLS")
        await expect(page.locator("#entries tbody tr.empty")).to_have_text("no entries")
        await expect(page.locator("#tls-bump")).not_to_be_checked()
        await expect(page.locator("#tls-state")).to_have_text("Squid is tunnelling HTTPS now.")
        # the categories as actors/webfilter/splice.py defines them, every one on (the default)
        for name in ("banking", "health", "pinned_apps"):
            await expect(page.locator(f"#splice-{name}")).to_be_checked()
        await expect(page.locator("[data-category=banking] details")).to_contain_text("paypal.com")

        # an entry added on the page is in the API's listing and in Squid's splice ACL
        row = await add_with_markup(tab, "*.bank.test")
        listed = (await wf.api.get("/api/tls-splice")).json()["data"]
        assert [(e["domain"], e["description"]) for e in listed] == [("*.bank.test", HOSTILE)]
        assert r"\.bank\.test$" in await _rendered_splice_list(wf)

        # bad entries are refused with the API's words, nothing is added
        await page.fill("#entry-value", "*.com")
        await page.click("#add-form button[type=submit]")
        await expect(tab.notice()).to_have_text(
            "a `*.` wildcard needs a name of at least two labels after it: '*.com' (HTTP 400)"
        )
        await page.fill("#entry-value", "*.bank.test")
        await page.click("#add-form button[type=submit]")
        await expect(tab.notice()).to_contain_text("(HTTP 409)")
        await expect(page.locator("#entries tbody tr")).to_have_count(1)
        assert (await wf.api.get("/api/tls-splice")).json()["meta"]["total"] == 1

        # a category switched off on the page leaves Squid's list; the others stay
        await page.uncheck("#splice-banking")
        await expect(tab.notice()).to_have_text("splice categories: health, pinned_apps")
        settings = (await wf.api.get("/api/settings")).json()["data"]
        assert settings["tls_splice_categories"] == ["health", "pinned_apps"]
        rendered = await _rendered_splice_list(wf)
        assert ".paypal.com" not in rendered and ".nhs.uk" in rendered and ".icloud.com" in rendered
        await expect(page.locator("#splice-banking")).not_to_be_checked()

        # interception switched on from the page: Squid bumps, and the page says so
        await page.check("#tls-bump")
        await expect(tab.notice()).to_have_text("TLS interception on")
        await expect(page.locator("#tls-state")).to_have_text("Squid is bumping HTTPS now.")
        assert (await wf.api.get("/api/status")).json()["data"]["proxy"]["ssl_bump"] is True
        await screenshot(tab, "tls")
        await page.uncheck("#tls-bump")
        await expect(page.locator("#tls-state")).to_have_text("Squid is tunnelling HTTPS now.")

        await row.locator("button.danger").click()
        await expect(tab.notice()).to_have_text("deleted *.bank.test")
        await expect(page.locator("#entries tbody tr.empty")).to_have_text("no entries")
        assert (await wf.api.get("/api/tls-splice")).json()["data"] == []
        assert "bank" not in await _rendered_splice_list(wf)


async def test_stored_client_addresses_are_masked_from_the_maintenance_page(wf, ui_base, chromium):
    probe = f"/ui-mask-{uuid.uuid4().hex[:8]}"
    assert (await wf.fetch(wf.url("allowed.test", probe))).status_code == 200
    assert (await wf.wait_logged(probe))["client_ip"] == "127.0.0.1"  # gdpr_mode is off: stored in full
    async with browsing(chromium, ui_base, "#/maintenance") as tab:
        page = tab.page
        # cancelled: nothing is masked
        page.once("dialog", lambda dialog: dialog.dismiss())
        await page.click("#mask-clients")
        await expect(page.locator("#mask-result")).to_have_text("")
        assert (await wf.wait_logged(probe))["client_ip"] == "127.0.0.1"

        messages: list[str] = []

        async def accept(dialog: Any) -> None:
            messages.append(dialog.message)
            await dialog.accept()

        page.once("dialog", accept)
        await page.click("#mask-clients")
        await expect(page.locator("#mask-result")).to_have_text(
            re.compile(r"^masked [\d,]+ HTTP rows and [\d,]+ DNS rows$")
        )
        assert "cannot be undone" in messages[0]
        http_rows, dns_rows = (
            int(n.replace(",", "")) for n in re.findall(r"[\d,]+", await page.inner_text("#mask-result"))
        )
        assert http_rows >= 1  # at least the probe's row
        assert (await wf.wait_logged(probe))["client_ip"] == "127.0.0.0"
        await expect(page.locator("#audit")).to_contain_text(f"{http_rows} http, {dns_rows} dns")
        await screenshot(tab, "maintenance-masked")

        # again: rows already masked are not counted, so the API counts only rows stored since (a tunnel
        # Squid logs when it closes, a DNS query), and the page shows the API's figures
        page.once("dialog", lambda dialog: dialog.accept())
        async with page.expect_response("**/api/logs/mask-clients") as answer:
            await page.click("#mask-clients")
        again = (await (await answer.value).json())["data"]
        await expect(page.locator("#mask-result")).to_have_text(
            f"masked {again['masked']:,} HTTP rows and {again['dns_masked']:,} DNS rows"
        )
        assert (await wf.wait_logged(probe))["client_ip"] == "127.0.0.0"
