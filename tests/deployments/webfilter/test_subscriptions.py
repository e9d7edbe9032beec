"""List subscriptions against a real HTTP server on 127.0.0.1: the list changes, answers 304 to a
conditional request, fails (500, garbage); a failed or invalid refresh keeps the last good copy, and the
real Squid enforces whatever copy is current. Subscriptions refresh in the background too."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.deployments.webfilter.conftest import (
    Origin,
    Service,
    subscribing_service,
)
from tests.polling import eventually

pytestmark = pytest.mark.realserver

ROUTE = "/api/blacklists/subscriptions"


@pytest.fixture(scope="module")
async def wf(origin: Origin) -> AsyncIterator[Service]:
    """The web filter with a one-second minimum interval and the list server's loopback address allowed."""
    async for service in subscribing_service(origin):
        yield service


async def refresh(wf, sub_id: int) -> dict:
    r = await wf.api.post(f"{ROUTE}/{sub_id}/refresh")
    assert r.status_code == 200, r.text
    return dict(r.json()["data"])


async def hits(wf) -> dict:
    r = await wf.api.get("/api/domain-blacklist/hits", params={"hours": 1})
    assert r.status_code == 200, r.text
    return dict(r.json()["data"])


def per_rule(data: dict) -> dict[tuple[str, str], tuple[int, int]]:
    return {(h["rule"], h["source"]): (h["hits"], h["hosts"]) for h in data["rules"]}


async def test_blocked_requests_are_counted_per_domain_rule_and_source(wf, lists):
    # the first test of the module: nothing was blocked before (hits are credited by the rules in force now,
    # so a host an earlier test blocked would count for whichever current rule covers it)
    before = await hits(wf)
    assert before["rules"] == [] and before["blocked_requests"] == 0
    own = []
    for rule in ("tracker.test", "/^second\\./"):
        own.append((await wf.api.post("/api/domain-blacklist", json={"domain": rule})).json()["data"]["id"])
    lists.body = b"||other.test^\n"
    sub = (await wf.api.post(ROUTE, json={"url": lists.url("/hits.txt"), "interval_seconds": 3600})).json()["data"]
    requests = [("ads.tracker.test", "/h-1"), ("ads.tracker.test", "/h-2"), ("cdn.ads.tracker.test", "/h-3")]
    requests += [("second.test", "/h-4"), ("other.test", "/h-5")]
    for host, path in requests:
        assert (await wf.fetch(wf.url(host, path))).status_code == 403
    for _, path in requests:
        await wf.wait_logged(path)
    after = await hits(wf)
    counts = per_rule(after)
    assert counts[("tracker.test", "domain-blacklist")] == (3, 2)  # ads. and cdn.ads.tracker.test
    assert counts[("/^second\\./", "domain-blacklist")] == (1, 1)
    assert counts[("other.test", f"subscription:{sub['id']}")] == (1, 1)
    assert after["blocked_requests"] == 5 and after["rules"][0]["rule"] == "tracker.test"
    assert after["unattributed_requests"] == after["blocked_requests"] - sum(h["hits"] for h in after["rules"])
    assert all(h["last_hit"].endswith("Z") for h in after["rules"])
    assert (await wf.api.get("/api/domain-blacklist/hits", params={"hours": 0})).status_code == 422
    for entry_id in own:
        await wf.api.delete(f"/api/domain-blacklist/{entry_id}")
    assert (await wf.api.delete(f"{ROUTE}/{sub['id']}")).status_code == 200
    gone = per_rule(await hits(wf))  # the rules are gone: their requests are no longer credited to them
    assert ("tracker.test", "domain-blacklist") not in gone


