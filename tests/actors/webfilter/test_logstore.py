"""The log store's rollups and memoised answers against the same questions asked of the raw rows (tier 1)."""

from __future__ import annotations

import asyncio
import random
import threading
import time
import types
from pathlib import Path

import duckdb
import pytest

from actors.webfilter import logstore
from actors.webfilter.logparse import Record
from actors.webfilter.logstore import LogStore
from deployments.webfilter import analytics
from rayfleet.state import LocalActorHandle
from tests.polling import eventually

NOW = 1_790_000_000.0 + 1234.5  # a fixed "now" (mid-hour) so the windows of both sides agree
RULES = ["domain_blacklist", "ip_blacklist", "waf:XSS", "waf:SQL_INJECTION", "direct_ip"]


def records(rng: random.Random, n: int) -> list[Record]:
    out = []
    for _ in range(n):
        blocked = rng.random() < 0.2
        host = f"h{rng.randint(0, 30)}.d{rng.randint(0, 5)}.test"
        out.append(
            Record(
                ts=NOW - rng.uniform(0, 9 * 86400),
                client=f"10.0.0.{rng.randint(1, 40)}",
                method=rng.choice(["GET", "POST", "CONNECT"]),
                status=403 if blocked else 200,
                squid_status="TCP_DENIED" if blocked else "TCP_MISS",
                bytes_in=rng.randint(0, 2000),
                bytes_out=rng.randint(0, 90000),
                elapsed_ms=rng.randint(0, 500),
                blocked=blocked,
                rule=rng.choice(RULES) if blocked else None,
                url=f"http://{host}/p/{rng.randint(0, 99)}",
                host=host,
                agent=rng.choice([None, "curl/8", "Mozilla/5.0 (X11)"]),
            )
        )
    return out


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setattr(analytics, "time", types.SimpleNamespace(time=lambda: NOW))
    logs = LogStore(str(tmp_path / "logs.duckdb"))
    yield logs
    logs.stop()


def raw(store: LogStore, sql: str, *params: object) -> list[tuple]:
    return store.db.execute(sql, list(params)).fetchall()


