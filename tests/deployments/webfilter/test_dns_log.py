"""The DNS query log: every query our dnsmasq answers lands in the log store with its outcome, and a blocked
one with the blacklist entry that decided it; DNS rows are in the analytics, masked under gdpr_mode and
deleted by the retention like HTTP rows. Real dnsmasq, real DNS queries (dnspython)."""

from __future__ import annotations

import os
import random
import time

import pytest

from actors.webfilter.dnslog import DnsRow
from tests.deployments.webfilter.netns import lan_resolve, namespace, upstream_resolver
from tests.polling import eventually

pytestmark = pytest.mark.realserver


async def put(wf, name, value):
    r = await wf.api.put(f"/api/settings/{name}", json={"value": value})
    assert r.status_code == 200, r.text


async def dns_row(wf, name: str, **expected) -> dict:
    """The newest DNS row for `name` once it has the `expected` fields (polls the API; bounded)."""

    async def newest() -> dict | None:
        r = await wf.api.get("/api/dns/logs", params={"search": name, "limit": 20})
        assert r.status_code == 200, r.text
        rows = [row for row in r.json()["data"] if row["name"] == name]
        return rows[0] if rows and all(rows[0][k] == v for k, v in expected.items()) else None

    row: dict = await eventually(newest, timeout=10, what=f"a DNS row for {name} with {expected}")
    return row


async def test_a_blocked_name_is_logged_with_the_blacklist_entry_that_decided_it(wf):
    added = await wf.api.post("/api/domain-blacklist", json={"domain": "dnslog-ads.test"})
    assert added.status_code == 200, added.text
    try:
        # a name only added: dnsmasq took it by SIGHUP in its delta, and forwards it to the sinkhole
        status = await wf.app.state.component.proxy.status.remote()
        assert status["last_apply"]["dns_reloaded"] is True and status["last_apply"]["dns_delta"] == 1
        assert await wf.resolve("cdn.dnslog-ads.test") == ["0.0.0.0"]
        row = await dns_row(wf, "cdn.dnslog-ads.test", blocked=True)
        assert row["outcome"] == "sinkholed" and row["answer"] == "0.0.0.0" and row["qtype"] == "A"
        assert row["upstream"] is None  # the sinkhole is not an upstream
        assert (row["rule"], row["source"]) == ("dnslog-ads.test", "domain-blacklist")
        assert row["client_ip"] == "127.0.0.1" and row["timestamp"].endswith("Z")
        # a configured name is answered locally, allowed, with no rule
        assert await wf.resolve("allowed.test") == ["127.0.0.1"]
        local = await dns_row(wf, "allowed.test", outcome="local")
        assert local["blocked"] is False and local["rule"] is None
        # the analytics cover DNS next to HTTP
        stats = (await wf.api.get("/api/dns/stats", params={"hours": 1})).json()["data"]
        assert stats["blocked_count"] >= 1 and stats["by_outcome"]["sinkholed"] >= 1
        assert {"rule": "dnslog-ads.test", "source": "domain-blacklist", "count": 1} in stats["top_rules"]
        assert {"name": "cdn.dnslog-ads.test", "count": 1} in stats["top_blocked_names"]
        by_source = (await wf.api.get("/api/logs/stats")).json()["data"]["by_source"]
        assert by_source["dns"]["blocked_count"] >= 1 and by_source["dns"]["total_count"] >= 2
        summary = (await wf.api.get("/api/dashboard/summary")).json()["data"]
        assert summary["dns_24h"]["blocked"] >= 1
        blocked_only = (await wf.api.get("/api/dns/logs", params={"blocked": "true"})).json()["data"]
        assert blocked_only and all(r["blocked"] for r in blocked_only)
        # in NXDOMAIN mode the row says so, with the same rule
        await put(wf, "dns_block_mode", "nxdomain")
        assert await wf.resolve("nx.dnslog-ads.test") == []
        nx = await dns_row(wf, "nx.dnslog-ads.test", outcome="nxdomain")
        assert nx["blocked"] is True and nx["rule"] == "dnslog-ads.test"
    finally:
        await put(wf, "dns_block_mode", "sinkhole")
        await wf.api.delete("/api/domain-blacklist/clear-all")


