"""ControlBoard: the panic switch, disabled plugins and reloaded sections outlive the actor."""

from __future__ import annotations

from actors.llm_gateway.control import ControlBoard


def store(tmp_path):
    return {"type": "sqlite", "sqlite_path": str(tmp_path / "gw.db"), "dsn_env": "", "dsn": ""}


def test_every_switch_survives_a_restart_and_replicas_see_a_new_version(tmp_path):
    board = ControlBoard(clock=lambda: 50.0, store=store(tmp_path))
    board.set_panic(True, "key leak")
    board.set_plugin("pii", False)
    board.set_plugin("export", False)
    board.set_plugin("export", True)
    before = board.set_config({"security": {"max_messages": 2}})

    restarted = ControlBoard(clock=lambda: 99.0, store=store(tmp_path))
    after = restarted.state(before["version"])  # a replica holding the old version gets the state again
    assert after is not None and after["version"] > before["version"]
    assert after["panic"] == {"active": True, "since": 50.0, "reason": "key leak"}
    assert after["disabled_plugins"] == ["pii"]
    assert after["config"] == {"version": 1, "sections": {"security": {"max_messages": 2}}}
    assert restarted.state(after["version"]) is None
    assert restarted.set_panic(False)["panic"]["active"] is False
    assert ControlBoard(store=store(tmp_path)).state()["panic"]["active"] is False  # type: ignore[index]
