"""The CRS inspection tier: HAProxy (bans, limits, client address) → nginx + ModSecurity + OWASP CRS
on loopback → origin. Real HAProxy, real nginx, real CRS (issue 23)."""

from __future__ import annotations

import os
import signal
import stat
from typing import Any

import httpx
import pytest

from actors.mitigation.node import NodeError
from actors.mitigation.settings import WafSettings
from tests.deployments.mitigation.proxy_protocol import proxy_v2, raw_get
from tests.polling import eventually

SQLI = "admin' OR 1=1 UNION SELECT password FROM users--"
XXE = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'
PROXY = "127.0.0.70"


async def crs_fleet(make_fleet: Any, **waf: Any) -> Any:
    node = {k: waf.pop(k) for k in ("trusted_proxies", "accept_proxy", "ban_seconds") if k in waf}
    return await make_fleet(waf={"engine": "crs", "paranoia_level": 2, **waf}, flood_rps=100000, **node)


async def post(url: str, **kwargs: Any) -> int:
    async with httpx.AsyncClient(trust_env=False, timeout=10.0) as client:
        return (await client.post(url, **kwargs)).status_code


async def test_sqli_in_a_json_body_and_in_a_form_body_is_blocked_at_paranoia_2(make_fleet):
    fleet = await crs_fleet(make_fleet)
    url = fleet.node_url() + "/api/login"
    assert await post(url, json={"user": SQLI, "password": "x"}) == 403
    assert await post(url, data={"user": SQLI, "password": "x"}) == 403
    assert await post(url, json={"filter": {"name": "x' AND SLEEP(5)#"}}) == 403  # nested


async def test_xxe_in_an_xml_body_is_blocked(make_fleet):
    fleet = await crs_fleet(make_fleet)
    assert await post(fleet.node_url() + "/soap", content=XXE, headers={"Content-Type": "application/xml"}) == 403
    plain = "<?xml version='1.0'?><order><id>7</id><note>ring twice</note></order>"
    assert await post(fleet.node_url() + "/soap", content=plain, headers={"Content-Type": "application/xml"}) == 200


async def test_sqli_and_xss_in_a_path_segment_are_blocked(make_fleet):
    # five blocks of one source ban it (`ban_after` 5): the ordinary paths below would then get the ban's
    # 403 as soon as the ban lands, which on a loaded machine was before they were asked
    fleet = await crs_fleet(make_fleet, ban_after=0)
    async with httpx.AsyncClient(trust_env=False) as client:
        for segment in (
            "1%27%20UNION%20ALL%20SELECT%20NULL%2Cversion%28%29--%20-",
            "%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E",
            "%24(printf%20hi)",  # CRS's own injection rules read the path as well (rayfleet.crs.widening)
            "javascript:alert(1)",
            "x%3F%3Cscript%3Ealert(1)%3C%2Fscript%3E",  # behind an encoded `?`: the raw path is read
        ):
            assert (await client.get(fleet.node_url() + "/files/" + segment)).status_code == 403, segment
        for path in ("/files/report-2024%20final.pdf", "/docs/javascript-tutorial", "/faq/what%3Fwhy.html"):
            assert (await client.get(fleet.node_url() + path)).status_code == 200, path
        for link in ("https://news.example/story?id=7", "https://www.google.com/search?q=shoes+(size+42)&oq=shoes"):
            referer = {"Referer": link}  # from another site; a whole URL, which CRS's rules do not read
            assert (await client.get(fleet.node_url() + "/files/a.pdf", headers=referer)).status_code == 200, link


async def test_ordinary_json_and_form_posts_pass(make_fleet):
    fleet = await crs_fleet(make_fleet)
    url = fleet.node_url() + "/api/orders"
    order = {"customer": "Ana Souza", "email": "ana@example.org", "items": [{"sku": "A-17", "qty": 2}], "note": None}
    assert await post(url, json=order) == 200
    form = {"name": "Tom O'Brien", "comment": "Great service, will order again! 5/5", "zip": "10115"}
    assert await post(url, data=form) == 200
    async with httpx.AsyncClient(trust_env=False) as client:
        assert (await client.get(fleet.node_url() + "/search?q=blue+shoes&page=2")).status_code == 200