async def test_dns_rows_are_masked_under_gdpr_mode_and_bad_filters_are_refused(wf):
    assert await wf.resolve("other.test") == ["127.0.0.1"]
    assert (await dns_row(wf, "other.test"))["client_ip"] == "127.0.0.1"
    await put(wf, "gdpr_mode", True)
    try:
        assert (await dns_row(wf, "other.test"))["client_ip"] == "127.0.0.0"
        clients = (await wf.api.get("/api/dns/stats")).json()["data"]["top_clients"]
        assert clients and all(c["client_ip"].endswith(".0") for c in clients)
    finally:
        await put(wf, "gdpr_mode", False)
    assert (await wf.api.get("/api/dns/logs", params={"outcome": "maybe"})).status_code == 422
    assert (await wf.api.get("/api/dns/stats", params={"hours": 0})).status_code == 422


async def test_the_retention_deletes_old_dns_rows_too(wf):
    store = wf.app.state.component.logs.instance
    old = DnsRow(time.time() - 10 * 86400, "127.0.0.9", "old.dnslog.test", "A", "local", ["127.0.0.1"])
    async with store.turn:  # between two turns of the running tail loop, which uses the same connection
        await store.tail_dns_once()  # whatever dnsmasq logged so far, so the offset below is current
        inode, end = store.tail_db.execute(
            'SELECT inode, "offset" FROM tail_state WHERE path = ?', [store.dns_log]
        ).fetchone()
        store._insert_dns([old], inode, end)
    await put(wf, "log_retention_days", 7)
    try:
        r = await wf.api.post("/api/logs/clear-old")
        assert r.json()["data"]["dns_deleted"] == 1
        gone = (await wf.api.get("/api/dns/logs", params={"search": "old.dnslog.test"})).json()["data"]
        assert gone == []
    finally:
        await put(wf, "log_retention_days", 30)


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
async def test_a_lan_client_query_forwarded_upstream_is_logged_with_the_upstream_and_its_answer(wf):
    k = random.randint(2, 250)
    with namespace("dl", f"198.18.{k}") as lan, namespace("du", f"198.19.{k}") as up:
        async with upstream_resolver(up, {"shop.dnslog.test": "127.0.0.1"}):
            r = await wf.api.post("/api/settings", json={"dns_listen": [lan.host], "dns_upstreams": [up.peer]})
            assert r.status_code == 200, r.text
            added = await wf.api.post("/api/domain-blacklist", json={"domain": "ads.dnslog.test"})
            assert added.status_code == 200
            try:
                assert await lan_resolve(lan, lan.host, "shop.dnslog.test") == ["127.0.0.1"]
                row = await dns_row(wf, "shop.dnslog.test", outcome="forwarded")
                assert (row["client_ip"], row["upstream"], row["answer"]) == (lan.peer, up.peer, "127.0.0.1")
                assert row["blocked"] is False and row["rule"] is None
                assert await lan_resolve(lan, lan.host, "ads.dnslog.test") == ["0.0.0.0"]
                blocked = await dns_row(wf, "ads.dnslog.test", blocked=True)
                assert (blocked["client_ip"], blocked["rule"]) == (lan.peer, "ads.dnslog.test")
                mine = (await wf.api.get("/api/dns/logs", params={"client_ip": lan.peer})).json()
                assert mine["meta"]["total"] >= 2 and {r["client_ip"] for r in mine["data"]} == {lan.peer}
            finally:
                await wf.api.delete("/api/domain-blacklist/clear-all")
                r = await wf.api.post("/api/settings", json={"dns_listen": [], "dns_upstreams": []})
                assert r.status_code == 200, r.text
