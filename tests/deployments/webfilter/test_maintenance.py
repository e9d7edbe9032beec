"""Database, proxy maintenance, certificates, notifications and DNS detection."""

from __future__ import annotations

import asyncio
import socket

import pytest
from aiohttp import web

from tests.deployments.webfilter.conftest import ADMIN_PASSWORD, Receiver

pytestmark = pytest.mark.realserver


async def test_cache_statistics_come_from_squids_cache_manager(wf):
    stats = (await wf.api.get("/api/cache/statistics")).json()["data"]
    assert stats["source"] == "squid mgr:info" and stats["http_requests"] >= 0 and stats["uptime_seconds"] >= 0


async def test_reload_config_reload_dns_and_clear_cache(wf):
    assert (await wf.api.post("/api/maintenance/reload-config")).json()["data"]["running"] is True
    assert (await wf.api.post("/api/maintenance/reload-dns")).json()["data"] == {"reloaded": True}
    r = await wf.api.post("/api/maintenance/clear-cache")
    assert r.status_code == 200 and r.json()["data"]["method"] == "squid restart"
    assert (await wf.fetch(wf.url("allowed.test", "/after-restart"))).status_code == 200


async def test_backup_and_transactional_restore(wf):
    await wf.api.post("/api/domain-blacklist", json={"domain": "backup.test"})
    await wf.api.put("/api/settings/gdpr_mode", json={"value": True})
    backup = (await wf.api.get("/api/maintenance/backup-config")).json()["data"]
    assert backup["lists"]["domain-blacklist"][0]["domain"] == "backup.test"
    await wf.api.delete("/api/domain-blacklist/clear-all")
    await wf.api.put("/api/settings/gdpr_mode", json={"value": False})
    broken = {**backup, "lists": {"domain-blacklist": [{"domain": "ok.test"}, {"domain": "bad domain"}]}}
    r = await wf.api.post("/api/maintenance/restore-config", json={"config": broken})
    assert r.status_code == 400
    assert (await wf.api.get("/api/domain-blacklist")).json()["meta"]["total"] == 0  # nothing half-written
    r = await wf.api.post("/api/maintenance/restore-config", json={"config": backup})
    assert r.status_code == 200
    assert (await wf.api.get("/api/settings")).json()["data"]["gdpr_mode"] is True
    assert (await wf.fetch(wf.url("backup.test", "/"))).status_code == 403
    await wf.api.put("/api/settings/gdpr_mode", json={"value": False})
    await wf.api.delete("/api/domain-blacklist/clear-all")


async def test_export_redacts_secrets_and_reset_keeps_users(wf):
    await wf.api.put("/api/settings/notify_gotify_token", json={"value": "very-secret-token"})
    export = (await wf.api.get("/api/database/export")).json()["data"]
    text = str(export)
    assert "very-secret-token" not in text and "scrypt$" not in text
    assert export["users"][0]["password_hash"] == "[redacted]"
    masked = (await wf.api.get("/api/settings")).json()["data"]["notify_gotify_token"]
    assert masked == "********"
    size = (await wf.api.get("/api/database/size")).json()["data"]
    assert size["config_db_bytes"] > 0 and size["log_db_bytes"] > 0
    stats = (await wf.api.get("/api/database/stats")).json()["data"]
    assert stats["tables"]["users"] == 1
    assert (await wf.api.post("/api/database/optimize")).status_code == 200
    r = await wf.api.post("/api/database/reset")
    assert r.status_code == 200 and r.json()["data"]["kept"] == ["users"]
    assert (await wf.api.get("/api/settings", auth=("admin", ADMIN_PASSWORD))).status_code == 200
    assert (await wf.api.get("/api/settings")).json()["data"]["notify_gotify_token"] == ""


async def test_ca_download_and_certificate_findings(wf):
    r = await wf.api.get("/api/security/download-ca")
    assert r.status_code == 200 and r.text.startswith("-----BEGIN CERTIFICATE-----")
    report = (await wf.api.get("/api/maintenance/check-cert-security")).json()["data"]
    assert report["ok"] is True and report["key_size"] == 3072 and report["findings"] == []
    key = wf.root / "ca" / "ca.key"
    key.chmod(0o644)
    try:
        report = (await wf.api.get("/api/maintenance/check-cert-security")).json()["data"]
        assert report["ok"] is False and report["findings"][0]["check"] == "key_permissions"
    finally:
        key.chmod(0o600)


