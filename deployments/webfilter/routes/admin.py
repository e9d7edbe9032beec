"""Settings, database and proxy maintenance, certificates, rate limits, notifications, DNS detection."""

from __future__ import annotations

import asyncio
import ipaddress
import re
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Body, Query
from fastapi.responses import Response

from actors.webfilter.authstate import AuthState
from actors.webfilter.dataplane import DataPlaneError
from actors.webfilter.logstore import LogStore
from actors.webfilter.proxy import ProxyOwner
from deployments.webfilter import ca, dnsprobe, notify
from deployments.webfilter.errors import AUTH_ERRORS, ApiError, errors, ok, public_message
from deployments.webfilter.routes.common import SIGNED_IN, Ctx, Peer
from deployments.webfilter.schemas import TEST_MESSAGE, DnsDetectBody, Envelope, NotifyBody, RestoreBody
from deployments.webfilter.secretbox import SecretUnreadable
from deployments.webfilter.settings import MASK, PROXY_SETTINGS, SettingError, parse_setting, redacted
from deployments.webfilter.state import WebfilterState
from rayfleet.state import call

router = APIRouter(tags=["settings and maintenance"], dependencies=[SIGNED_IN], responses=AUTH_ERRORS)


async def _check_bump(context: WebfilterState, values: dict[str, Any]) -> None:
    """ssl_bump_enabled on is refused (400, nothing written) when this Squid cannot bump."""
    if values.get("ssl_bump_enabled") is True and not await call(context.proxy, ProxyOwner.tls_capable):
        raise ApiError(
            400,
            "ssl_bump_enabled: the installed Squid cannot bump TLS (Debian's GnuTLS build); "
            "install squid-openssl (scripts/system-deps.sh)",
        )


async def _apply_settings(context: WebfilterState, ip: str, raw: dict[str, Any]) -> dict[str, Any]:
    if not raw:
        raise ApiError(400, "no settings given")
    try:
        values = {k: parse_setting(k, v) for k, v in raw.items() if v != MASK}
    except SettingError as exc:
        raise ApiError(400, str(exc)) from None
    await _check_bump(context, values)
    before = await context.db(context.store.settings)  # secrets masked: they are put back only when unchanged
    await context.db(context.store.put_settings, values)
    sync = None
    if set(values) & set(PROXY_SETTINGS):
        try:
            sync = await context.sync_proxy()
        except DataPlaneError as exc:  # e.g. a listen address that is not this node's: put the old values back
            await context.db(context.store.put_settings, {k: before[k] for k in values if before[k] != MASK})
            raise ApiError(400, f"not applied, nothing changed: {public_message(exc, 'settings refused')}") from None
    if {"gdpr_mode", "log_retention_days"} & set(values):  # in force for the next line ingested
        await call(context.logs, LogStore.reload_settings)
    await context.db(context.store.audit, None, ip, "settings", ",".join(sorted(values)))
    current = await context.db(context.store.settings)
    return ok(redacted({k: current[k] for k in values}), proxy=sync)


@router.get("/api/settings", response_model=Envelope, summary="Every setting (flat name -> value; secrets masked)")
async def get_settings(context: Ctx) -> dict[str, Any]:
    return ok(redacted(await context.db(context.store.settings)))


@router.put(
    "/api/settings/{name}", response_model=Envelope, responses=errors(400), summary="Set one setting: body {value}"
)
async def put_setting(context: Ctx, ip: Peer, name: str, value: Any = Body(..., embed=True)) -> dict[str, Any]:
    return await _apply_settings(context, ip, {name: value})


@router.post(
    "/api/settings", response_model=Envelope, responses=errors(400), summary="Set several settings (all or nothing)"
)
async def post_settings(context: Ctx, ip: Peer, body: dict[str, Any] = Body(...)) -> dict[str, Any]:
    return await _apply_settings(context, ip, body)


@router.get("/api/database/size", response_model=Envelope, summary="Bytes on disk")
async def database_size(context: Ctx) -> dict[str, Any]:
    sqlite_bytes = await context.db(context.store.size_bytes)
    duck = context.config.root / "logs.duckdb"
    log_bytes = duck.stat().st_size if duck.exists() else 0
    return ok({"config_db_bytes": sqlite_bytes, "log_db_bytes": log_bytes, "total_bytes": sqlite_bytes + log_bytes})


@router.get("/api/database/export", response_model=Envelope, summary="Every table, secrets redacted")
async def database_export(context: Ctx) -> dict[str, Any]:
    return ok(await context.db(context.store.export))


@router.get("/api/database/stats", response_model=Envelope, summary="Rows per table")
async def database_stats(context: Ctx) -> dict[str, Any]:
    counts = await context.db(context.store.table_counts)
    log_db = await call(context.logs, LogStore.table_stats)
    return ok({"tables": counts, "log_rows": log_db["log_rows"], "log_db": log_db})


