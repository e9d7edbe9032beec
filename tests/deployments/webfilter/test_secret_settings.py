"""Secret settings at rest: AES-256-GCM (`enc::...`) in the real SQLite file, read back where used, and a
key that changed gives a clear error naming the setting (never the value), not a crash.

The API cases run the app without starting Squid (no lifespan): these routes only need the database."""

from __future__ import annotations

import shutil
import sqlite3
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web
from pydantic import SecretStr

from deployments.webfilter.app import create_app
from deployments.webfilter.config import ProxyConfig
from deployments.webfilter.secretbox import KEY_FILE, SecretBox, SecretUnreadable
from deployments.webfilter.settings import MASK
from deployments.webfilter.store import Store
from rayfleet import state
from tests.deployments.webfilter.conftest import ADMIN_PASSWORD, HOSTS, Receiver, make_config, state_folder

TOKEN = "gotify-Secret-Token-123"


def raw_settings(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT name, value FROM settings").fetchall())


def test_a_secret_is_sealed_in_the_database_row_and_reads_back_with_the_same_key(tmp_path):
    db = tmp_path / "config.db"
    store = Store(db, SecretBox.derive("key-one"))
    store.put_settings({"notify_gotify_token": TOKEN, "notify_gotify_url": "http://127.0.0.1:9/g"})
    raw = raw_settings(db)
    assert raw["notify_gotify_token"].startswith("enc::") and TOKEN not in raw["notify_gotify_token"]
    assert raw["notify_gotify_url"] == '"http://127.0.0.1:9/g"'  # not a secret: plain JSON
    for file in (db, Path(str(db) + "-wal")):
        assert not file.exists() or TOKEN.encode() not in file.read_bytes()
    assert store.settings()["notify_gotify_token"] == MASK  # only a caller that needs it decrypts
    assert Store(db, SecretBox.derive("key-one")).settings(reveal=True)["notify_gotify_token"] == TOKEN


def test_a_changed_key_is_a_clear_error_naming_the_setting_and_everything_else_keeps_working(tmp_path):
    db = tmp_path / "config.db"
    Store(db, SecretBox.derive("key-one")).put_settings({"notify_gotify_token": TOKEN, "gdpr_mode": True})
    other = Store(db, SecretBox.derive("key-two"))
    assert other.settings()["gdpr_mode"] is True and other.settings()["notify_gotify_token"] == MASK
    with pytest.raises(SecretUnreadable) as caught:
        other.settings(reveal=True)
    message = str(caught.value)
    assert "notify_gotify_token" in message and "set the setting again" in message and TOKEN not in message


def test_a_sealed_value_only_opens_as_the_setting_it_was_written_for(tmp_path):
    db = tmp_path / "config.db"
    store = Store(db, SecretBox.derive("key-one"))
    store.put_settings({"notify_gotify_token": TOKEN})
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO settings VALUES ('notify_telegram_token', ?)",
            (raw_settings(db)["notify_gotify_token"],),
        )
    with pytest.raises(SecretUnreadable, match="notify_telegram_token"):
        store.settings(reveal=True)


def test_secrets_an_earlier_version_wrote_in_clear_are_sealed_at_startup(tmp_path):
    db = tmp_path / "config.db"
    Store(db, SecretBox.derive("key-one"))
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO settings VALUES ('notify_telegram_token', '\"123:legacy\"')")
    store = Store(db, SecretBox.derive("key-one"))
    assert raw_settings(db)["notify_telegram_token"].startswith("enc::")
    assert store.settings(reveal=True)["notify_telegram_token"] == "123:legacy"


def test_without_api_secret_key_the_key_is_generated_once_into_a_0600_file(tmp_path):
    first = SecretBox.for_data_dir(None, tmp_path)
    key_file = tmp_path / KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(key_file.read_text().strip()) == 64
    sealed = first.seal("notify_gotify_token", '"x"')
    assert SecretBox.for_data_dir(None, tmp_path).open("notify_gotify_token", sealed) == '"x"'
    other_dir = tmp_path / "with-env"
    other_dir.mkdir()
    SecretBox.for_data_dir("from-the-environment", other_dir)
    assert not (other_dir / KEY_FILE).exists()