async def test_a_body_over_the_limit_is_rejected_or_inspected_in_part_as_configured(make_fleet):
    padding = "a" * 3000
    rejecting = await crs_fleet(make_fleet, body_limit=2048)
    assert await post(rejecting.node_url() + "/upload", data={"text": padding}) == 413
    assert await post(rejecting.node_url() + "/upload", data={"text": "short"}) == 200
    partial = await crs_fleet(make_fleet, body_limit=2048, body_limit_action="partial")
    url = partial.node_url() + "/upload"
    assert await post(url, data={"text": padding}) == 200
    # what lies within the limit is still inspected
    assert await post(url, data={"user": SQLI, "text": padding}) == 403


async def test_an_excluded_rule_id_no_longer_blocks(make_fleet):
    scanner = {"User-Agent": "sqlmap/1.7.2#stable (https://sqlmap.org)"}  # rule 913100, critical
    strict = await crs_fleet(make_fleet)
    async with httpx.AsyncClient(trust_env=False) as client:
        assert (await client.get(strict.node_url() + "/", headers=scanner)).status_code == 403
        relaxed = await crs_fleet(make_fleet, exclusions=[913100])
        assert (await client.get(relaxed.node_url() + "/", headers=scanner)).status_code == 200
        assert (await client.get(relaxed.node_url() + "/?id=1' OR '1'='1")).status_code == 403


async def test_the_waf_settings_are_applied_through_a_policy(make_fleet):
    fleet = await make_fleet(flood_rps=100000)
    url = fleet.node_url() + "/api"
    assert await post(url, json={"user": SQLI}) == 200  # the HAProxy rules never see a body
    rule = {"type": "waf", "engine": "crs", "paranoia_level": 2, "exclusions": [942100]}
    answer = await fleet.client.post("/api/v1/policy", json={"name": "crs", "rules": [rule]})
    assert answer.status_code == 200, answer.text
    assert await post(url, json={"user": SQLI}) == 403
    assert fleet.node().inspection.tier.policy.exclusions == (942100,)
    scaled = await fleet.client.post("/api/v1/scale", json={"action": "scale_up", "count": 1})
    assert scaled.status_code == 200  # a node added later gets the waf policy too
    assert await post(fleet.node_url("node-2") + "/api", json={"user": SQLI}) == 403


async def test_a_waf_policy_removed_gives_every_node_the_configured_waf_again(make_fleet):
    """DELETE /policy/waf: the configured WAF (HAProxy's rules) on every node again, the policy's CRS
    tier stopped, the record without the waf rule; an old share or policy replayed is refused (409)."""
    fleet = await make_fleet(initial_nodes=2, flood_rps=100000)
    client, nodes = fleet.client, ("node-1", "node-2")
    none = await client.delete("/api/v1/policy/waf")
    assert none.status_code == 404 and none.json() == {"error": {"code": "not_found", "message": "no waf in force"}}
    waf = {"type": "waf", "engine": "crs", "paranoia_level": 2, "ban_after": 0}
    limit = {"type": "rate_limit", "value": 1000}
    answer = await client.post("/api/v1/policy", json={"name": "strict", "rules": [limit, waf]})
    assert answer.status_code == 200, answer.text
    assert (await client.get("/api/v1/policy")).json()["waf"]["engine"] == "crs"
    for node in nodes:
        assert await post(fleet.node_url(node) + "/api", json={"user": SQLI}) == 403, node
    old_share, old_generation = fleet.fleet._share(), fleet.fleet.generation

    removed = await client.delete("/api/v1/policy/waf")
    assert removed.status_code == 200, removed.text
    body = removed.json()
    assert body["nodes"] == list(nodes) and body["failed"] == {}
    assert body["waf"] == WafSettings().model_dump() and body["rate_limit_rps"] == 1000
    assert body["policy"] == {"name": "strict", "rules": [limit]}  # the rest of the policy stays in force
    assert (await client.get("/api/v1/policy")).json() == {**body, "nodes": None, "failed": None}
    async with httpx.AsyncClient(trust_env=False, timeout=10.0) as http:
        for node in nodes:
            url = fleet.node_url(node)
            assert await post(url + "/api", json={"user": SQLI}) == 200, node  # the rules never read a body
            assert (await http.get(url + "/?q=<script>alert(1)</script>")).status_code == 403, node
            assert not fleet.node(node).settings.crs and fleet.node(node).inspection.tier is None

    node = fleet.node()
    replays = (node.sync_share(old_share), node.apply_settings(old_share.changes, None, old_generation))
    for replay in replays:
        with pytest.raises(NodeError) as refused:
            await replay
        assert refused.value.status == 409 and "generation" in refused.value.message
    assert not node.settings.crs and node.inspection.tier is None
    assert await post(fleet.node_url() + "/api", json={"user": SQLI}) == 200
    assert (await client.delete("/api/v1/policy/waf")).status_code == 404
    unknown = await client.delete("/api/v1/policy/firewall")
    assert unknown.status_code == 422 and unknown.json()["error"]["code"] == "validation_error"