@router.post("/api/database/optimize", response_model=Envelope, summary="VACUUM, REINDEX, checkpoint")
async def database_optimize(context: Ctx) -> dict[str, Any]:
    before = await context.db(context.store.size_bytes)
    await context.db(context.store.optimize)
    return ok({"bytes_before": before, "bytes_after": await context.db(context.store.size_bytes)})


@router.post("/api/database/reset", response_model=Envelope, summary="Empty every table except users")
async def database_reset(context: Ctx, ip: Peer) -> dict[str, Any]:
    cleared = await context.db(context.store.reset)
    await call(context.logs, LogStore.reload_settings)
    await context.db(context.store.audit, None, ip, "database.reset")
    return ok({"cleared": cleared, "kept": ["users"]}, proxy=await context.sync_proxy())


_MGR_FIELDS = {
    "clients": r"Number of clients accessing cache:\s+(\d+)",
    "http_requests": r"Number of HTTP requests received:\s+(\d+)",
    "hit_ratio_5min_percent": r"Request Hit Ratios:\s+5min: ([\d.]+)%",
    "byte_hit_ratio_5min_percent": r"Byte Hit Ratios:\s+5min: ([\d.]+)%",
    "memory_cache_kb": r"Storage Mem size:\s+(\d+) KB",
    "store_entries": r"(\d+) StoreEntries\b",
    "mean_object_size_kb": r"Mean Object Size:\s+([\d.]+) KB",
    "uptime_seconds": r"UP Time:\s+([\d.]+) seconds",
}


async def _cache_stats(context: WebfilterState) -> dict[str, Any]:
    try:
        text = await call(context.proxy, ProxyOwner.manager, "info")
    except Exception as exc:
        detail = public_message(exc, "squid cache manager unavailable")
        raise ApiError(503, f"squid cache manager unavailable: {detail}") from None
    out: dict[str, Any] = {"source": "squid mgr:info"}
    for name, pattern in _MGR_FIELDS.items():
        match = re.search(pattern, text)
        out[name] = float(match.group(1)) if match and "." in match.group(1) else int(match.group(1)) if match else None
    return out


@router.get(
    "/api/cache/statistics", response_model=Envelope, responses=errors(503), summary="Squid cache manager figures"
)
async def cache_statistics(context: Ctx) -> dict[str, Any]:
    return ok(await _cache_stats(context))


@router.post("/api/maintenance/reload-config", response_model=Envelope, summary="Re-render and reconfigure Squid")
async def reload_config(context: Ctx) -> dict[str, Any]:
    await context.sync_proxy()
    return ok(await call(context.proxy, ProxyOwner.reconfigure))


@router.post(
    "/api/maintenance/reload-dns",
    response_model=Envelope,
    responses=errors(503),
    summary="SIGHUP dnsmasq (re-read hosts)",
)
async def reload_dns(context: Ctx) -> dict[str, Any]:
    if not await call(context.proxy, ProxyOwner.reload_dns):
        raise ApiError(503, "dnsmasq is not running")
    return ok({"reloaded": True})


@router.post(
    "/api/maintenance/clear-cache",
    response_model=Envelope,
    responses=errors(503),
    summary="Empty Squid's cache (restart)",
)
async def clear_cache(context: Ctx) -> dict[str, Any]:
    before = await _cache_stats(context)
    await call(context.proxy, ProxyOwner.restart)
    after = await _cache_stats(context)
    return ok(
        {"method": "squid restart", "entries_before": before["store_entries"], "entries_after": after["store_entries"]}
    )


@router.get("/api/maintenance/backup-config", response_model=Envelope, summary="Settings, WAF and lists")
async def backup_config(context: Ctx) -> dict[str, Any]:
    return ok(await context.db(context.store.backup))


@router.post(
    "/api/maintenance/restore-config",
    response_model=Envelope,
    responses=errors(400),
    summary="Restore a backup (all or nothing)",
)
async def restore_config(context: Ctx, ip: Peer, body: RestoreBody) -> dict[str, Any]:
    raw = body.config.get("settings")
    if isinstance(raw, dict) and raw.get("ssl_bump_enabled", MASK) != MASK:
        try:
            await _check_bump(context, {"ssl_bump_enabled": parse_setting("ssl_bump_enabled", raw["ssl_bump_enabled"])})
        except SettingError as exc:
            raise ApiError(400, f"backup refused: {exc}") from None
    previous = await context.db(context.store.backup)
    try:
        summary = await context.db(context.store.restore, body.config)
    except (SettingError, ValueError) as exc:
        raise ApiError(400, f"backup refused: {exc}") from None
    await context.db(context.store.audit, None, ip, "restore-config")
    try:
        proxy = await context.sync_proxy()
    except DataPlaneError as exc:  # Squid (or a listener) refused it: the previous configuration comes back
        await context.db(context.store.restore, previous)
        await context.sync_proxy()
        raise ApiError(400, f"backup refused, nothing changed: {public_message(exc, 'backup refused')}") from None
    await call(context.logs, LogStore.reload_settings)  # gdpr_mode and the retention may have changed
    return ok(summary, proxy=proxy)


