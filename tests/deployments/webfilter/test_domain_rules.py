"""Wildcard (`*.name`: subdomains only) and `/regex/` domain rules, enforced by the real Squid (and dnsmasq for
wildcards); adblock imports whose `@@` exceptions become whitelist entries that win over blocks."""

from __future__ import annotations

import dns.message
import dns.query
import dns.rdatatype
import pytest

pytestmark = pytest.mark.realserver


def resolve(server: str, name: str) -> list[str]:
    answer = dns.query.udp(dns.message.make_query(name, dns.rdatatype.A), server, timeout=2)
    return [item.address for rrset in answer.answer for item in rrset]


async def clear(wf) -> None:
    await wf.api.delete("/api/domain-blacklist/clear-all")
    for item in (await wf.api.get("/api/domain-whitelist", params={"limit": 1000})).json()["data"]:
        await wf.api.delete(f"/api/domain-whitelist/{item['id']}")


async def test_a_wildcard_blocks_the_subdomains_only_in_squid_and_in_dns(wf):
    r = await wf.api.post("/api/domain-blacklist", json={"domain": "*.Ads.Tracker.test"})
    assert r.status_code == 200 and r.json()["data"]["domain"] == "*.ads.tracker.test"
    blocked = await wf.fetch(wf.url("cdn.ads.tracker.test", "/wild-1"))
    assert blocked.status_code == 403 and "domain_blacklist" in blocked.text
    assert (await wf.fetch(wf.url("ads.tracker.test", "/wild-2"))).status_code == 200  # the name itself passes
    row = await wf.wait_logged("/wild-1")
    assert row["blocked"] is True and row["rule"] == "domain_blacklist"
    dns_address = (await wf.app.state.component.proxy.status.remote())["dns"]
    assert resolve(dns_address, "deep.ads.tracker.test") == ["0.0.0.0"]
    assert resolve(dns_address, "ads.tracker.test") == ["127.0.0.1"]
    await clear(wf)


async def test_a_regex_rule_blocks_the_hosts_it_matches_through_squid(wf):
    r = await wf.api.post("/api/domain-blacklist", json={"domain": "/^cdn\\.ads\\./"})
    assert r.status_code == 200, r.text
    assert (await wf.fetch(wf.url("cdn.ads.tracker.test", "/re-1"))).status_code == 403
    assert (await wf.fetch(wf.url("ads.tracker.test", "/re-2"))).status_code == 200
    assert (await wf.wait_logged("/re-1"))["rule"] == "domain_blacklist"
    await clear(wf)


@pytest.mark.parametrize(
    "rule, reason",
    [
        ("/(a+)+$/", "nested quantifiers"),
        ("/(ads|ad)*x/", "alternation"),
        ("/\\d+/", "escapes"),
        ("/[a-z/", "invalid regex"),
        ("/.*/", "every name"),
        ("/" + "a" * 256 + "/", "longer than 255"),
        ("ads*.example", "leading `*.`"),
        ("*.com", "two labels"),
    ],
)
async def test_bad_rules_are_refused_with_400_and_the_reason_on_every_path(wf, rule, reason):
    r = await wf.api.post("/api/domain-blacklist", json={"domain": rule})
    assert r.status_code == 400 and r.json()["status"] == "error" and reason in r.json()["detail"]
    r = await wf.api.post("/api/domain-whitelist", json={"domain": rule})
    assert r.status_code == 400 and reason in r.json()["detail"]
    backup = (await wf.api.get("/api/maintenance/backup-config")).json()["data"]
    backup["lists"]["domain-blacklist"] = [{"domain": rule, "description": ""}]
    r = await wf.api.post("/api/maintenance/restore-config", json={"config": backup})
    assert r.status_code == 400 and reason in r.json()["detail"]
    imported = (await wf.api.post("/api/domain-blacklist/import", json={"content": rule + "\n"})).json()["data"]
    assert imported["added"] == 0 and imported["invalid"] == 1
    assert (await wf.api.get("/api/domain-blacklist")).json()["meta"]["total"] == 0


ADBLOCK = """[Adblock Plus 2.0]
! Title: a list with exceptions
||tracker.test^
@@||cdn.ads.tracker.test^
example.com##.banner
||tracker.test/pixel.gif
||other.test^$domain=news.example
"""


async def test_adblock_exceptions_become_whitelist_entries_that_win_over_the_blocks(wf):
    r = await wf.api.post("/api/blacklists/import", json={"type": "domain", "content": ADBLOCK})
    data = r.json()["data"]
    assert r.status_code == 200 and data["added"] == 1 and data["whitelist_added"] == 1
    assert data["accepted_lines"] == 2
    assert data["skipped_lines"] == {"adblock_cosmetic": 1, "adblock_option": 1, "adblock_url_rule": 1}
    whitelist = [e["domain"] for e in (await wf.api.get("/api/domain-whitelist")).json()["data"]]
    assert whitelist == ["cdn.ads.tracker.test"]
    assert (await wf.fetch(wf.url("ads.tracker.test", "/ab-1"))).status_code == 403
    assert (await wf.fetch(wf.url("cdn.ads.tracker.test", "/ab-2"))).status_code == 200  # the exception wins
    assert (await wf.fetch(wf.url("other.test", "/ab-3"))).status_code == 200  # $domain= rule not taken
    await clear(wf)
