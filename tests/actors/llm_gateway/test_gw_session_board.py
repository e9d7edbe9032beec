"""SessionBoard: revoked session ids, kept until the session would have expired."""

from __future__ import annotations

from actors.llm_gateway.sessions import SessionBoard


def store(tmp_path):
    return {"type": "sqlite", "sqlite_path": str(tmp_path / "gw.db"), "dsn_env": "", "dsn": ""}


def test_a_revoked_id_is_remembered_until_its_expiry_then_forgotten(tmp_path):
    now = [100.0]
    board = SessionBoard(clock=lambda: now[0], store=store(tmp_path))
    assert board.is_revoked("a") is False
    assert board.revoke("a", 160) is True
    assert board.revoke("a", 160) is False  # already revoked
    board.revoke("b", 500)
    assert board.is_revoked("a") and board.is_revoked("b") and board.count() == 2
    now[0] = 161
    assert board.is_revoked("a") is False  # expired anyway: no longer needs remembering
    assert board.count() == 1 and board.is_revoked("b")


def test_a_revocation_survives_a_restart(tmp_path):
    now = [100.0]
    SessionBoard(clock=lambda: now[0], store=store(tmp_path)).revoke("gone", 900)
    restarted = SessionBoard(clock=lambda: now[0], store=store(tmp_path))
    assert restarted.is_revoked("gone") and restarted.revoke("gone", 900) is False