def _ca_paths(context: WebfilterState) -> tuple[Path, Path]:
    return ca.ensure_ca(context.ca_cert.parent)


@router.get("/api/maintenance/check-cert-security", response_model=Envelope, summary="Findings about the CA")
async def check_cert_security(context: Ctx) -> dict[str, Any]:
    cert, key = await asyncio.to_thread(_ca_paths, context)
    report = await asyncio.to_thread(ca.check, cert, key)
    state = await context.interception()
    setting = (await context.db(context.store.settings))["ssl_bump_enabled"]
    report["interception_enabled"] = state["interception_enabled"]
    if state["interception_enabled"]:
        note = "Squid bumps HTTPS with this CA (peek at step 1, then bump): clients must trust it"
    elif setting:
        note = "ssl_bump_enabled is on but Squid is not bumping with this CA now (not running or not yet applied)"
    else:
        note = "ssl_bump_enabled is off: HTTPS is tunnelled (CONNECT host:port decided), not inspected"
    report["interception_note"] = note
    return ok(report)


@router.get("/api/security/download-ca", summary="The interception CA certificate (PEM)", response_class=Response)
async def download_ca(context: Ctx) -> Response:
    cert, _ = await asyncio.to_thread(_ca_paths, context)
    return Response(
        cert.read_bytes(),
        media_type="application/x-pem-file",
        headers={"Content-Disposition": 'attachment; filename="rayfleet-webfilter-ca.pem"'},
    )


@router.get("/api/security/rate-limits", response_model=Envelope, summary="Addresses with failed logins")
async def rate_limits(context: Ctx) -> dict[str, Any]:
    cfg = context.config.auth
    return ok(
        await call(context.auth, AuthState.locked),
        meta={"max_attempts": cfg.lockout_attempts, "window_seconds": cfg.lockout_window_seconds},
    )


@router.delete(
    "/api/security/rate-limits/{ip}",
    response_model=Envelope,
    responses=errors(400, 404),
    summary="Clear an address's failures",
)
async def clear_rate_limit(context: Ctx, ip: str) -> dict[str, Any]:
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        raise ApiError(400, f"not an IP address: {ip[:100]!r}") from None
    if not await call(context.auth, AuthState.clear, ip):
        raise ApiError(404, f"no failed attempts recorded for {ip}")
    return ok({"ip": ip, "cleared": True})


@router.post(
    "/api/notifications/test",
    response_model=Envelope,
    responses=errors(400, 409, 502),
    summary="Send a test to every configured target",
)
async def notifications_test(context: Ctx, body: NotifyBody | None = None) -> dict[str, Any]:
    try:
        settings = await context.db(context.store.settings, True)
    except SecretUnreadable as exc:
        raise ApiError(409, str(exc)) from None
    if not notify.targets(settings):
        raise ApiError(400, "no notification target is configured")
    message = body.message if body else TEST_MESSAGE
    results = await notify.send_all(settings, "rayfleet web filter", message, {"event": "test"})
    failed = [name for name, r in results.items() if not r["ok"]]
    if failed:
        raise ApiError(502, "notification failed for: " + ", ".join(failed))
    return ok(results)


@router.post(
    "/api/dns/detect",
    response_model=Envelope,
    responses=errors(400, 429),
    summary="Probe given addresses for DNS filters",
)
async def dns_detect(context: Ctx, body: DnsDetectBody, timeout: float = Query(1.0, gt=0, le=5)) -> dict[str, Any]:
    subnet = ipaddress.ip_network(context.config.dns_detect_subnet)
    for address in body.addresses:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            raise ApiError(400, f"not an IP address: {address[:100]!r}") from None
        if not (ip.is_loopback or ip in subnet):
            raise ApiError(400, f"{address} is neither loopback nor in the configured subnet {subnet}")
    if not await call(context.auth, AuthState.acquire_scan):
        raise ApiError(429, "two DNS scans are already running", {"Retry-After": "5"})
    try:
        found = await asyncio.gather(
            *(asyncio.to_thread(dnsprobe.probe, a, body.port, timeout) for a in body.addresses)
        )
    finally:
        await call(context.auth, AuthState.release_scan)
    return ok(list(found))
