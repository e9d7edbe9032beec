"""Analytics from real proxied traffic (UTC), then from bulk rows for the windows and rollups."""

from __future__ import annotations

import datetime as dt

import pytest

pytestmark = pytest.mark.realserver


@pytest.fixture(scope="module")
async def traffic(wf):
    await wf.api.post("/api/logs/clear")
    await wf.api.post("/api/domain-blacklist", json={"domain": "tracker.test"})
    for n in range(3):
        await wf.fetch(wf.url("allowed.test", f"/an/file{n}.exe"))
    await wf.fetch(wf.url("files.dropbox.com", "/an/doc.pdf?x=1"))
    await wf.fetch(wf.url("ads.tracker.test", "/an/pixel.gif"))
    await wf.fetch(wf.url("allowed.test", "/an?q=%3Cscript%3E"))
    await wf.wait_logged("/an?q=")
    await wf.wait_logged("/an/pixel.gif")
    await wf.wait_logged("/an/doc.pdf")
    yield
    await wf.api.delete("/api/domain-blacklist/clear-all")


async def data(wf, path, **params):
    r = await wf.api.get(path, params=params)
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "success"
    return r.json()["data"]


async def test_logs_stats_count_blocks_by_rule(wf, traffic):
    stats = await data(wf, "/api/logs/stats")
    assert stats["total_count"] == 6 and stats["blocked_count"] == 2
    assert stats["domain_blocks_count"] == 1 and stats["waf_blocks_count"] == 1 and stats["ip_blocks_count"] == 0


async def test_timeline_and_traffic_are_zero_filled_utc_buckets(wf, traffic):
    timeline = await data(wf, "/api/logs/timeline", hours=24)
    assert len(timeline) == 24 and timeline[-1]["total"] == 6 and timeline[-1]["blocked"] == 2
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:00:00Z")
    assert timeline[-1]["time"] == now
    hour = await data(wf, "/api/traffic/statistics", period="hour")
    assert len(hour["labels"]) == 60 and sum(hour["requests"]) == 6 and sum(hour["blocked"]) == 2
    assert sum(hour["outbound"]) > 0 and sum(hour["inbound"]) > 0
    for period, buckets in (("day", 24), ("week", 7), ("month", 30)):
        assert len((await data(wf, "/api/traffic/statistics", period=period))["labels"]) == buckets
    r = await wf.api.get("/api/traffic/statistics", params={"period": "year"})
    assert r.status_code == 422 and r.json()["status"] == "error"


async def test_clients_domains_and_top_domains(wf, traffic):
    clients = await data(wf, "/api/clients/statistics")
    assert clients["total_clients"] == 1
    assert clients["clients"][0]["ip_address"] == "127.0.0.1" and clients["clients"][0]["requests"] == 6
    domains = await data(wf, "/api/domains/statistics")
    by = {d["domain"]: d for d in domains["domains"]}
    assert by["allowed.test"]["requests"] == 4 and by["allowed.test"]["blocked"] == 1
    assert by["ads.tracker.test"]["blocked"] == 1 and by["ads.tracker.test"]["allowed"] == 0
    top = await data(wf, "/api/analytics/top-domains")
    assert {d["domain"] for d in top} == {"allowed.test", "tracker.test", "dropbox.com"}


async def test_shadow_it_user_agents_and_file_extensions(wf, traffic):
    shadow = await data(wf, "/api/analytics/shadow-it")
    assert shadow == [{"name": "Dropbox", "domain": "dropbox.com", "category": "File sharing", "requests": 1}]
    agents = await data(wf, "/api/analytics/user-agents")
    assert agents["user_agents"][0]["user_agent"].startswith("python-httpx/")
    assert agents["methods"] == [{"method": "GET", "requests": 6}]
    exts = {e["extension"]: e["count"] for e in await data(wf, "/api/analytics/file-extensions")}
    assert exts == {"exe": 3, "pdf": 1, "gif": 1}


async def test_dashboard_summary(wf, traffic):
    summary = await data(wf, "/api/dashboard/summary")
    assert summary["totals"] == {"requests": 6, "blocked": 2}
    assert summary["today"]["requests"] == 6 and summary["today"]["day_starts"] == "00:00 UTC"
    assert summary["top_blocked_domains_24h"][0]["blocked"] == 1
    rules = {c["rule"] for c in summary["threat_categories_24h"]}
    assert rules == {"domain_blacklist", "waf:XSS"}
    assert summary["recent_blocks"][0]["rule"] == "waf:XSS"


async def test_logs_page_filters(wf, traffic):
    r = await wf.api.get("/api/logs", params={"blocked": True})
    body = r.json()
    assert body["meta"]["total"] == 2 and all(item["blocked"] for item in body["data"])
    assert body["data"][0]["timestamp"].endswith("Z")
    r = await wf.api.get("/api/logs", params={"client_ip": "10.9.9.9"})
    assert r.json()["meta"]["total"] == 0
    assert (await wf.api.get("/api/logs", params={"limit": 0})).status_code == 422


async def test_status_audit_log_and_cve(wf, traffic):
    status = await data(wf, "/api/status")
    assert status["proxy"]["running"] and status["logs"]["tailing"] and status["logs"]["ingested"] >= 6
    audit = (await wf.api.get("/api/audit-log")).json()
    assert audit["meta"]["total"] > 0 and any(e["action"] == "domain-blacklist.add" for e in audit["data"])
    cve = await data(wf, "/api/security/cve")
    assert cve["version"].startswith("5.") and all(c["id"].startswith("CVE-") for c in cve["cves"])


async def test_clear_empties_logs(wf, traffic):
    r = await wf.api.post("/api/logs/clear")
    assert r.json()["data"]["deleted"] >= 6
    assert (await data(wf, "/api/logs/stats"))["total_count"] == 0