@asynccontextmanager
async def admin_api(root: Path, api_secret_key: str, **proxy: Any) -> AsyncIterator[httpx.AsyncClient]:
    """The app on `root` (the database only; Squid is not started) with this API_SECRET_KEY."""
    with state.local_state():
        state.reset_local_state()
        config = make_config(root, proxy=ProxyConfig(hosts=HOSTS, **proxy), asn_api_key=SecretStr(api_secret_key))
        app = create_app(config)
        transport = httpx.ASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url="http://w", auth=("admin", ADMIN_PASSWORD)) as c:
            yield c
        state.reset_local_state()


async def test_through_the_api_secrets_are_used_decrypted_and_a_new_key_answers_409_not_500():
    got: dict[str, str] = {}

    async def gotify(request: web.Request) -> web.Response:
        got["key"] = request.headers.get("X-Gotify-Key", "")
        return web.json_response({})

    receiver = await Receiver([("POST", "/gotify/message", gotify)]).start()
    root = state_folder()
    try:
        async with admin_api(root, "key-one") as api:
            r = await api.post(
                "/api/settings",
                json={
                    "notify_gotify_url": f"http://127.0.0.1:{receiver.port}/gotify",
                    "notify_gotify_token": TOKEN,
                    "notify_allow_private_targets": True,  # the receiver is on loopback
                },
            )
            assert r.status_code == 200 and r.json()["data"]["notify_gotify_token"] == MASK
            assert (await api.post("/api/notifications/test")).status_code == 200
            assert got["key"] == TOKEN  # decrypted on use
            assert raw_settings(root / "config.db")["notify_gotify_token"].startswith("enc::")
            export = (await api.get("/api/database/export")).text
            backup = (await api.get("/api/maintenance/backup-config")).json()["data"]
            assert TOKEN not in export and "enc::" not in export and backup["settings"]["notify_gotify_token"] == MASK
        async with admin_api(root, "key-two") as api:
            assert (await api.get("/api/settings")).json()["data"]["notify_gotify_token"] == MASK
            r = await api.post("/api/notifications/test")
            assert r.status_code == 409 and r.json()["status"] == "error"
            assert "notify_gotify_token" in r.json()["detail"] and TOKEN not in r.text
            await api.put("/api/settings/enable_notifications", json={"value": True})
            r = await api.post("/api/internal/alert", json={"category": "XSS", "message": "m"})
            assert r.status_code == 200 and r.json()["data"]["recorded"] is True
            assert "notify_gotify_token" in r.json()["data"]["notify_error"] and TOKEN not in r.text
            # setting it again under the new key heals it
            await api.put("/api/settings/notify_gotify_token", json={"value": TOKEN + "-2"})
            assert (await api.post("/api/notifications/test")).status_code == 200 and got["key"] == TOKEN + "-2"
    finally:
        await receiver.stop()
        shutil.rmtree(root, ignore_errors=True)


async def test_ssl_bump_is_refused_when_this_squid_cannot_bump():
    root = state_folder()
    try:
        async with admin_api(root, "key-one", certgen_bin=str(root / "no-such-certgen")) as api:
            r = await api.put("/api/settings/ssl_bump_enabled", json={"value": True})
            assert r.status_code == 400 and "squid-openssl" in r.json()["detail"]
            assert (await api.get("/api/settings")).json()["data"]["ssl_bump_enabled"] is False
            backup = (await api.get("/api/maintenance/backup-config")).json()["data"]
            backup["settings"]["ssl_bump_enabled"] = True
            r = await api.post("/api/maintenance/restore-config", json={"config": backup})
            assert r.status_code == 400
            assert (await api.get("/api/settings")).json()["data"]["ssl_bump_enabled"] is False
    finally:
        shutil.rmtree(root, ignore_errors=True)
