"""The registry actor as a plain class: transitions, conflicts, write-through and reload."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from actors.llm_gateway.registry import DISCOVERED, FOUND, IGNORED, VERIFIED, RegistryBoard


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
    rows = sqlite3.connect(tmp_path / "gw.db").execute("SELECT id, status, api_key_enc FROM llm_registry").fetchall()
    assert {r[0]: r[1] for r in rows} == {"one": IGNORED, "local-vllm-9": DISCOVERED}
    assert all("sk-board-secret-1" not in (r[2] or "") for r in rows)
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
