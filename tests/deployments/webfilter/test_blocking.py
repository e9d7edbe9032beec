"""Lists really block: requests through the real Squid are refused with a policy page that says why,
and every request is logged with the rule that decided it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.realserver


async def test_an_allowed_destination_passes_through_the_proxy(wf):
    r = await wf.fetch(wf.url("allowed.test", "/pass-1"))
    assert r.status_code == 200
    assert r.text == "origin ok /pass-1"
    row = await wf.wait_logged("/pass-1")
    assert row["blocked"] is False and row["rule"] is None and row["status"] == 200


async def test_domain_blacklist_blocks_the_domain_and_its_subdomains_with_a_policy_page(wf):
    r = await wf.api.post("/api/domain-blacklist", json={"domain": "tracker.test", "description": "ads"})
    assert r.status_code == 200, r.text
    entry_id = r.json()["data"]["id"]
    for host in ("ads.tracker.test", "cdn.ads.tracker.test"):
        blocked = await wf.fetch(wf.url(host, "/dom-1"))
        assert blocked.status_code == 403
        assert "domain_blacklist" in blocked.text and "domain blacklist" in blocked.text
    row = await wf.wait_logged("cdn.ads.tracker.test")
    assert row["blocked"] is True and row["rule"] == "domain_blacklist"
    assert (await wf.fetch(wf.url("other.test", "/dom-ok"))).status_code == 200
    assert (await wf.api.delete(f"/api/domain-blacklist/{entry_id}")).status_code == 200
    assert (await wf.fetch(wf.url("ads.tracker.test", "/dom-2"))).status_code == 200


async def test_ip_blacklist_blocks_destinations_by_address_even_by_name(wf):
    r = await wf.api.post("/api/ip-blacklist", json={"ip": "127.0.0.2"})
    assert r.status_code == 200, r.text
    blocked = await wf.fetch(wf.url("second.test", "/ip-1"))
    assert blocked.status_code == 403 and "ip_blacklist" in blocked.text
    assert (await wf.fetch(wf.url("allowed.test", "/ip-ok"))).status_code == 200
    row = await wf.wait_logged("/ip-1")
    assert row["rule"] == "ip_blacklist"
    assert (await wf.api.delete("/api/ip-blacklist/clear-all")).status_code == 200
    assert (await wf.fetch(wf.url("second.test", "/ip-2"))).status_code == 200


async def test_an_upstream_403_is_not_counted_as_a_block(wf):
    r = await wf.fetch(wf.url("allowed.test", "/upstream-403"))
    assert r.status_code == 403 and r.text == "origin says no"
    row = await wf.wait_logged("/upstream-403")
    assert row["blocked"] is False and row["rule"] is None
