"""WAF categories run in Squid; toggles persist; test-rule runs RE2 over recent traffic; alerts are scoped."""

from __future__ import annotations

import pytest
from aiohttp import web
from pydantic import SecretStr

from tests.deployments.webfilter.conftest import Receiver

pytestmark = pytest.mark.realserver

XSS = "/waf?q=%3Cscript%3Ealert(1)%3C/script%3E"


async def test_categories_are_listed_and_a_toggle_persists_and_takes_effect(wf):
    cats = (await wf.api.get("/api/waf/categories")).json()["data"]
    names = {c["name"] for c in cats}
    assert {"SQL_INJECTION", "XSS", "PATH_TRAVERSAL", "LOG4SHELL"} <= names
    assert all(c["enabled"] and c["rules"] > 0 for c in cats)
    assert (await wf.fetch(wf.url("allowed.test", XSS))).status_code == 403
    r = await wf.api.post("/api/waf/categories/toggle", json={"category": "xss", "enabled": False})
    assert r.status_code == 200 and r.json()["data"] == {"category": "XSS", "enabled": False}
    assert (await wf.fetch(wf.url("allowed.test", XSS))).status_code == 200
    stored = wf.app.state.component.store.waf_categories()
    assert stored["XSS"] is False
    await wf.api.post("/api/waf/categories/toggle", json={"category": "XSS", "enabled": True})
    assert (await wf.fetch(wf.url("allowed.test", XSS))).status_code == 403
    unknown = await wf.api.post("/api/waf/categories/toggle", json={"category": "NOPE", "enabled": True})
    assert unknown.status_code == 404


async def test_stats_count_blocks_and_counters_reset(wf):
    await wf.fetch(wf.url("allowed.test", "/waf-stats?q=%24%7Bjndi%3Aldap://x%7D"))
    await wf.wait_logged("/waf-stats")
    stats = (await wf.api.get("/api/waf/stats")).json()["data"]
    by = {c["name"]: c["blocked"] for c in stats["categories"]}
    assert by["LOG4SHELL"] >= 1 and stats["engine"] == "squid url_regex"
    assert (await wf.api.post("/api/counters/reset")).status_code == 200
    stats = (await wf.api.get("/api/waf/stats")).json()["data"]
    assert stats["total_blocked"] == 0


async def test_test_rule_evaluates_a_regex_over_recent_traffic(wf):
    await wf.fetch(wf.url("allowed.test", "/rule-probe/alpha"))
    await wf.wait_logged("/rule-probe/alpha")
    r = await wf.api.post("/api/waf/test-rule", json={"regex": "rule-probe/al+pha", "hours": 1})
    data = r.json()["data"]
    assert r.status_code == 200 and data["matched"] >= 1 and data["would_block"] is True
    assert any("rule-probe/alpha" in e for e in data["examples"]) and data["scanned"] >= data["matched"]
    none = (await wf.api.post("/api/waf/test-rule", json={"regex": "zz-never-zz"})).json()["data"]
    assert none["matched"] == 0 and none["would_block"] is False
    catastrophic = await wf.api.post("/api/waf/test-rule", json={"regex": "(a+)+$", "hours": 168})
    assert catastrophic.status_code == 200  # RE2: linear time, no backtracking blow-up
    assert (await wf.api.post("/api/waf/test-rule", json={"regex": "(unclosed"})).status_code == 400
    assert (await wf.api.post("/api/waf/test-rule", json={"regex": "a" * 1025})).status_code == 422
    assert (await wf.api.post("/api/waf/test-rule", json={"regex": "a", "hours": 169})).status_code == 422


async def test_internal_alert_token_is_scoped_to_the_alert_route_and_notifies(wf):
    received = []

    async def hook(request):
        received.append(await request.json())
        return web.json_response({"ok": True})

    receiver = await Receiver([("POST", "/hook", hook)]).start()
    port = receiver.port
    context = wf.app.state.component
    original = context.config
    context.config = original.model_copy(update={"internal_alert_token": SecretStr("alert-" + "x" * 30)})
    bearer = {"Authorization": "Bearer alert-" + "x" * 30}
    try:
        await wf.api.post(
            "/api/settings",
            json={
                "enable_notifications": True,
                "notify_webhook_url": f"http://127.0.0.1:{port}/hook",
                "notify_allow_private_targets": True,  # the receiver is on loopback
            },
        )
        async with __import__("httpx").AsyncClient(
            transport=__import__("httpx").ASGITransport(wf.app, client=("10.2.0.1", 1)), base_url="http://w"
        ) as c:
            r = await c.post("/api/internal/alert", headers=bearer, json={"category": "XSS", "message": "blocked"})
            assert r.status_code == 200 and r.json()["data"]["notified"]["webhook"]["ok"] is True
            assert received[0]["category"] == "XSS"
            assert (await c.get("/api/settings", headers=bearer)).status_code == 401  # scoped to the alert route
            wrong = await c.post("/api/internal/alert", headers={"Authorization": "Bearer nope"}, json={})
            assert wrong.status_code == 401
        context.config = original  # unset token: normal admin authentication
        assert (await wf.api.post("/api/internal/alert", json={"message": "m"})).status_code == 200
    finally:
        context.config = original
        await wf.api.post(
            "/api/settings",
            json={"enable_notifications": False, "notify_webhook_url": "", "notify_allow_private_targets": False},
        )
        await receiver.stop()