def hour_ago(hours: int) -> int:
    return int((int(NOW) - hours * 3600) // 3600 * 3600 * 1_000_000)


async def expected_vs_rollups(store: LogStore) -> None:
    context = types.SimpleNamespace(logs=LocalActorHandle(store))
    week = hour_ago(168)
    domains = await analytics.domains(context, 168, 50)  # type: ignore[arg-type]
    rows = raw(
        store,
        "SELECT host, count(*) n, count(*) FILTER (blocked) b FROM logs WHERE ts >= make_timestamp(?) "
        "GROUP BY 1 ORDER BY n DESC, host LIMIT 50",
        week,
    )
    assert domains["domains"] == [{"domain": h, "requests": n, "blocked": b, "allowed": n - b} for h, n, b in rows]
    assert (
        domains["total_domains"]
        == raw(store, "SELECT count(DISTINCT host) FROM logs WHERE ts >= make_timestamp(?)", week)[0][0]
    )

    clients = await analytics.clients(context, 168, 50)  # type: ignore[arg-type]
    rows = raw(
        store,
        "SELECT client, count(*) n, count(*) FILTER (blocked), max(ts) FROM logs WHERE ts >= make_timestamp(?) "
        "GROUP BY 1 ORDER BY n DESC, client LIMIT 50",
        week,
    )
    assert [(c["ip_address"], c["requests"], c["blocked"], c["last_seen"]) for c in clients["clients"]] == [
        (c, n, b, analytics._iso(s)) for c, n, b, s in rows
    ]

    traffic = await analytics.traffic(context, "day")  # type: ignore[arg-type]
    start = hour_ago(23)
    per_hour = {
        analytics._iso(h): (n, b, i, o)
        for h, n, b, i, o in raw(
            store,
            "SELECT date_trunc('hour', ts), count(*), count(*) FILTER (blocked), sum(bytes_in), sum(bytes_out) "
            "FROM logs WHERE ts >= make_timestamp(?) GROUP BY 1",
            start,
        )
    }
    assert len(traffic["labels"]) == 24
    for k, label in enumerate(traffic["labels"]):
        got = (traffic["requests"][k], traffic["blocked"][k], traffic["inbound"][k], traffic["outbound"][k])
        assert got == per_hour.get(label, (0, 0, 0, 0))

    summary = await analytics.dashboard(context)  # type: ignore[arg-type]
    day = hour_ago(24)
    midnight = int(NOW // 86400 * 86400 * 1_000_000)
    total, blocked = raw(store, "SELECT count(*), count(*) FILTER (blocked) FROM logs")[0]
    assert summary["totals"] == {"requests": total, "blocked": blocked}
    today = raw(store, "SELECT count(*), count(*) FILTER (blocked) FROM logs WHERE ts >= make_timestamp(?)", midnight)
    assert (summary["today"]["requests"], summary["today"]["blocked"]) == today[0]
    top_blocked = raw(
        store,
        "SELECT host, count(*) FILTER (blocked) b FROM logs WHERE ts >= make_timestamp(?) GROUP BY 1 "
        "HAVING b > 0 ORDER BY b DESC, host LIMIT 10",
        day,
    )
    assert [(d["domain"], d["blocked"]) for d in summary["top_blocked_domains_24h"]] == top_blocked
    by_rule = raw(
        store,
        "SELECT rule, count(*) FROM logs WHERE ts >= make_timestamp(?) AND rule IS NOT NULL GROUP BY 1",
        day,
    )
    assert {c["rule"]: c["count"] for c in summary["threat_categories_24h"]} == dict(by_rule)
    recent = raw(store, "SELECT url FROM logs WHERE blocked ORDER BY id DESC LIMIT 10")
    assert [b["destination"] for b in summary["recent_blocks"]] == [u for (u,) in recent]


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_rollup_answers_equal_the_raw_rows_on_random_data(store, seed):
    rng = random.Random(seed)
    for _ in range(6):  # several batches: each adds its own rollup rows, summed by the queries
        store.ingest(records(rng, rng.randint(50, 400)), publish=False)
    await expected_vs_rollups(store)
    store.compact()  # merged rollups answer the same
    store.rebuild()  # and so do rollups rebuilt from the raw rows
    await expected_vs_rollups(store)


async def test_a_memoised_answer_is_replaced_by_the_next_batch_and_by_a_delete(store):
    rng = random.Random(9)
    context = types.SimpleNamespace(logs=LocalActorHandle(store))
    store.ingest(records(rng, 300), publish=False)
    first = await analytics.dashboard(context)  # type: ignore[arg-type]
    misses = store.cache_misses
    again = await analytics.dashboard(context)  # type: ignore[arg-type]
    assert again["totals"] == first["totals"] and store.cache_misses == misses  # served from memory
    store.ingest(records(rng, 7), publish=False)  # re-answers the watched question after the batch
    hits = store.cache_hits
    after = await analytics.dashboard(context)  # type: ignore[arg-type]
    assert after["totals"]["requests"] == first["totals"]["requests"] + 7
    assert store.cache_hits == hits + 1 and store.cache_misses == misses
    await expected_vs_rollups(store)
    store.delete_before(None)
    assert (await analytics.dashboard(context))["totals"] == {"requests": 0, "blocked": 0}  # type: ignore[arg-type]


def test_answers_are_read_only(store):
    with pytest.raises(ValueError):
        store.answer([("DELETE FROM logs", [])])


def test_recent_blocks_keep_the_newest_and_are_backfilled_for_an_older_database(tmp_path, monkeypatch):
    monkeypatch.setattr(logstore, "RECENT_BLOCKS", 12)
    path = str(tmp_path / "old.duckdb")
    logs = LogStore(path)
    logs.ingest(records(random.Random(4), 400), publish=False)
    logs.compact()
    newest = raw(logs, "SELECT id FROM logs WHERE blocked ORDER BY id DESC LIMIT 12")
    assert raw(logs, "SELECT id FROM recent_blocks ORDER BY id DESC") == newest
    logs.db.execute("DROP TABLE recent_blocks")  # as written by a version without it
    logs.stop()
    logs.db.close()
    reopened = LogStore(path)
    assert raw(reopened, "SELECT id FROM recent_blocks ORDER BY id DESC") == newest
    reopened.stop()


def append_lines(log: Path, numbers: range) -> None:
    """Squid access-log lines, one per number (its URL names it), appended to `log`."""
    line = "1700000000.123 127.0.0.1 GET 200 TCP_MISS 10 600 0 - http://a.test/{n} curl/8\n"
    with log.open("a") as fh:
        fh.write("".join(line.format(n=n) for n in numbers))


def test_a_watched_question_that_fails_never_loses_a_batch(tmp_path):
    log = tmp_path / "access.log"
    append_lines(log, range(3))
    logs = LogStore(str(tmp_path / "logs.duckdb"), str(log))
    assert logs.tail_once() == 3
    # answers now, fails once there are more than 3 rows: the re-answer inside the next batch fails
    question = [("SELECT CASE WHEN (SELECT count(*) FROM logs) > 3 THEN error('boom') ELSE 1 END", [])]
    assert logs.answer(question) == [[(1,)]]
    append_lines(log, range(3, 5))
    with pytest.raises(duckdb.Error):
        logs.tail_once()
    assert raw(logs, "SELECT count(*) FROM logs") == [(3,)]  # rolled back, offset included
    assert logs.tail_once() == 2  # the same lines again, the failing question forgotten
    assert raw(logs, "SELECT count(*), count(DISTINCT url) FROM logs") == [(5, 5)]
    assert raw(logs, "SELECT sum(requests) FROM r_minute") == [(5,)]
    logs.stop()


async def test_a_clear_during_a_tail_turn_is_not_undone_by_that_turns_batch(tmp_path):
    """`POST /api/logs/clear` while a batch is between its inserts and its commit: the batch's rows and the
    answers it re-computed from its own snapshot must not survive the clear."""
    log = tmp_path / "access.log"
    append_lines(log, range(3))
    logs = LogStore(str(tmp_path / "logs.duckdb"), str(log))
    assert logs.tail_once() == 3
    question = [("SELECT count(*) FROM logs", [])]
    assert logs.answer(question) == [[(3,)]]  # now a watched question, re-answered inside each batch
    append_lines(log, range(3, 5))
    inside, go = threading.Event(), threading.Event()
    reanswer = logs._reanswer

    def held(conn: duckdb.DuckDBPyConnection) -> dict:
        inside.set()
        go.wait(30)
        return reanswer(conn)

    logs._reanswer = held  # type: ignore[method-assign]

    async def tail_turn() -> None:  # what the tail loop does each turn
        async with logs.turn:
            await asyncio.to_thread(logs.tail_once)

    batch = asyncio.create_task(tail_turn())
    assert await asyncio.to_thread(inside.wait, 30)
    clearing = asyncio.create_task(logs.clear(None))
    go.set()
    await batch
    deleted = await clearing
    assert deleted["http"] == 5
    assert raw(logs, "SELECT count(*) FROM logs") == [(0,)]
    assert logs.answer(question) == [[(0,)]]
    logs.stop()


async def test_the_loops_retention_runs_inside_the_turn_so_a_clear_never_shares_its_connection(tmp_path):
    """Retention deletes through the tailer's connection; `clear` (the API) takes the turn and uses it too, so
    the retention must hold the turn, or the two would drive one DuckDB connection from two threads."""
    logs = LogStore(str(tmp_path / "logs.duckdb"), str(tmp_path / "access.log"), interval=0.01)
    inside, go = threading.Event(), threading.Event()
    seen: list[tuple[float | None, bool]] = []
    delete_before = logs.delete_before

    def watched(cutoff: float | None, conn: duckdb.DuckDBPyConnection | None = None) -> dict[str, int]:
        seen.append((cutoff, logs.turn.locked()))
        if cutoff is not None and not inside.is_set():  # the loop's first retention run waits here
            inside.set()
            go.wait(30)
        return delete_before(cutoff, conn)

    logs.delete_before = watched  # type: ignore[method-assign]
    await logs.start()
    assert await asyncio.to_thread(inside.wait, 30)
    clearing = asyncio.create_task(logs.clear(None))
    go.set()
    assert (await clearing) == {"http": 0, "dns": 0}
    assert seen[0][0] is not None and seen[0][1], seen  # the retention ran holding the turn
    assert seen[1] == (None, True), seen  # then the clear, after it
    logs.stop()


class MovingSinkhole:
    """The proxy actor's answers the DNS tailer asks for, with a sinkhole that moves: a data plane restarted
    on another port (its old one taken)."""

    def __init__(self) -> None:
        self.address = "127.0.0.1#5301"

    def dns_sinkhole(self) -> str:
        return self.address

    def dns_groups(self, pids: list[int]) -> dict[int, str]:
        return {}

    def attribute_dns(self, names: list[str], groups: list[str | None]) -> list[tuple[str, str]]:
        return [("domain_blacklist", "domain-blacklist")] * len(names)


def dns_lines(log: Path, qid: int, name: str, upstream: str) -> None:
    """dnsmasq's lines for one A query forwarded to `upstream` and answered 0.0.0.0, appended to `log`."""
    stamp = time.strftime("%b %d %H:%M:%S", time.localtime())
    head = f"{stamp} dnsmasq[100]: {qid} 127.0.0.1/4{qid:04d}"
    with log.open("a") as fh:
        fh.write(f"{head} query[A] {name} from 127.0.0.1\n{head} forwarded {name} to {upstream}\n")
        fh.write(f"{head} reply {name} is 0.0.0.0\n")


async def test_a_name_forwarded_to_a_sinkhole_that_moved_is_still_counted_blocked(tmp_path):
    owner = MovingSinkhole()
    log = tmp_path / "dnsmasq-queries.log"
    log.touch()
    logs = LogStore(str(tmp_path / "logs.duckdb"))
    logs.dns_log, logs.rules = str(log), LocalActorHandle(owner)  # what start() sets
    dns_lines(log, 1, "tracker.test", "127.0.0.1#5301")
    assert await logs.tail_dns_once() == 1
    owner.address = "127.0.0.1#5302"  # the data plane restarted elsewhere
    dns_lines(log, 2, "pixel.test", "127.0.0.1#5302")
    dns_lines(log, 3, "late.test", "127.0.0.1#5301")  # a line the old dnsmasq wrote before it ended
    assert await logs.tail_dns_once() == 2
    rows = raw(logs, "SELECT name, outcome, blocked, rule, upstream FROM dns_logs ORDER BY name")
    assert rows == [
        ("late.test", "sinkholed", True, "domain_blacklist", None),
        ("pixel.test", "sinkholed", True, "domain_blacklist", None),
        ("tracker.test", "sinkholed", True, "domain_blacklist", None),
    ]
    logs.stop()


class CountedTurns:
    """Counts the tail loop's full turns (settings reads: the first thing a full turn does)."""

    def __init__(self) -> None:
        self.full = 0

    def __call__(self) -> logstore.LogSettings:
        self.full += 1
        return logstore.LogSettings()


async def test_an_idle_tail_loop_skips_its_turns_and_a_new_line_ends_the_pause(tmp_path):
    """Turns over files that did not change since a turn that read nothing are skipped; a line appended
    afterwards is still ingested by the next turn."""
    log = tmp_path / "access.log"
    append_lines(log, range(2))
    turns = CountedTurns()
    logs = LogStore(str(tmp_path / "logs.duckdb"), str(log), interval=0.005, settings=turns)
    await logs.start()
    await eventually(lambda: logs.ingested == 2, what="the first lines ingested")
    await eventually(lambda: logs.idle_turns >= 20, what="idle turns skipped")
    full = turns.full
    assert full <= 3, full  # the turn that read the lines, the one that found nothing, perhaps one racing them
    append_lines(log, range(2, 5))
    await eventually(lambda: logs.ingested == 5, what="the appended lines ingested after the pause")
    assert turns.full > full
    logs.stop()


async def test_lines_written_to_the_rotated_copy_while_idle_are_read(tmp_path):
    """Squid renames access.log to access.log.0 and may still write there before it reopens: a change of the
    copy alone ends the pause too, and the copy is read to its end before the new file."""
    log = tmp_path / "access.log"
    append_lines(log, range(2))
    logs = LogStore(str(tmp_path / "logs.duckdb"), str(log), interval=0.005, settings=CountedTurns())
    await logs.start()
    await eventually(lambda: logs.ingested == 2 and logs.idle_turns >= 5, what="the first lines, then a pause")
    log.rename(tmp_path / "access.log.0")
    await eventually(lambda: logs.idle_turns >= 10 and not logs.turn.locked(), what="more idle turns")
    append_lines(tmp_path / "access.log.0", range(2, 4))  # the old file still written to
    await eventually(lambda: logs.ingested == 4, what="the late lines of the renamed file")
    append_lines(log, range(4, 5))  # Squid reopened access.log
    await eventually(lambda: logs.ingested == 5, what="the new file's line")
    logs.stop()


async def test_retention_runs_when_due_though_the_files_are_idle(tmp_path):
    clock = [NOW]
    log = tmp_path / "access.log"
    log.touch()
    logs = LogStore(
        str(tmp_path / "logs.duckdb"), str(log), interval=0.005, retention_interval=3600.0, clock=lambda: clock[0]
    )
    await logs.start()
    await eventually(lambda: logs.retention["runs"] == 1 and logs.idle_turns >= 5, what="first retention, then idle")
    clock[0] += 3600.0
    await eventually(lambda: logs.retention["runs"] == 2, what="the retention due an hour later")
    logs.stop()
