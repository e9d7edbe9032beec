"""dnsmasq's query log lines (as dnsmasq 2.90 writes them with log-queries=extra) become one row per query."""

from __future__ import annotations

import time

from actors.webfilter.dnslog import Assembler, stamp_to_epoch

NOW = time.mktime(time.strptime("2026 Nov 26 16:13:30", "%Y %b %d %H:%M:%S"))
LINES = """Nov 26 16:12:59 dnsmasq[14861]: started, version 2.90 cachesize 150
Nov 26 16:12:59 dnsmasq[14861]: read /tmp/dnsx/hosts - 1 names
Nov 26 16:13:00 dnsmasq[14861]: 1 127.0.0.1/57811 query[A] allowed.test from 127.0.0.1
Nov 26 16:13:00 dnsmasq[14861]: 1 127.0.0.1/57811 /tmp/dnsx/hosts allowed.test is 127.0.0.1
Nov 26 16:13:00 dnsmasq[14861]: 2 127.0.0.1/35653 query[A] Ads.test from 127.0.0.1
Nov 26 16:13:00 dnsmasq[14861]: 2 127.0.0.1/35653 config ads.test is 0.0.0.0
Nov 26 16:13:00 dnsmasq[14861]: 4 127.0.0.1/33894 query[AAAA] ads.test from 127.0.0.1
Nov 26 16:13:00 dnsmasq[14861]: 4 127.0.0.1/33894 config ads.test is ::
Nov 26 16:13:00 dnsmasq[14861]: 5 127.0.0.1/35888 query[A] nx.test from 127.0.0.1
Nov 26 16:13:00 dnsmasq[14861]: 5 127.0.0.1/35888 config nx.test is NXDOMAIN
Nov 26 16:13:00 dnsmasq[14861]: 7 127.0.0.1/33845 query[A] unknown.test from 127.0.0.1
Nov 26 16:13:00 dnsmasq[14861]: 7 127.0.0.1/33845 config error is REFUSED (EDE: not ready)
Nov 26 16:13:01 dnsmasq[14861]: 8 198.18.7.2/41354 query[A] shop.lan.test from 198.18.7.2
Nov 26 16:13:01 dnsmasq[14861]: 8 198.18.7.2/41354 forwarded shop.lan.test to 198.19.7.2
""".splitlines()
REPLY = [
    "Nov 26 16:13:01 dnsmasq[14861]: 8 198.18.7.2/41354 reply shop.lan.test is 127.0.0.1",
    "Nov 26 16:13:01 dnsmasq[14861]: 8 198.18.7.2/41354 reply shop.lan.test is 127.0.0.2",
]


def test_each_answered_query_is_one_row_with_its_outcome_and_a_forwarded_one_waits_for_its_reply():
    assembler = Assembler()
    rows = assembler.feed(LINES, now=NOW)
    seen = [(r.name, r.qtype, r.outcome, r.answer, r.blocked) for r in rows]
    assert seen == [
        ("allowed.test", "A", "local", "127.0.0.1", False),
        ("ads.test", "A", "sinkholed", "0.0.0.0", True),
        ("ads.test", "AAAA", "sinkholed", "::", True),
        ("nx.test", "A", "nxdomain", "NXDOMAIN", True),
        ("unknown.test", "A", "refused", "REFUSED (EDE: not ready)", False),
    ]
    assert rows[0].ts == stamp_to_epoch("Nov 26 16:13:00", NOW) and rows[0].client == "127.0.0.1"
    # the reply arrives in the next batch: the open query is completed then
    (shop,) = assembler.feed(REPLY, now=NOW)
    assert (shop.client, shop.outcome, shop.upstream, shop.answer) == (
        "198.18.7.2",
        "forwarded",
        "198.19.7.2",
        "127.0.0.1,127.0.0.2",
    )
    assert assembler.open == {}


def test_a_query_never_answered_is_given_up_as_no_answer_and_garbage_is_ignored():
    assembler = Assembler(timeout=30)
    query = "Nov 26 16:13:01 dnsmasq[1]: 9 127.0.0.1/5 query[A] lost.test from 127.0.0.1"
    garbage = ["", "not a dnsmasq line", "Nov 26 16:13:01 dnsmasq[1]: 9 127.0.0.1/5 reply", "Nov 99 99:99:99 x"]
    assert assembler.feed([query, *garbage], now=NOW) == []
    (row,) = assembler.feed([], now=NOW + 60)
    assert (row.name, row.outcome, row.blocked) == ("lost.test", "no_answer", False)


def test_a_restarted_dnsmasq_reuses_serials_without_mixing_queries():
    first = "Nov 26 16:13:01 dnsmasq[1]: 1 127.0.0.1/5 query[A] a.test from 127.0.0.1"
    second = "Nov 26 16:13:02 dnsmasq[2]: 1 127.0.0.1/6 query[A] b.test from 127.0.0.1"
    answer = "Nov 26 16:13:02 dnsmasq[2]: 1 127.0.0.1/6 config b.test is 0.0.0.0"
    assembler = Assembler()
    (row,) = assembler.feed([first, second, answer], now=NOW)
    assert row.name == "b.test" and list(assembler.open) == [("1", "1")]


def test_a_stamp_from_last_december_read_in_january_is_last_year():
    january = time.mktime(time.strptime("2027 Jan 01 00:00:05", "%Y %b %d %H:%M:%S"))
    stamp = stamp_to_epoch("Dec 31 23:59:59", january)
    assert stamp is not None and time.localtime(stamp).tm_year == 2026


def test_an_answer_forwarded_to_the_sinkhole_is_sinkholed_and_one_from_an_upstream_is_not():
    lines = [
        "Nov 26 16:13:01 dnsmasq[3]: 1 127.0.0.1/5 query[A] bad.test from 198.18.7.2",
        "Nov 26 16:13:01 dnsmasq[3]: 1 127.0.0.1/5 forwarded bad.test to 127.0.0.1#40123",
        "Nov 26 16:13:01 dnsmasq[3]: 1 127.0.0.1/5 reply bad.test is 0.0.0.0",
        "Nov 26 16:13:01 dnsmasq[3]: 2 127.0.0.1/6 query[A] zero.test from 198.18.7.2",
        "Nov 26 16:13:01 dnsmasq[3]: 2 127.0.0.1/6 forwarded zero.test to 198.19.7.2",
        "Nov 26 16:13:01 dnsmasq[3]: 2 127.0.0.1/6 reply zero.test is 0.0.0.0",
    ]
    bad, zero = Assembler(sinkholes={"127.0.0.1#40123"}).feed(lines, now=NOW)
    assert (bad.name, bad.outcome, bad.blocked, bad.upstream, bad.answer) == (
        "bad.test",
        "sinkholed",
        True,
        None,
        "0.0.0.0",
    )
    assert (zero.outcome, zero.blocked, zero.upstream) == ("forwarded", False, "198.19.7.2")
