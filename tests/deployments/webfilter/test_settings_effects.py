"""Every setting the API accepts takes effect: each is observed on real proxied traffic (or on the route
it governs), then restored."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.realserver


async def put(wf, name, value):
    r = await wf.api.put(f"/api/settings/{name}", json={"value": value})
    assert r.status_code == 200, r.text
    return r.json()


async def test_settings_are_a_flat_map_and_unknown_or_invalid_ones_are_refused(wf):
    r = await wf.api.get("/api/settings")
    data = r.json()["data"]
    assert data["egress_default_deny"] is False and data["log_retention_days"] == 30
    bad = await wf.api.post("/api/settings", json={"custom_squid_conf": "x"})
    assert bad.status_code == 400 and "only settings that take effect" in bad.json()["detail"]
    bad = await wf.api.post("/api/settings", json={"egress_default_deny": "maybe", "gdpr_mode": True})
    assert bad.status_code == 400
    assert (await wf.api.get("/api/settings")).json()["data"]["gdpr_mode"] is False  # nothing half-written


async def test_egress_default_deny_allows_only_allowlisted_destinations_and_fails_closed(wf):
    await put(wf, "egress_default_deny", True)
    try:
        refused = await wf.fetch(wf.url("allowed.test", "/egress-1"))
        assert refused.status_code == 403 and "egress_default_deny" in refused.text
        r = await wf.api.post("/api/egress-allowlist", json={"entry": "allowed.test", "description": "ok"})
        assert r.status_code == 200 and r.json()["data"]["type"] == "domain"
        assert (await wf.fetch(wf.url("allowed.test", "/egress-2"))).status_code == 200
        assert (await wf.fetch(wf.url("other.test", "/egress-3"))).status_code == 403
        r = await wf.api.post("/api/egress-allowlist", json={"entry": "127.0.0.2/32"})
        assert r.json()["data"]["type"] == "cidr"
        assert (await wf.fetch(wf.url("second.test", "/egress-4"))).status_code == 200
        row = await wf.wait_logged("/egress-3")
        assert row["rule"] == "egress_default_deny"
    finally:
        await wf.api.delete("/api/egress-allowlist/clear-all")
        await put(wf, "egress_default_deny", False)
    assert (await wf.fetch(wf.url("other.test", "/egress-5"))).status_code == 200


async def test_blacklist_toggles_switch_enforcement(wf):
    await wf.api.post("/api/domain-blacklist", json={"domain": "other.test"})
    await wf.api.post("/api/ip-blacklist", json={"ip": "127.0.0.2"})
    try:
        assert (await wf.fetch(wf.url("other.test", "/tog-1"))).status_code == 403
        await put(wf, "enable_domain_blacklist", False)
        assert (await wf.fetch(wf.url("other.test", "/tog-2"))).status_code == 200
        assert (await wf.fetch(wf.url("second.test", "/tog-3"))).status_code == 403
        await put(wf, "enable_ip_blacklist", False)
        assert (await wf.fetch(wf.url("second.test", "/tog-4"))).status_code == 200
    finally:
        await put(wf, "enable_domain_blacklist", True)
        await put(wf, "enable_ip_blacklist", True)
        await wf.api.delete("/api/domain-blacklist/clear-all")
        await wf.api.delete("/api/ip-blacklist/clear-all")


async def test_block_direct_ip_refuses_bare_addresses_only(wf):
    await put(wf, "block_direct_ip", True)
    try:
        r = await wf.fetch(f"http://127.0.0.1:{wf.origin.port}/direct-1")
        assert r.status_code == 403 and "direct_ip" in r.text
        assert (await wf.fetch(wf.url("allowed.test", "/direct-2"))).status_code == 200
    finally:
        await put(wf, "block_direct_ip", False)
    assert (await wf.fetch(f"http://127.0.0.1:{wf.origin.port}/direct-3")).status_code == 200


async def test_allowed_networks_and_blocked_sources_decide_who_may_use_the_proxy(wf):
    await put(wf, "blocked_sources", ["127.0.0.1"])
    try:
        r = await wf.fetch(wf.url("allowed.test", "/src-1"))
        assert r.status_code == 403 and "source_blocked" in r.text
    finally:
        await put(wf, "blocked_sources", [])
    await put(wf, "allowed_networks", ["10.0.0.0/8"])
    try:
        r = await wf.fetch(wf.url("allowed.test", "/src-2"))
        assert r.status_code == 403 and "client_not_allowed" in r.text
    finally:
        await put(wf, "allowed_networks", ["127.0.0.0/8", "::1"])
    assert (await wf.fetch(wf.url("allowed.test", "/src-3"))).status_code == 200


async def test_enable_waf_switches_every_category(wf):
    attack = wf.url("allowed.test", "/search?q=1%27%20OR%20%271%27=%271")
    assert (await wf.fetch(attack)).status_code == 403
    await put(wf, "enable_waf", False)
    try:
        assert (await wf.fetch(attack)).status_code == 200
    finally:
        await put(wf, "enable_waf", True)


async def test_gdpr_mode_masks_client_addresses_in_the_logs(wf):
    await wf.fetch(wf.url("allowed.test", "/gdpr-1"))
    assert (await wf.wait_logged("/gdpr-1"))["client_ip"] == "127.0.0.1"
    await put(wf, "gdpr_mode", True)
    try:
        assert (await wf.wait_logged("/gdpr-1"))["client_ip"] == "127.0.0.0"
    finally:
        await put(wf, "gdpr_mode", False)


async def test_log_retention_days_is_what_clear_old_honours(wf):
    store = wf.app.state.component.logs.instance
    from actors.webfilter.logparse import parse_line

    old = time.time() - 10 * 86400
    line = f"{old:.3f} 127.0.0.9 GET 200 TCP_MISS 10 20 1 - http://old.test/retention -"
    store.ingest([parse_line(line)], publish=False)
    await put(wf, "log_retention_days", 30)
    r = await wf.api.post("/api/logs/clear-old")
    assert r.json()["data"] == {"deleted": 0, "dns_deleted": 0, "retention_days": 30}
    await put(wf, "log_retention_days", 7)
    r = await wf.api.post("/api/logs/clear-old")
    assert r.json()["data"] == {"deleted": 1, "dns_deleted": 0, "retention_days": 7}
    await put(wf, "log_retention_days", 30)


async def test_security_score_follows_the_effective_state(wf):
    base = (await wf.api.get("/api/security/score")).json()["data"]
    assert base["max_score"] == 100
    assert base["checks"]["domain_blacklist"] is False  # enabled but empty: protects nothing
    await wf.api.post("/api/domain-blacklist", json={"domain": "score.test"})
    after = (await wf.api.get("/api/security/score")).json()["data"]
    assert after["score"] == base["score"] + 15 and after["checks"]["domain_blacklist"] is True
    await put(wf, "enable_domain_blacklist", False)
    assert (await wf.api.get("/api/security/score")).json()["data"]["score"] == base["score"]
    await put(wf, "enable_domain_blacklist", True)
    await wf.api.delete("/api/domain-blacklist/clear-all")