async def test_a_waf_policy_removed_over_a_configured_crs_gives_back_the_configured_crs(make_fleet):
    scanner = {"User-Agent": "sqlmap/1.7.2#stable (https://sqlmap.org)"}  # rule 913100, excluded by the configuration
    fleet = await crs_fleet(make_fleet, exclusions=[913100], ban_after=0)
    url = fleet.node_url() + "/"
    waf = {"type": "waf", "engine": "crs", "paranoia_level": 2, "ban_after": 0}  # no exclusion
    assert (await fleet.client.post("/api/v1/policy", json={"name": "strict", "rules": [waf]})).status_code == 200
    async with httpx.AsyncClient(trust_env=False, timeout=10.0) as http:
        assert (await http.get(url, headers=scanner)).status_code == 403
        removed = await fleet.client.delete("/api/v1/policy/waf")
        assert removed.status_code == 200 and removed.json()["policy"] is None
        assert removed.json()["waf"]["exclusions"] == [913100]
        assert (await http.get(url, headers=scanner)).status_code == 200
    assert await post(url + "api", json={"user": SQLI}) == 403  # the configured CRS still inspects bodies
    assert fleet.node().inspection.tier.policy.exclusions == (913100,)


@pytest.mark.parametrize(
    "waf",
    [
        {"engine": "modsec"},
        {"paranoia_level": 5},
        {"paranoia_level": 0},
        {"paranoia_level": "2"},
        {"anomaly_threshold": 0},
        {"anomaly_threshold": 2.5},
        {"body_limit": 10},
        {"body_limit": 1 << 40},
        {"body_limit_action": "drop"},
        {"exclusions": ["942100"]},
        {"exclusions": [0]},
        {"exclusions": "942100"},
        {"fail_open": 1},
        {"fail_open": "false"},
        {"paranoia": 2},
    ],
)
async def test_waf_settings_are_validated_strictly(fleet, waf):
    answer = await fleet.client.post("/api/v1/policy", json={"name": "x", "rules": [{"type": "waf", **waf}]})
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "validation_error"


def _kill_nginx(fleet: Any) -> int:
    tier = fleet.node().inspection.tier
    pid = tier.pid
    os.killpg(pid, signal.SIGKILL)  # master and worker
    return pid


async def test_nginx_killed_is_restarted_and_nothing_passes_uninspected_meanwhile(make_fleet):
    fleet = await crs_fleet(make_fleet)
    url = fleet.node_url() + "/"
    tier = fleet.node().inspection.tier
    async with httpx.AsyncClient(trust_env=False, limits=httpx.Limits(max_keepalive_connections=0)) as client:
        assert (await client.get(url)).status_code == 200
        old = _kill_nginx(fleet)
        # HAProxy retries the connection while the supervisor restarts nginx: refused (403), reset (502) or unavailable (503), never the origin
        assert (await client.get(url + "?q=<script>alert(1)</script>")).status_code in (403, 502, 503)

        async def back() -> bool:
            return tier.pid not in (None, old) and (await client.get(url)).status_code == 200

        await eventually(back, timeout=30, what="nginx restarted by its supervisor")
        assert (await client.get(url + "?q=<script>alert(1)</script>")).status_code == 403
        assert tier.status()["restarts"] == 1
        children = (await fleet.client.get("/nodes/node-1/health")).json()["children"]
        assert {c["name"] for c in children} == {"haproxy-node-1", "nginx-crs-node-1"}


async def test_while_nginx_stays_down_requests_get_503_fail_closed(make_fleet):
    fleet = await crs_fleet(make_fleet)
    url = fleet.node_url() + "/"
    tier = fleet.node().inspection.tier
    await tier.supervised.detach()  # no restart: the tier stays down
    _kill_nginx(fleet)
    async with httpx.AsyncClient(trust_env=False, timeout=15.0) as client:
        assert (await client.get(url)).status_code == 503
        await tier.supervised.start()
        assert (await client.get(url)).status_code == 200