class Receivers:
    """Local receivers speaking each target's protocol on loopback."""

    def __init__(self) -> None:
        self.got: dict[str, object] = {}
        self.fail_teams = False

    def routes(self) -> list:
        async def webhook(request):
            self.got["webhook"] = await request.json()
            return web.json_response({})

        async def ntfy(request):
            self.got["ntfy"] = (request.headers.get("Title"), await request.text())
            return web.json_response({})

        async def gotify(request):
            self.got["gotify"] = (request.headers.get("X-Gotify-Key"), await request.json())
            return web.json_response({})

        async def telegram(request):
            self.got["telegram"] = (request.match_info["token"], await request.json())
            return web.json_response({"ok": True})

        async def teams(request):
            self.got["teams"] = await request.json()
            return web.json_response({}, status=500 if self.fail_teams else 200)

        return [
            ("POST", "/webhook", webhook),
            ("POST", "/ntfy/alerts", ntfy),
            ("POST", "/gotify/message", gotify),
            ("POST", "/tg/bot{token}/sendMessage", telegram),
            ("POST", "/teams", teams),
        ]


async def test_notifications_test_sends_to_every_target_and_reports_failures(wf):
    receivers = Receivers()
    receiver = await Receiver(receivers.routes()).start()
    port = receiver.port
    syslog = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    syslog.bind(("127.0.0.1", 0))
    syslog.setblocking(False)
    base = f"http://127.0.0.1:{port}"
    try:
        assert (await wf.api.post("/api/notifications/test")).status_code == 400  # nothing configured
        await wf.api.post(
            "/api/settings",
            json={
                "notify_allow_private_targets": True,  # the receivers are on loopback
                "notify_webhook_url": f"{base}/webhook",
                "notify_ntfy_url": f"{base}/ntfy/alerts",
                "notify_gotify_url": f"{base}/gotify",
                "notify_gotify_token": "gtoken",
                "notify_telegram_url": f"{base}/tg",
                "notify_telegram_token": "123:abc",
                "notify_telegram_chat_id": "42",
                "notify_teams_url": f"{base}/teams",
                "notify_syslog_address": f"127.0.0.1:{syslog.getsockname()[1]}",
            },
        )
        r = await wf.api.post("/api/notifications/test", json={"message": "hello"})
        assert r.status_code == 200, r.text
        assert set(r.json()["data"]) == {"webhook", "ntfy", "gotify", "telegram", "teams", "syslog"}
        assert receivers.got["webhook"]["message"] == "hello"
        assert receivers.got["ntfy"] == ("rayfleet web filter", "hello")
        assert receivers.got["gotify"][0] == "gtoken"
        assert receivers.got["telegram"] == ("123:abc", {"chat_id": "42", "text": "rayfleet web filter\nhello"})
        assert receivers.got["teams"]["@type"] == "MessageCard"
        line = await asyncio.get_running_loop().sock_recv(syslog, 4096)
        assert line.startswith(b"<132>1 ") and b"hello" in line
        receivers.fail_teams = True
        r = await wf.api.post("/api/notifications/test")
        assert r.status_code == 502 and r.json()["detail"] == "notification failed for: teams"
    finally:
        syslog.close()
        await receiver.stop()
        await wf.api.post("/api/database/reset")


async def test_dns_detect_probes_only_loopback_or_the_configured_subnet(wf):
    status = (await wf.api.get("/api/status")).json()["data"]["proxy"]
    r = await wf.api.post("/api/dns/detect", json={"addresses": [status["dns"], "127.0.0.1"], "port": 53})
    found = r.json()["data"]
    assert found[0]["dns"] is True and found[0]["product"] == "dnsmasq"
    assert found[1]["address"] == "127.0.0.1"
    outside = await wf.api.post("/api/dns/detect", json={"addresses": ["8.8.8.8"]})
    assert outside.status_code == 400
    auth_state = wf.app.state.component.auth.instance
    auth_state.scans = 2
    try:
        busy = await wf.api.post("/api/dns/detect", json={"addresses": ["127.0.0.1"]})
        assert busy.status_code == 429
    finally:
        auth_state.scans = 0
