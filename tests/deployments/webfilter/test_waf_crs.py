"""The CRS engine of the WAF (`waf_engine: crs`): real Squid sends plain-HTTP requests to a real nginx +
ModSecurity + OWASP CRS tier as a parent. Attacks in the query, a header, a form, a JSON body and an XML
body are refused through Squid and logged under their category; ordinary requests reach the origin; a
disabled category's family is removed; with the tier killed, inspected requests are refused (never sent
direct) until its supervisor has it back."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import pytest

from rayfleet.crs.config import PROSE_EXCLUSIONS
from tests.deployments.webfilter.conftest import Origin, Service, require_dataplane, running_service, state_folder
from tests.polling import eventually

pytestmark = pytest.mark.realserver

XXE = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'


@pytest.fixture(scope="module")
async def crs(origin: Origin) -> AsyncIterator[Service]:
    require_dataplane()
    async for service in running_service(state_folder(), origin):
        r = await service.api.post("/api/settings", json={"waf_engine": "crs"})  # its defaults: PL2, PROSE_EXCLUSIONS
        assert r.status_code == 200, r.text
        yield service


async def _tier(service: Service) -> dict[str, Any]:
    health = (await service.api.get("/health")).json()
    return next(c for c in health["children"] if c["name"] == "nginx-crs")


async def test_crs_settings_are_validated_and_nothing_is_half_written(crs):
    for bad in (
        {"waf_engine": "modsec"},
        {"waf_paranoia_level": 5},
        {"waf_paranoia_level": True},
        {"waf_anomaly_threshold": 0},
        {"waf_exclusions": ["942100"]},
        {"waf_exclusions": [942100], "waf_engine": "nope"},
    ):
        r = await crs.api.post("/api/settings", json=bad)
        assert r.status_code == 400 and "waf_" in r.json()["detail"], bad
    settings = (await crs.api.get("/api/settings")).json()["data"]
    assert settings["waf_engine"] == "crs" and settings["waf_paranoia_level"] == 2
    assert settings["waf_exclusions"] == list(PROSE_EXCLUSIONS) and settings["waf_anomaly_threshold"] == 5


async def test_attacks_anywhere_in_the_request_are_refused_through_squid_and_logged_by_category(crs):
    base = crs.url("allowed.test", "")
    attacks: list[tuple[str, str, dict[str, Any]]] = [
        ("SQL_INJECTION", "GET", {"url": base + "/crs-query?id=1%27%20OR%20%271%27%3D%271"}),
        ("LOG4SHELL", "GET", {"url": base + "/crs-header", "headers": {"X-Api-Version": "${jndi:ldap://x.test/a}"}}),
        ("SQL_INJECTION", "POST", {"url": base + "/crs-form", "data": {"user": "admin' OR 1=1 -- ", "pw": "x"}}),
        ("XSS", "POST", {"url": base + "/crs-json", "json": {"comment": "<img src=x onerror=alert(1)>"}}),
        ("CRS", "POST", {"url": base + "/crs-xxe", "content": XXE, "headers": {"Content-Type": "application/xml"}}),
        ("PATH_TRAVERSAL", "GET", {"url": base + "/crs-lfi?file=../../../../etc/shadow"}),
        # behind an encoded `?`, where libmodsecurity ends the decoded path: the raw path is read too
        ("XSS", "GET", {"url": base + "/crs-qmark/%3F%3Cscript%3Ealert(1)%3C%2Fscript%3E"}),
        ("SSRF", "GET", {"url": base + "/crs-ssrf?next=http://169.254.169.254/latest/meta-data/"}),
    ]
    for category, method, request in attacks:
        r = await crs.proxy.request(method, **request)
        path = request["url"].removeprefix(base).split("?")[0]
        assert r.status_code == 403 and f"waf:{category}" in r.text, (category, path, r.status_code)
        assert not any(h.startswith(path) for h in crs.origin.hits), f"{path} reached the origin"
        row = await crs.wait_logged(path)
        assert row["blocked"] and row["rule"] == f"waf:{category}"
    ordinary = [
        ("GET", {"url": base + "/crs-ok/search?q=blue+shoes&page=2"}),
        ("GET", {"url": base + "/crs-ok/from-a-link", "headers": {"Referer": "https://news.example/story?id=7"}}),
        (
            "GET",
            {
                "url": base + "/crs-ok/from-a-search",
                "headers": {"Referer": "https://www.google.com/search?q=a+(b)&oq=a"},
            },
        ),
        ("GET", {"url": base + "/crs-ok/what%3Fwhy.html"}),
        ("POST", {"url": base + "/crs-ok/login", "data": {"user": "alice", "password": "correct horse"}}),
        ("POST", {"url": base + "/crs-ok/api", "json": {"order": 42, "note": "leave at the door, thanks!"}}),
        (
            "POST",
            {"url": base + "/crs-ok/xml", "content": "<r><item>1</item></r>", "headers": {"Content-Type": "text/xml"}},
        ),
    ]
    for method, request in ordinary:
        r = await crs.proxy.request(method, **request)
        assert r.status_code == 200 and r.text.startswith("origin ok /crs-ok/"), (request["url"], r.status_code)
    stats = (await crs.api.get("/api/waf/stats")).json()["data"]
    assert stats["engine"] == "crs" and stats["crs"]["running"] and stats["crs"]["paranoia_level"] == 2
    by = {c["name"]: c["blocked"] for c in stats["categories"]}
    assert by["SQL_INJECTION"] >= 2 and by["LOG4SHELL"] >= 1 and by["XSS"] >= 1 and by["CRS"] >= 1
    # the tier's audit log says which rules refused them: libinjection's SQL and XSS rules among them
    assert {"942100", "941100"} <= {hit["rule"] for hit in stats["crs"]["top_rules"]}
    assert stats["crs"]["categories"]["SQL_INJECTION"] >= 2
    assert stats["crs"]["recent"] and all(r["client_ip"] == "127.0.0.1" for r in stats["crs"]["recent"])
    assert (await crs.api.put("/api/settings/gdpr_mode", json={"value": True})).status_code == 200
    try:
        masked = (await crs.api.get("/api/waf/stats")).json()["data"]["crs"]["recent"]
        assert masked and all(r["client_ip"] == "127.0.0.0" for r in masked)
    finally:
        await crs.api.put("/api/settings/gdpr_mode", json={"value": False})


async def test_a_disabled_category_removes_its_crs_family(crs):
    sqli = crs.url("allowed.test", "/crs-toggle?id=1%20UNION%20SELECT%20password%20FROM%20users")
    assert (await crs.fetch(sqli)).status_code == 403
    r = await crs.api.post("/api/waf/categories/toggle", json={"category": "SQL_INJECTION", "enabled": False})
    assert r.status_code == 200
    try:
        passed = await crs.fetch(sqli)
        assert passed.status_code == 200 and any(h.startswith("/crs-toggle") for h in crs.origin.hits)
        xss = await crs.fetch(crs.url("allowed.test", "/crs-toggle-xss?q=%3Cscript%3Ealert(1)%3C/script%3E"))
        assert xss.status_code == 403 and "waf:XSS" in xss.text  # the other families stay
    finally:
        await crs.api.post("/api/waf/categories/toggle", json={"category": "SQL_INJECTION", "enabled": True})
    assert (await crs.fetch(sqli)).status_code == 403


async def test_a_counter_reset_restarts_the_tiers_counts(crs):
    assert (
        await crs.fetch(crs.url("allowed.test", "/crs-before-reset?q=%3Cscript%3Ealert(1)%3C/script%3E"))
    ).status_code == 403

    async def logged_before() -> bool:  # nginx writes the audit entry after it answers: counted by log time
        report = (await crs.api.get("/api/waf/stats")).json()["data"]["crs"]
        return any(r["uri"].startswith("/crs-before-reset") for r in report["recent"])

    await eventually(logged_before, what="the refusal before the reset logged")
    reset = (await crs.api.post("/api/counters/reset")).json()["data"]["reset_at"]
    stats = (await crs.api.get("/api/waf/stats")).json()["data"]
    assert stats["since"] == reset and stats["crs"]["since"] == reset
    assert stats["crs"]["categories"] == {} and stats["crs"]["recent"] == []
    assert (
        await crs.fetch(crs.url("allowed.test", "/crs-after-reset?q=%3Cscript%3Ealert(1)%3C/script%3E"))
    ).status_code == 403

    async def counted() -> dict[str, Any] | None:
        report = (await crs.api.get("/api/waf/stats")).json()["data"]["crs"]
        return report if report["categories"] == {"XSS": 1} else None

    after = await eventually(counted, what="the refusal after the reset counted alone")
    assert [r["uri"].split("?")[0] for r in after["recent"]] == ["/crs-after-reset"]


async def test_with_the_tier_killed_inspected_requests_are_refused_until_it_is_back(crs):
    before = await _tier(crs)
    assert before["state"] == "running" and before["pid"]
    os.killpg(before["pid"], signal.SIGKILL)  # nginx's master and its worker
    sent, refused = 0, 0

    async def refused_or_back() -> bool:
        nonlocal sent, refused
        sent += 1
        r = await crs.fetch(crs.url("allowed.test", f"/crs-down-{sent}"))
        tier = await _tier(crs)
        if tier["restarts"] == before["restarts"]:
            # not yet restarted: never answered by the origin (no request goes direct)
            assert r.status_code >= 500 and not any(h == f"/crs-down-{sent}" for h in crs.origin.hits)
            refused += 1
            return False
        return r.status_code == 200

    await eventually(refused_or_back, timeout=60, what="the tier restarted and requests passing again")
    assert refused >= 1  # the request sent right after the kill
    tier = await _tier(crs)
    assert tier["last_exit"] == -signal.SIGKILL and tier["pid"] != before["pid"]
    r = await crs.fetch(crs.url("allowed.test", "/crs-after?q=%3Cscript%3Ealert(1)%3C/script%3E"))
    assert r.status_code == 403 and "waf:XSS" in r.text


async def test_back_to_url_regex_the_tier_stops_and_squid_decides_alone(crs):
    r = await crs.api.put("/api/settings/waf_engine", json={"value": "url_regex"})
    assert r.status_code == 200
    try:
        health = (await crs.api.get("/health")).json()
        assert "nginx-crs" not in {c["name"] for c in health["children"]}
        stats = (await crs.api.get("/api/waf/stats")).json()["data"]
        assert stats["engine"] == "squid url_regex" and "crs" not in stats
        # a header attack passes the URL rules; a URL one is refused by Squid's own ACL
        header = await crs.proxy.get(
            crs.url("allowed.test", "/regex-header"), headers={"X-Api": "${jndi:ldap://x.test/a}"}
        )
        assert header.status_code == 200
        url = await crs.fetch(crs.url("allowed.test", "/regex-url?q=%3Cscript%3Ealert(1)%3C/script%3E"))
        assert url.status_code == 403 and "waf:XSS" in url.text
    finally:
        assert (await crs.api.put("/api/settings/waf_engine", json={"value": "crs"})).status_code == 200
    assert (await _tier(crs))["state"] == "running"


async def test_paranoia_level_threshold_and_exclusions_reach_the_tier(crs):
    odd = crs.url("allowed.test", "/crs-pl?q=hello~world!!")  # ordinary at PL1, a character anomaly at PL4
    sqli = crs.url("allowed.test", "/crs-thr?id=1%20UNION%20SELECT%20password%20FROM%20users")
    assert (await crs.fetch(odd)).status_code == 200
    assert (await crs.api.post("/api/settings", json={"waf_paranoia_level": 4})).status_code == 200
    try:
        refused = await crs.fetch(odd)
        assert refused.status_code == 403 and "waf:" in refused.text

        async def fired_rules() -> set[str] | None:  # the audit record may be written after the answer
            recent = (await crs.api.get("/api/waf/stats")).json()["data"]["crs"]["recent"]
            return {r for hit in recent if hit["uri"].startswith("/crs-pl") for r in hit["rules"]} or None

        fired = await eventually(fired_rules, what="the PL4 refusal's rules in the audit log")
        r = await crs.api.post("/api/settings", json={"waf_exclusions": sorted(int(i) for i in fired)})
        assert r.status_code == 200
        assert (await crs.fetch(odd)).status_code == 200  # the rules that refused it are removed
    finally:
        r = await crs.api.post("/api/settings", json={"waf_paranoia_level": 1, "waf_exclusions": []})
        assert r.status_code == 200
    assert (await crs.api.post("/api/settings", json={"waf_anomaly_threshold": 1000})).status_code == 200
    try:
        assert (await crs.fetch(sqli)).status_code == 200  # no request scores 1000
    finally:
        assert (await crs.api.post("/api/settings", json={"waf_anomaly_threshold": 5})).status_code == 200
    assert (await crs.fetch(sqli)).status_code == 403
