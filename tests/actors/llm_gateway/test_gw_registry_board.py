"""The registry actor as a plain class: transitions, conflicts, the durable record, restart and
the one-time import of an old-format store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from actors.llm_gateway.durable_store import durable_path
from actors.llm_gateway.registry import DISCOVERED, FOUND, IGNORED, VERIFIED, RegistryBoard
from actors.llm_gateway.registry_store import load_cipher


def spec(tmp_path: Path, db: str = "gw.db") -> dict[str, str]:
    return {
        "type": "sqlite",
        "sqlite_path": str(tmp_path / db),
        "dsn_env": "",
        "dsn": "",
        "secret_env": "",
        "key_file": str(tmp_path / "registry.key"),
    }


def fields(name: str, **extra: object) -> dict[str, object]:
    return {
        "id": name,
        "name": name,
        "base_url": "http://127.0.0.1:9/v1",
        "provider": "vllm",
        "priority": 0,
        "models": ["m"],
        **extra,
    }


def test_transitions_conflicts_and_reload(tmp_path):
    board = RegistryBoard(spec(tmp_path))
    first = board.add(fields("one", api_key="sk-board-secret-1"))
    assert first["ok"] and first["entry"]["status"] == FOUND
    assert board.add(fields("ONE".lower()))["error"] == "conflict"
    assert board.add(fields("cfg"), reserved=["cfg"])["error"] == "conflict"
    assert board.toggle("missing")["error"] == "not_found"
    assert board.record_probe("one", False, None, None, "connection failed")["entry"]["status"] == FOUND
    probed = board.record_probe("one", True, 12.5, ["a", "b"], None)["entry"]
    assert probed["status"] == VERIFIED and probed["latency_ms"] == 12.5 and probed["probed_models"] == ["a", "b"]
    assert board.toggle("one")["entry"]["status"] == IGNORED
    assert board.record_probe("one", True, 3.0, [], None)["entry"]["status"] == IGNORED
    scan = board.add_discovered(
        [{"id": "local-vllm-9", "provider": "vllm", "base_url": "http://127.0.0.1:7/v1", "models": ["x"]}]
    )
    assert scan["candidates"][0]["added"] and scan["candidates"][0]["status"] == DISCOVERED
    again = board.add_discovered(
        [{"id": "local-vllm-9", "provider": "vllm", "base_url": "http://127.0.0.1:7/v1", "models": ["x"]}]
    )
    assert not again["candidates"][0]["added"]
    v = board.snapshot()["version"]
    assert board.snapshot(v) is None
    recorded = recorded_entries(tmp_path)
    assert {k: e["status"] for k, e in recorded.items()} == {"one": IGNORED, "local-vllm-9": DISCOVERED}
    assert recorded["one"]["api_key_enc"] and "sk-board-secret-1" not in recorded_text(tmp_path)
    reloaded = RegistryBoard(spec(tmp_path))
    entries = {e["id"]: e for e in reloaded.snapshot()["entries"]}
    assert entries["one"]["api_key"] == "sk-board-secret-1" and entries["one"]["latency_ms"] == 3.0
    assert reloaded.remove("one")["ok"] and reloaded.remove("one")["error"] == "not_found"
    reloaded.configure(spec(tmp_path, "other.db"))
    assert reloaded.snapshot()["entries"] == []


def test_unavailable_store_fails_cleanly(tmp_path):
    bad = {**spec(tmp_path), "type": "postgres", "dsn": "postgresql://postgres@127.0.0.1:1/none"}
    board = RegistryBoard(bad)
    result = board.add(fields("x"))
    assert result == {"ok": False, "error": "store_unavailable", "message": result["message"]}
    assert board.toggle("x")["error"] == "store_unavailable"


def recorded_text(tmp_path: Path) -> str:
    """Everything the registry's durable record holds (snapshot and operations), as stored."""
    db = sqlite3.connect(durable_path(tmp_path / "gw.db"))
    snapshots = db.execute("SELECT coalesce(snapshot, '') FROM rayfleet_durable_streams").fetchall()
    ops = db.execute("SELECT op FROM rayfleet_durable_records ORDER BY seq").fetchall()
    return "\n".join(r[0] for r in snapshots + ops)


def recorded_entries(tmp_path: Path) -> dict[str, dict[str, object]]:
    db = sqlite3.connect(durable_path(tmp_path / "gw.db"))
    entries: dict[str, dict[str, object]] = {}
    for (op,) in db.execute("SELECT op FROM rayfleet_durable_records ORDER BY seq"):
        change = json.loads(op)
        if change["op"] == "put":
            entries[change["entry"]["id"]] = change["entry"]
        elif change["op"] == "remove":
            entries.pop(change["id"], None)
    return entries


def test_every_acknowledged_change_survives_a_restart_and_versions_never_repeat(tmp_path):
    board = RegistryBoard(spec(tmp_path))
    assert board.add(fields("a", api_key="sk-restart-a"))["ok"]
    assert board.add(fields("b"))["ok"]
    assert board.set_priority("a", 7)["ok"] and board.toggle("b")["ok"]
    assert board.remove("b")["ok"]
    before = board.snapshot()
    restarted = RegistryBoard(spec(tmp_path))  # a new process over the same record
    after = restarted.snapshot()
    assert after["entries"] == before["entries"]
    assert after["entries"][0]["api_key"] == "sk-restart-a" and after["entries"][0]["priority"] == 7
    assert after["version"] > before["version"]  # a replica holding the old version reloads
    assert restarted.snapshot(before["version"]) is not None


OLD_DDL = (
    "CREATE TABLE llm_registry (id TEXT PRIMARY KEY, name TEXT NOT NULL, base_url TEXT NOT NULL,"
    " provider TEXT NOT NULL, priority INTEGER NOT NULL, api_key_enc TEXT, models TEXT NOT NULL,"
    " probed_models TEXT, status TEXT NOT NULL, latency_ms DOUBLE PRECISION, last_probe_at DOUBLE PRECISION,"
    " last_error TEXT, created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)"
)


def test_an_old_format_store_is_imported_once(tmp_path):
    enc = load_cipher("", tmp_path / "registry.key").encrypt(b"sk-old-format-key").decode()
    db = sqlite3.connect(tmp_path / "gw.db")
    db.execute(OLD_DDL)
    db.execute(
        "INSERT INTO llm_registry VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            "old",
            "old",
            "http://127.0.0.1:9/v1",
            "vllm",
            3,
            enc,
            '["m"]',
            '["m","n"]',
            VERIFIED,
            4.5,
            10.0,
            None,
            1.0,
            2.0,
        ),
    )
    db.commit()
    db.close()

    board = RegistryBoard(spec(tmp_path))
    [entry] = board.snapshot()["entries"]
    assert entry["api_key"] == "sk-old-format-key" and entry["probed_models"] == ["m", "n"]
    assert (entry["status"], entry["priority"], entry["latency_ms"]) == (VERIFIED, 3, 4.5)
    tables = {r[0] for r in sqlite3.connect(tmp_path / "gw.db").execute("SELECT name FROM sqlite_master")}
    assert "llm_registry" not in tables and "llm_registry_migrated" in tables  # kept as a backup
    assert board.remove("old")["ok"]
    assert RegistryBoard(spec(tmp_path)).snapshot()["entries"] == []  # not imported a second time
