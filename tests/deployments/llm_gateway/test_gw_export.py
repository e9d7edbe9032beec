"""The request export (``observability.export``): one JSON line per request in a file per UTC
day and process, PII scrubbed, gzipped when the day ends (and at startup for leftovers),
never blocking the request path. The gateway's clock is injected, so "midnight" is a value."""

from __future__ import annotations

import asyncio
import errno
import fcntl
import gzip
import io
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from deployments.llm_gateway.app import create_app
from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.export import RequestExport
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, INFER_KEY, base_config, chat
from tests.polling import eventually

ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
DAY1, DAY2 = "2030-03-01", "2030-03-02"
BEFORE_MIDNIGHT = datetime(2030, 3, 1, 23, 59, 59, tzinfo=UTC).timestamp()
AFTER_MIDNIGHT = datetime(2030, 3, 2, 0, 0, 1, tzinfo=UTC).timestamp()
WRITER = f"pid{os.getpid()}"
FIELDS = {
    "time",
    "request_id",
    "key_fingerprint",
    "route",
    "model",
    "endpoint",
    "status",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "latency_ms",
    "ttft_ms",
    "cache",
    "stream",
    "fallback",
    "security",
}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def export_config(tmp_path: Path, up, **export) -> dict:
    return base_config(
        tmp_path,
        {"a": {"base_url": up.base_url, "models": ["m"]}},
        observability={"tracing": {"console_exporter": False}, "export": {"enabled": True, **export}},
    )


def lines(raw: bytes) -> list[dict]:
    return [json.loads(line) for line in raw.decode().splitlines()]


@pytest.mark.parametrize("scrub", [True, False])
async def test_each_request_is_one_json_line_without_its_text_and_with_pii_scrubbed(
    serve, up1, tmp_path, auth_env, scrub
):
    clock = Clock(BEFORE_MIDNIGHT)
    gw = await serve(export_config(tmp_path, up1, scrub_pii=scrub), state={"clock": clock})
    async with gw.client() as c:
        ok = await c.post("/v1/chat/completions", json=chat("m", content="my secret plan, mail ada@example.com"))
        assert ok.status_code == 200
        # the requested model is text the client chose: here an email and a phone number
        missing = await c.post("/v1/chat/completions", json=chat("ada@example.com +1 415-555-0134"))
        assert missing.status_code == 404
        streamed = await c.post("/v1/chat/completions", json=chat("m", stream=True))
        assert streamed.status_code == 200
    await gw.gateway.export.flush()
    path = tmp_path / "exports" / f"requests-{DAY1}-{WRITER}.jsonl"
    raw = path.read_bytes()
    assert b"secret plan" not in raw and INFER_KEY.encode() not in raw
    got = {r["request_id"]: r for r in lines(raw)}
    assert set(got) == {ok.headers["x-request-id"], missing.headers["x-request-id"], streamed.headers["x-request-id"]}
    for record in got.values():
        assert set(record) == FIELDS
        assert record["time"].endswith("Z") and datetime.fromisoformat(record["time"]).tzinfo is not None
        assert len(record["key_fingerprint"]) == 16 and record["route"] == "/v1/chat/completions"
    first = got[ok.headers["x-request-id"]]
    assert (first["status"], first["endpoint"], first["model"], first["stream"]) == (200, "a", "m", False)
    assert first["prompt_tokens"] > 0 and first["completion_tokens"] > 0 and first["latency_ms"] > 0
    assert got[streamed.headers["x-request-id"]]["stream"] is True
    assert got[streamed.headers["x-request-id"]]["ttft_ms"] is not None
    refused = got[missing.headers["x-request-id"]]
    assert refused["status"] == 404 and refused["security"]["refusal"]
    if scrub:
        assert refused["model"] == "[email] [phone]" and b"ada@example.com" not in raw
    else:
        assert refused["model"] == "ada@example.com +1 415-555-0134"


async def test_the_day_is_gzipped_at_midnight(serve, up1, tmp_path, auth_env):
    clock = Clock(BEFORE_MIDNIGHT)
    gw = await serve(export_config(tmp_path, up1), state={"clock": clock})
    export = gw.gateway.export
    async with gw.client() as c:
        day1 = [(await c.post("/v1/chat/completions", json=chat("m"))).headers["x-request-id"] for _ in range(3)]
        await export.flush()
        plain1 = tmp_path / "exports" / f"requests-{DAY1}-{WRITER}.jsonl"
        written = plain1.read_bytes()
        clock.now = AFTER_MIDNIGHT
        await export.flush()  # no traffic: the day still ends
        assert not plain1.exists()
        gz = plain1.with_name(plain1.name + ".gz")
        assert gzip.decompress(gz.read_bytes()) == written
        assert [r["request_id"] for r in lines(written)] == day1
        day2 = (await c.post("/v1/chat/completions", json=chat("m"))).headers["x-request-id"]
    await export.flush()
    plain2 = tmp_path / "exports" / f"requests-{DAY2}-{WRITER}.jsonl"
    assert [r["request_id"] for r in lines(plain2.read_bytes())] == [day2]
    assert sorted(p.name for p in plain1.parent.iterdir()) == sorted([gz.name, plain2.name])