async def test_with_fail_open_requests_reach_the_origin_while_nginx_is_down(make_fleet):
    fleet = await crs_fleet(make_fleet, fail_open=True)
    url = fleet.node_url() + "/"
    async with httpx.AsyncClient(trust_env=False, limits=httpx.Limits(max_keepalive_connections=0)) as client:
        _kill_nginx(fleet)

        async def uninspected() -> bool:
            return (await client.get(url)).status_code == 200

        await eventually(uninspected, timeout=10, what="the backup server taking over")


async def threats(fleet: Any) -> dict[str, int]:
    body = (await fleet.client.get("/api/v1/threats")).json()
    return {t["ip"]: t["attacks"] for t in body["top_attackers"]}


async def threatened(fleet: Any, ip: str) -> bool:
    return ip in await threats(fleet)


async def test_a_block_lands_in_the_threat_book_and_bans_the_real_client_behind_x_forwarded_for(make_fleet):
    fleet = await crs_fleet(make_fleet, trusted_proxies=[f"{PROXY}/32"], ban_after=2)
    address = fleet.node().address
    attack = {"X-Forwarded-For": "127.0.0.71", "User-Agent": "sqlmap/1.7"}
    # the client's own X-Rayfleet-Client header is replaced by HAProxy
    forged = {**attack, "X-Rayfleet-Client": "127.0.0.99"}
    assert await raw_get(address, PROXY, headers=forged) == 403
    await eventually(lambda: threatened(fleet, "127.0.0.71"), what="the block in the book")
    assert {PROXY, "127.0.0.99"}.isdisjoint(await threats(fleet))
    assert await raw_get(address, PROXY, headers=attack) == 403

    async def banned() -> dict[str, Any] | None:
        entries = (await fleet.client.get("/nodes/node-1/api/v1/blacklist")).json()["entries"]
        return next((e for e in entries if e["ip"] == "127.0.0.71"), None)

    ban = await eventually(banned, what="the repeat offender banned")
    assert ban["source"] == "waf" and "913100" in ban["reason"]
    assert await raw_get(address, PROXY, headers={"X-Forwarded-For": "127.0.0.71"}) == 403  # refused by HAProxy
    hits = (await fleet.client.get("/nodes/node-1/api/v1/rules")).json()["builtin_hits"]
    assert hits.get("crs-913100", 0) >= 1
    paths = fleet.node().inspection.paths  # matched data quotes requests: the logs are the owner's only
    assert {stat.S_IMODE(p.stat().st_mode) for p in (paths.audit_log, paths.error_log)} == {0o600}
    ordinary = {"X-Forwarded-For": "127.0.0.72"}
    assert await raw_get(address, PROXY, headers=ordinary) == 200  # the others pass


async def test_a_block_names_the_client_in_the_proxy_protocol_header(make_fleet):
    fleet = await crs_fleet(make_fleet, accept_proxy=True)
    status = await raw_get(fleet.node().address, PROXY, prefix=proxy_v2("127.0.0.73"), headers={"User-Agent": "nikto"})
    assert status == 403
    await eventually(lambda: threatened(fleet, "127.0.0.73"), what="the block in the book")
    assert PROXY not in await threats(fleet)


def test_the_audit_log_never_holds_request_headers_or_bodies():
    from pathlib import Path

    from rayfleet.crs.config import CrsPaths, CrsPolicy, render_modsecurity

    text = render_modsecurity(CrsPolicy(), CrsPaths(Path("/tmp/x")))
    parts = next(line for line in text.splitlines() if line.startswith("SecAuditLogParts"))
    assert not set(parts.split()[1]) & set("BCEFIJK")
    assert "SecAuditLogFormat JSON" in text


def test_the_corpus_has_both_splits_bodies_and_a_few_hundred_ordinary_requests():
    from tests.actors.mitigation.waf_eval import load_crs_corpus

    corpus = load_crs_corpus()
    benign = [c for c in corpus if c["label"] == "benign"]
    assert len(benign) >= 300
    for split in ("dev", "heldout"):
        attacks = [c for c in corpus if c["label"] == "attack" and c["split"] == split]
        assert {"form", "json", "xml", "multipart", "query", "cookie", "header", "path"} <= {
            c["placement"] for c in attacks
        }
        assert {"sql_injection", "xss", "path_traversal", "command_injection", "xxe"} <= {
            c["category"] for c in attacks
        }
    by_payload: dict[str, set[str]] = {}
    for item in corpus:  # every placement of one payload sits in one split
        key = item["category"] + item["path"] + str(item["body"]) + str(sorted(item["headers"].items()))
        by_payload.setdefault(key, set()).add(item["split"])
    assert all(len(splits) == 1 for splits in by_payload.values())
