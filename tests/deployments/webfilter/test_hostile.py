"""Hostile input (issue 22 §6): every way found to smuggle something past validation is refused with a
clear 4xx in the component's error shape, and nothing is half-written."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from deployments.webfilter.config import ProxyConfig
from tests.deployments.webfilter.conftest import (
    HOSTS,
    Receiver,
    Service,
    require_dataplane,
    running_service,
    start_origin,
    state_folder,
)

pytestmark = pytest.mark.realserver


@pytest.mark.parametrize(
    "path, body",
    [
        ("/api/domain-whitelist", {"domain": "bank.example\n.com"}),
        ("/api/domain-blacklist", {"domain": "ads.example\n.example"}),
        ("/api/egress-allowlist", {"entry": "ok.example\r\n.net"}),
        ("/api/ip-blacklist", {"ip": "192.0.2.1\n0.0.0.0/0"}),
    ],
)
async def test_an_entry_with_a_newline_is_refused_and_nothing_is_stored(wf, path, body):
    before = (await wf.api.get(path)).json()["meta"]["total"] if "meta" in (await wf.api.get(path)).json() else None
    r = await wf.api.post(path, json=body)
    assert r.status_code == 400 and r.json()["status"] == "error"
    after = (await wf.api.get(path)).json()
    assert after.get("meta", {}).get("total") == before


async def test_an_import_with_a_smuggled_line_keeps_only_the_valid_entries(wf):
    content = "fine.example\nsneaky.example\x0b.com\n"
    r = await wf.api.post("/api/domain-blacklist/import", json={"content": content})
    assert r.status_code == 200, r.text
    rows = (await wf.api.get("/api/domain-blacklist", params={"limit": 1000})).json()["data"]
    domains = {row["domain"] for row in rows}
    assert "fine.example" in domains and not any("sneaky" in d or "\x0b" in d for d in domains)
    await wf.api.delete("/api/domain-blacklist/clear-all")


async def test_restore_config_applies_the_checks_of_a_post(wf):
    backup = (await wf.api.get("/api/maintenance/backup-config")).json()["data"]
    cases = {
        "a newline in an entry": {"domain_whitelist": [{"domain": "bank.example\n.com", "description": ""}]},
        "the same entry twice": {
            "domain_blacklist": [
                {"domain": "dup.example", "description": ""},
                {"domain": "DUP.example.", "description": ""},
            ]
        },
        "a description over the POST limit": {"ip_blacklist": [{"ip": "192.0.2.9", "description": "x" * 501}]},
        "an unknown field": {"ip_blacklist": [{"ip": "192.0.2.9", "description": "", "extra": 1}]},
    }
    for case, lists in cases.items():
        r = await wf.api.post("/api/maintenance/restore-config", json={"config": {**backup, "lists": lists}})
        assert r.status_code == 400, case
        assert r.json()["status"] == "error" and "backup refused" in r.json()["detail"], case
    r = await wf.api.post(
        "/api/maintenance/restore-config", json={"config": {**backup, "waf_categories": {"XSS": "no"}}}
    )
    assert r.status_code == 400 and "boolean" in r.json()["detail"]
    assert (await wf.api.get("/api/maintenance/backup-config")).json()["data"] == backup  # nothing written


async def test_a_toggle_with_enabled_no_is_refused_not_read_as_false(wf):
    before = {c["name"]: c["enabled"] for c in (await wf.api.get("/api/waf/categories")).json()["data"]}
    for value in ("no", "yes", "off", 0, 1, "false", None):
        r = await wf.api.post("/api/waf/categories/toggle", json={"category": "XSS", "enabled": value})
        assert r.status_code == 422, value
        assert r.json()["status"] == "error"
    after = {c["name"]: c["enabled"] for c in (await wf.api.get("/api/waf/categories")).json()["data"]}
    assert after == before


async def test_an_authenticated_route_refuses_a_body_over_the_cap_declared_or_chunked(wf):
    cap = wf.app.state.component.config.max_body_bytes
    big = b'{"enable_waf": true, "pad": "' + b"x" * (cap + 10) + b'"}'
    r = await wf.api.post("/api/settings", content=big, headers={"content-type": "application/json"})
    assert r.headers["x-api-version"] == "1"
    assert r.status_code == 413 and r.json() == {
        "status": "error",
        "detail": f"the request body is larger than the limit of {cap} bytes",
    }

    async def chunks():  # no Content-Length: the cap is counted as the body arrives
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536]

    r = await wf.api.post("/api/settings", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["status"] == "error"
    # an import may be larger than the cap (up to its own limit)
    content = "".join(f"d{i}.example\n" for i in range(cap // 10))
    r = await wf.api.post("/api/domain-blacklist/import", json={"content": content})
    assert r.status_code == 200, r.text
    await wf.api.delete("/api/domain-blacklist/clear-all")


@pytest.mark.parametrize(
    "name, value",
    [
        ("notify_webhook_url", "http://198.18.0.1/hook\r\nX-Injected: 1"),
        ("notify_ntfy_url", "http://198.18.0.1/topic\nmore"),
        ("notify_teams_url", "http://198.18.0.1/a b"),
        ("notify_gotify_url", "ftp://198.18.0.1/"),
        ("notify_telegram_token", "123:abc/../../admin?x="),
        ("notify_telegram_token", "123:abc#frag"),
        ("notify_telegram_token", "not-a-token"),
        ("notify_telegram_chat_id", "42\r\n"),
        ("notify_gotify_token", "tok\r\nX-Evil: 1"),
    ],
)
async def test_a_notification_target_with_a_line_break_or_a_path_steering_token_is_refused(wf, name, value):
    before = (await wf.api.get("/api/settings")).json()["data"][name]
    r = await wf.api.put(f"/api/settings/{name}", json={"value": value})
    assert r.status_code == 400 and r.json()["status"] == "error", r.text
    assert (await wf.api.get("/api/settings")).json()["data"][name] == before


async def test_a_loopback_target_is_not_called_unless_the_operator_allows_private_targets(wf):
    """A target on loopback could call our own admin API: refused at send time (the name is resolved and
    checked as an import URL's is), unless `notify_allow_private_targets` says so."""
    got: list[str] = []

    async def hook(request):
        got.append(await request.text())
        return web.json_response({})

    receiver = await Receiver([("POST", "/hook", hook)]).start()
    try:
        assert (
            await wf.api.post("/api/settings", json={"notify_webhook_url": f"http://127.0.0.1:{receiver.port}/hook"})
        ).status_code == 200
        r = await wf.api.post("/api/notifications/test", json={"message": "m1"})
        assert r.status_code == 502 and r.json()["detail"] == "notification failed for: webhook"
        assert got == []
        assert (await wf.api.put("/api/settings/notify_allow_private_targets", json={"value": True})).status_code == 200
        r = await wf.api.post("/api/notifications/test", json={"message": "m2"})
        assert r.status_code == 200, r.text
        assert len(got) == 1 and "m2" in got[0]
    finally:
        await receiver.stop()
        await wf.api.post("/api/settings", json={"notify_webhook_url": "", "notify_allow_private_targets": False})


@contextlib.asynccontextmanager
async def refusing_service(tmp_path: Path) -> AsyncIterator[Service]:
    """The web filter over a wrapper around the real Squid whose parse refuses any ACL holding the name
    `refused-by-squid` (as Squid 5.7 refused overlapping or oversized lists): a valid entry it cannot hold."""
    require_dataplane()
    wrapper = tmp_path / "squid"
    wrapper.write_text(
        "#!/bin/sh\n"
        'case "$*" in *"-k parse"*) if grep -rqs "refused-by-squid" "$(dirname "$4")/acl"; then\n'
        '  echo "FATAL: Bungled acl line (test)" >&2; exit 1; fi ;; esac\n'
        'exec /usr/sbin/squid "$@"\n'
    )
    wrapper.chmod(0o755)
    origin_runner, origin = await start_origin()
    try:
        proxy = ProxyConfig(hosts=HOSTS, squid_bin=str(wrapper))
        async for svc in running_service(state_folder(), origin, proxy=proxy):
            yield svc
    finally:
        await origin_runner.cleanup()


async def test_an_entry_squid_refuses_is_not_kept_and_the_answer_says_why(tmp_path):
    """A valid entry this Squid cannot hold (here: a wrapper around the real Squid whose parse refuses one
    name, as Squid 5.7 refused overlapping or oversized lists): 400 with Squid's words, the row is not kept,
    and the proxy goes on enforcing the last good policy."""
    async with refusing_service(tmp_path) as svc:
        assert (await svc.api.post("/api/domain-blacklist", json={"domain": "kept.example"})).status_code == 200
        r = await svc.api.post("/api/domain-blacklist", json={"domain": "refused-by-squid.example"})
        assert r.status_code == 400 and r.json()["status"] == "error"
        assert "refused-by-squid.example not added" in r.json()["detail"] and "Bungled" in r.json()["detail"]
        rows = (await svc.api.get("/api/domain-blacklist")).json()["data"]
        assert [row["domain"] for row in rows] == ["kept.example"]
        assert (await svc.fetch(svc.url("allowed.test", "/still-served"))).status_code == 200
        assert (await svc.api.post("/api/domain-blacklist", json={"domain": "next.example"})).status_code == 200


async def test_a_backup_squid_refuses_is_not_kept(tmp_path):
    async with refusing_service(tmp_path) as svc:
        assert (await svc.api.post("/api/domain-blacklist", json={"domain": "kept.example"})).status_code == 200
        backup = (await svc.api.get("/api/maintenance/backup-config")).json()["data"]
        bad = {**backup, "lists": {"domain-blacklist": [{"domain": "refused-by-squid.example"}]}}
        r = await svc.api.post("/api/maintenance/restore-config", json={"config": bad})
        assert r.status_code == 400 and "nothing changed" in r.json()["detail"]
        assert (await svc.api.get("/api/maintenance/backup-config")).json()["data"] == backup
        assert (await svc.fetch(svc.url("kept.example", "/x"))).status_code == 403