async def test_without_compression_the_closed_day_stays_plain(tmp_path):
    clock = Clock(BEFORE_MIDNIGHT)
    export = RequestExport(tmp_path, scrub_pii=True, compress_on_rotate=False, writer="w", clock=clock)
    export.add(BEFORE_MIDNIGHT, {"request_id": "r1"})
    await export.flush()
    clock.now = AFTER_MIDNIGHT
    export.add(AFTER_MIDNIGHT, {"request_id": "r2"})
    await export.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"requests-{DAY1}-w.jsonl", f"requests-{DAY2}-w.jsonl"]
    assert lines((tmp_path / f"requests-{DAY2}-w.jsonl").read_bytes())[0]["request_id"] == "r2"


async def test_a_restart_compresses_what_a_crash_left(serve, up1, tmp_path, auth_env):
    exports = tmp_path / "exports"
    exports.mkdir()
    complete = b'{"request_id":"a"}\n{"request_id":"b"}\n'
    crashed = exports / f"requests-{DAY1}-old-replica.jsonl"
    crashed.write_bytes(complete + b'{"request_id":"c","sta')  # the crash cut the last line
    held = exports / f"requests-{DAY1}-live-replica.jsonl"
    held.write_bytes(complete)
    today = exports / f"requests-{DAY2}-other.jsonl"
    today.write_bytes(complete)
    with open(held, "ab") as live:  # another live process still writes this one
        fcntl.flock(live.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        gw = await serve(export_config(tmp_path, up1), state={"clock": Clock(AFTER_MIDNIGHT)})
        gz = crashed.with_name(crashed.name + ".gz")
        await eventually(lambda: gz.exists() and not crashed.exists(), what="the cut export compressed")
        assert gzip.decompress(gz.read_bytes()) == complete
        assert held.exists() and today.exists()  # a held file, and today's, are left alone
        assert not list(exports.glob(".*.tmp"))
    await gw.gateway.export.recover()  # once the holder is gone, the next pass compresses it
    assert not held.exists() and gzip.decompress(held.with_name(held.name + ".gz").read_bytes()) == complete


def test_an_unwritable_output_dir_stops_the_start(tmp_path, auth_env):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cfg = base_config(tmp_path, {}, observability={"export": {"enabled": True, "output_dir": str(blocker / "x")}})
    with pytest.raises(ValueError, match=r"observability.export.output_dir: cannot write to .*a-file/x"):
        create_app(GatewayConfig.model_validate(cfg))


async def test_a_full_queue_drops_and_counts_instead_of_blocking(serve, up1, tmp_path, auth_env):
    gw = await serve(export_config(tmp_path, up1), state={"clock": Clock(BEFORE_MIDNIGHT)})
    gw.gateway.export.max_pending = 1
    async with gw.client() as c:
        await gw.gateway.export.flush()
        for _ in range(3):
            assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 200
        metrics = (await c.get("/metrics", headers=ADMIN)).text
    dropped = gw.gateway.export.dropped
    assert dropped >= 1  # a flush in between may have emptied the queue once
    assert f"llm_proxy_export_dropped_total {float(dropped)}" in metrics
    await gw.gateway.export.flush()
    written = lines((tmp_path / "exports" / f"requests-{DAY1}-{WRITER}.jsonl").read_bytes())
    assert len(written) + dropped == 3
    async with gw.client() as c:
        health = (await c.get("/health")).json()["export"]
    assert health == {
        "enabled": True,
        "file": f"requests-{DAY1}-{WRITER}.jsonl",
        "queued": 0,
        "written": len(written),
        "dropped": dropped,
    }


async def test_writers_of_one_node_keep_their_own_files(tmp_path):
    clock = Clock(BEFORE_MIDNIGHT)
    writers = [
        RequestExport(tmp_path, scrub_pii=False, compress_on_rotate=True, writer=w, clock=clock)
        for w in ("r1", "r2", "r1")  # the last: a second gateway in one process, same name
    ]
    for i in range(300):
        writers[i % 3].add(BEFORE_MIDNIGHT, {"request_id": f"id{i}", "pad": "x" * 5000})
    await asyncio.gather(*(w.flush() for w in writers))
    for w in writers:
        w.add(BEFORE_MIDNIGHT, {"request_id": f"last-{w.writer}"})
    await asyncio.gather(*(w.close() for w in writers))
    assert sorted(w.writer for w in writers) == ["r1", "r1~1", "r2"]
    for k, w in enumerate(writers):
        got = lines((tmp_path / f"requests-{DAY1}-{w.writer}.jsonl").read_bytes())
        assert [r["request_id"] for r in got] == [f"id{i}" for i in range(300) if i % 3 == k] + [f"last-{w.writer}"]


class FullDisk(io.FileIO):
    """A file on a disk that fills up halfway through the next write."""

    def write(self, data) -> int:
        super().write(bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")


async def test_a_failed_write_is_counted_and_leaves_no_partial_line(tmp_path):
    drops: list[int] = []
    export = RequestExport(
        tmp_path,
        scrub_pii=False,
        compress_on_rotate=True,
        writer="w",
        clock=Clock(BEFORE_MIDNIGHT),
        on_drop=drops.append,
    )
    export.add(BEFORE_MIDNIGHT, {"request_id": "kept"})
    await export.flush()
    path = export.path(DAY1)
    export._file.close()
    export._file = FullDisk(path, "a")
    export.add(BEFORE_MIDNIGHT, {"request_id": "lost-1"})
    export.add(BEFORE_MIDNIGHT, {"request_id": "lost-2"})
    await export.flush()
    assert drops == [2] and export.dropped == 2
    export._file.close()
    export._file = io.FileIO(path, "a")
    export.add(BEFORE_MIDNIGHT, {"request_id": "after"})
    await export.close()
    assert [r["request_id"] for r in lines(path.read_bytes())] == ["kept", "after"]