async def test_a_subscription_is_fetched_validated_and_enforced_and_keeps_its_last_good_copy(wf, lists):
    lists.body = b"! a list\n||tracker.test^\n@@||cdn.ads.tracker.test^\n/(a+)+/\nexample.com##.ad\n"
    r = await wf.api.post(ROUTE, json={"url": lists.url(), "type": "domain", "interval_seconds": 3600})
    assert r.status_code == 200, r.text
    sub = r.json()["data"]
    assert (sub["entries"], sub["exceptions"], sub["last_error"], sub["last_status"]) == (1, 1, None, 200)
    assert sub["skipped_lines"] == {"adblock_cosmetic": 1, "invalid_regex": 1}  # the same strict validator
    assert sub["etag"] == lists.etag and sub["last_refresh"] and sub["last_success"]
    assert (await wf.fetch(wf.url("ads.tracker.test", "/sub-1"))).status_code == 403
    assert (await wf.fetch(wf.url("cdn.ads.tracker.test", "/sub-2"))).status_code == 200  # the @@ exception
    listed = (await wf.api.get(ROUTE)).json()
    assert listed["meta"]["total"] == 1 and listed["data"][0]["entries"] == 1

    same = await refresh(wf, sub["id"])  # unchanged: a conditional request, answered 304
    assert lists.seen[-1].get("If-None-Match") == lists.etag
    assert lists.seen[-1].get("If-Modified-Since") == "Thu, 26 Nov 2026 10:00:00 GMT"
    assert (same["last_status"], same["entries"], same["last_error"], same["refreshes"]) == (304, 1, None, 2)

    for failure, reason in (("500", "answered 500"), ("garbage", "not text"), ("html", "no valid domain entry")):
        lists.failure = failure
        failed = await refresh(wf, sub["id"])
        assert reason in failed["last_error"] and failed["entries"] == 1, failed
        assert (await wf.fetch(wf.url("ads.tracker.test", f"/sub-{failure}"))).status_code == 403
    lists.failure = ""

    lists.body = b"||other.test^\n"  # the list changes
    changed = await refresh(wf, sub["id"])
    assert (changed["entries"], changed["exceptions"], changed["last_error"]) == (1, 0, None)
    assert (await wf.fetch(wf.url("other.test", "/sub-3"))).status_code == 403
    assert (await wf.fetch(wf.url("ads.tracker.test", "/sub-4"))).status_code == 200

    assert (await wf.api.delete(f"{ROUTE}/{sub['id']}")).status_code == 200
    assert (await wf.fetch(wf.url("other.test", "/sub-5"))).status_code == 200
    assert (await wf.api.get(ROUTE)).json()["data"] == []
    assert (await wf.api.delete(f"{ROUTE}/{sub['id']}")).status_code == 404
    assert (await wf.api.post(f"{ROUTE}/{sub['id']}/refresh")).status_code == 404


async def test_subscriptions_refresh_in_the_background(wf, lists):
    lists.body = b"0.0.0.0 second.test\n"
    r = await wf.api.post(ROUTE, json={"url": lists.url("/bg.txt"), "type": "domain", "interval_seconds": 1})
    sub = r.json()["data"]
    assert r.status_code == 200 and sub["entries"] == 1
    assert (await wf.fetch(wf.url("second.test", "/bg-1"))).status_code == 403
    lists.body = b"0.0.0.0 other.test\n"

    async def other_blocked() -> bool:
        return (await wf.fetch(wf.url("other.test", "/bg-2"))).status_code == 403

    await eventually(other_blocked, timeout=30, what="the changed list enforced without a refresh call")
    assert (await wf.fetch(wf.url("second.test", "/bg-3"))).status_code == 200
    assert (await wf.api.delete(f"{ROUTE}/{sub['id']}")).status_code == 200


async def test_an_ip_subscription_drops_bogons_and_blocks_by_address(wf, lists):
    lists.body = b"127.0.0.2\n8.8.8.0/24\n"
    r = await wf.api.post(ROUTE, json={"url": lists.url("/ips.txt"), "type": "ip", "interval_seconds": 3600})
    sub = r.json()["data"]
    assert sub["entries"] == 1 and sub["skipped_lines"] == {"bogon": 1}
    assert (await wf.api.delete(f"{ROUTE}/{sub['id']}")).status_code == 200


@pytest.mark.parametrize(
    "body, status, reason",
    [
        ({"url": "http://10.1.2.3/list.txt"}, 400, "non-public"),
        ({"url": "ftp://127.0.0.1/list.txt"}, 400, "http(s)"),
        ({"url": "http://user:pw@127.0.0.1/list.txt"}, 400, "credentials"),
        ({"url": "http://127.0.0.1/a b"}, 400, "whitespace"),
        ({"url": "http://127.0.0.1/x", "interval_seconds": 0}, 422, "interval_seconds"),
        ({"url": "http://127.0.0.1/x", "type": "url"}, 422, "type"),
    ],
)
async def test_bad_subscriptions_are_refused(wf, body, status, reason):
    r = await wf.api.post(ROUTE, json=body)
    assert r.status_code == status and r.json()["status"] == "error" and reason in r.json()["detail"], r.text
    assert (await wf.api.get(ROUTE)).json()["data"] == []


async def test_a_url_subscribed_twice_is_a_conflict(wf, lists):
    lists.body = b"a.example\n"
    first = await wf.api.post(ROUTE, json={"url": lists.url("/dup.txt"), "interval_seconds": 3600})
    assert first.status_code == 200
    assert (await wf.api.post(ROUTE, json={"url": lists.url("/dup.txt"), "interval_seconds": 60})).status_code == 409
    assert (await wf.api.delete(f"{ROUTE}/{first.json()['data']['id']}")).status_code == 200
