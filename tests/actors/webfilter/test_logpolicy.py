"""What the log store applies by itself (tier 1): client masking at ingestion under gdpr_mode, the daily
retention on an injected clock, and following a tailed file across a rotation without losing or
repeating a line."""

from __future__ import annotations

import asyncio
import os

from actors.webfilter.dnslog import DnsRow
from actors.webfilter.logparse import Record
from actors.webfilter.logpolicy import LogSettings
from actors.webfilter.logstore import LogStore
from tests.polling import eventually

LINE = "{ts}.123 {client} GET 200 TCP_MISS 10 600 0 - http://a.test/{n} curl/8\n"
NOW = 1_790_000_000.0


def lines(first: int, last: int, client: str = "198.18.9.77", ts: float = NOW) -> str:
    return "".join(LINE.format(ts=int(ts), client=client, n=n) for n in range(first, last))


def clients(store: LogStore, table: str) -> set[str]:
    return {row[0] for row in store.db.execute(f"SELECT DISTINCT client FROM {table}").fetchall()}


def record(ts: float, client: str = "198.18.9.77") -> Record:
    return Record(ts, client, "GET", 200, "TCP_MISS", 1, 2, 0, False, None, "http://a.test/", "a.test", None)


def test_under_gdpr_mode_no_full_client_address_is_stored_nor_streamed(tmp_path):
    log = tmp_path / "access.log"
    log.write_text(lines(0, 3) + lines(3, 4, client="2001:db8::7"))
    store = LogStore(str(tmp_path / "logs.duckdb"), str(log))
    store.settings = LogSettings(gdpr_mode=True)
    assert store.tail_once() == 4
    assert clients(store, "logs") == {"198.18.9.0", "2001:db8::0"}
    assert clients(store, "r_client") == {"198.18.9.0", "2001:db8::0"}
    assert {row["client_ip"] for row in store.since(0)[1]} == {"198.18.9.0", "2001:db8::0"}
    store.stop()


async def test_dns_rows_are_masked_when_written(tmp_path):
    dns_log = tmp_path / "dns.log"
    dns_log.write_text(
        "Nov 26 16:13:00 dnsmasq[14861]: 2 198.18.9.77/35653 query[A] shop.test from 198.18.9.77\n"
        "Nov 26 16:13:00 dnsmasq[14861]: 2 198.18.9.77/35653 config shop.test is 127.0.0.1\n"
    )
    store = LogStore(str(tmp_path / "logs.duckdb"))
    store.dns_log = str(dns_log)
    store.settings = LogSettings(gdpr_mode=True)
    assert await store.tail_dns_once() == 1
    assert clients(store, "dns_logs") == {"198.18.9.0"}
    store.stop()


async def test_rows_stored_before_gdpr_mode_are_masked_by_the_maintenance_action(tmp_path):
    log = tmp_path / "access.log"
    log.write_text(lines(0, 2))
    store = LogStore(str(tmp_path / "logs.duckdb"), str(log))
    store.tail_once()
    store.dns_log = str(tmp_path / "dns.log")
    store._insert_dns([DnsRow(NOW, "198.18.9.77", "shop.test", "A", "local", ["127.0.0.1"])], 1, 0)
    assert clients(store, "logs") == {"198.18.9.77"} and clients(store, "dns_logs") == {"198.18.9.77"}
    assert await store.mask_stored() == {"http": 2, "dns": 1}
    for table in ("logs", "dns_logs", "r_client"):
        assert clients(store, table) == {"198.18.9.0"}, table
    assert await store.mask_stored() == {"http": 0, "dns": 0}  # idempotent
    store.stop()


async def test_retention_runs_by_itself_once_per_interval(tmp_path):
    now = [NOW]
    store = LogStore(
        str(tmp_path / "logs.duckdb"),
        interval=0.01,
        settings=lambda: LogSettings(retention_days=2),
        retention_interval=86400,
        clock=lambda: now[0],
    )
    store.ingest([record(NOW - 3 * 86400), record(NOW - 1 * 86400)], publish=False)
    await store.start()

    reader = store.db.cursor()  # the loop writes through its own connection meanwhile

    async def count() -> int | None:
        (n,) = reader.execute("SELECT count(*) FROM logs").fetchone() or (0,)
        return int(n) if n == 1 else None

    await eventually(count, timeout=10, what="the 3-day-old row deleted by the first turn")
    await eventually(lambda: store.retention["runs"] == 1 or None, timeout=10, what="the run recorded")
    assert store.retention["runs"] == 1 and store.retention["last_deleted"] == {"http": 1, "dns": 0}
    store.ingest([record(NOW - 5 * 86400)], publish=False)
    now[0] += 3600  # an hour later: not yet
    await asyncio.sleep(0.1)  # several turns of the 0.01 s loop pass; none may run the retention
    assert store.retention["runs"] == 1
    now[0] += 86400  # a day later: it runs again, and the row that was 1 day old is now past 2 days
    await eventually(lambda: store.retention["runs"] == 2 or None, timeout=10, what="the second daily run")
    assert reader.execute("SELECT count(*) FROM logs").fetchone() == (0,)
    store.stop()


def test_the_tailer_finishes_a_rotated_file_before_the_new_one(tmp_path):
    log = tmp_path / "access.log"
    log.write_text(lines(0, 3))
    store = LogStore(str(tmp_path / "logs.duckdb"), str(log))
    assert store.tail_once() == 3
    with log.open("a") as fh:
        fh.write(lines(3, 5))  # written before the rotation, not yet read
    os.replace(log, tmp_path / "access.log.0")
    log.write_text(lines(5, 8))
    while store.tail_once():
        pass
    os.replace(tmp_path / "access.log.0", tmp_path / "access.log.1")  # a second rotation
    os.replace(log, tmp_path / "access.log.0")
    log.write_text(lines(8, 9))
    while store.tail_once():
        pass
    urls = [row[0] for row in store.db.execute("SELECT url FROM logs ORDER BY id").fetchall()]
    assert urls == [f"http://a.test/{n}" for n in range(9)]
    store.stop()
