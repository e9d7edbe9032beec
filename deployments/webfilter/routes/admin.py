"""Settings, database and proxy maintenance, certificates, rate limits, notifications, DNS detection."""

from __future__ import annotations

import asyncio
import ipaddress
import re
from typing import Any

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import Response

from deployments.webfilter import auth, ca, dnsprobe, notify
from deployments.webfilter.context import Context, ctx, peer
from deployments.webfilter.errors import AUTH_ERRORS, ApiError, errors, ok
from deployments.webfilter.schemas import TEST_MESSAGE, DnsDetectBody, Envelope, NotifyBody, RestoreBody
from deployments.webfilter.secretbox import SecretUnreadable
from deployments.webfilter.settings import MASK, PROXY_SETTINGS, SettingError, parse_setting, redacted

router = APIRouter(tags=["settings and maintenance"], dependencies=[auth.User], responses=AUTH_ERRORS)


async def _check_bump(context: Context, values: dict[str, Any]) -> None:
    """ssl_bump_enabled on is refused (400, nothing written) when this Squid cannot bump."""
    if values.get("ssl_bump_enabled") is True and not await context.proxy.tls_capable.remote():
        raise ApiError(
            400,
            "ssl_bump_enabled: the installed Squid cannot bump TLS (Debian's GnuTLS build); "
            "install squid-openssl (scripts/system-deps.sh)",
        )


async def _apply_settings(request: Request, raw: dict[str, Any]) -> dict:
    context = ctx(request)
    if not raw:
        raise ApiError(400, "no settings given")
    try:
        values = {k: parse_setting(k, v) for k, v in raw.items() if v != MASK}
    except SettingError as exc:
        raise ApiError(400, str(exc)) from None
    await _check_bump(context, values)
    await context.db(context.store.put_settings, values)
    await context.db(context.store.audit, None, peer(request), "settings", ",".join(sorted(values)))
    sync = await context.sync_proxy() if set(values) & set(PROXY_SETTINGS) else None
    current = await context.db(context.store.settings)
    return ok(redacted({k: current[k] for k in values}), proxy=sync)


@router.get("/api/settings", response_model=Envelope, summary="Every setting (flat name -> value; secrets masked)")
async def get_settings(request: Request) -> dict:
    context = ctx(request)
    return ok(redacted(await context.db(context.store.settings)))


@router.put(
    "/api/settings/{name}", response_model=Envelope, responses=errors(400), summary="Set one setting: body {value}"
)
async def put_setting(request: Request, name: str, value: Any = Body(..., embed=True)) -> dict:
    return await _apply_settings(request, {name: value})


@router.post(
    "/api/settings", response_model=Envelope, responses=errors(400), summary="Set several settings (all or nothing)"
)
async def post_settings(request: Request, body: dict[str, Any] = Body(...)) -> dict:
    return await _apply_settings(request, body)


@router.get("/api/database/size", response_model=Envelope, summary="Bytes on disk")
async def database_size(request: Request) -> dict:
    context = ctx(request)
    sqlite_bytes = await context.db(context.store.size_bytes)
    duck = context.config.root / "logs.duckdb"
    log_bytes = duck.stat().st_size if duck.exists() else 0
    return ok({"config_db_bytes": sqlite_bytes, "log_db_bytes": log_bytes, "total_bytes": sqlite_bytes + log_bytes})


@router.get("/api/database/export", response_model=Envelope, summary="Every table, secrets redacted")
async def database_export(request: Request) -> dict:
    context = ctx(request)
    return ok(await context.db(context.store.export))


@router.get("/api/database/stats", response_model=Envelope, summary="Rows per table")
async def database_stats(request: Request) -> dict:
    context = ctx(request)
    counts = await context.db(context.store.table_counts)
    (rows,) = await context.logs.queries.remote([("SELECT count(*) FROM logs", [])])
    return ok({"tables": counts, "log_rows": int(rows[0][0])})


@router.post("/api/database/optimize", response_model=Envelope, summary="VACUUM, REINDEX, checkpoint")
async def database_optimize(request: Request) -> dict:
    context = ctx(request)
    before = await context.db(context.store.size_bytes)
    await context.db(context.store.optimize)
    return ok({"bytes_before": before, "bytes_after": await context.db(context.store.size_bytes)})


@router.post("/api/database/reset", response_model=Envelope, summary="Empty every table except users")
async def database_reset(request: Request) -> dict:
    context = ctx(request)
    cleared = await context.db(context.store.reset)
    await context.db(context.store.audit, None, peer(request), "database.reset")
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


async def _cache_stats(request: Request) -> dict[str, Any]:
    try:
        text = await ctx(request).proxy.manager.remote("info")
    except Exception as exc:
        raise ApiError(503, f"squid cache manager unavailable: {type(exc).__name__}") from None
    out: dict[str, Any] = {"source": "squid mgr:info"}
    for name, pattern in _MGR_FIELDS.items():
        match = re.search(pattern, text)
        out[name] = float(match.group(1)) if match and "." in match.group(1) else int(match.group(1)) if match else None
    return out


@router.get(
    "/api/cache/statistics", response_model=Envelope, responses=errors(503), summary="Squid cache manager figures"
)
async def cache_statistics(request: Request) -> dict:
    return ok(await _cache_stats(request))


@router.post("/api/maintenance/reload-config", response_model=Envelope, summary="Re-render and reconfigure Squid")
async def reload_config(request: Request) -> dict:
    context = ctx(request)
    await context.sync_proxy()
    return ok(await context.proxy.reconfigure.remote())


@router.post(
    "/api/maintenance/reload-dns",
    response_model=Envelope,
    responses=errors(503),
    summary="SIGHUP dnsmasq (re-read hosts)",
)
async def reload_dns(request: Request) -> dict:
    if not await ctx(request).proxy.reload_dns.remote():
        raise ApiError(503, "dnsmasq is not running")
    return ok({"reloaded": True})


@router.post(
    "/api/maintenance/clear-cache",
    response_model=Envelope,
    responses=errors(503),
    summary="Empty Squid's cache (restart)",
)
async def clear_cache(request: Request) -> dict:
    before = await _cache_stats(request)
    await ctx(request).proxy.restart.remote()
    after = await _cache_stats(request)
    return ok(
        {"method": "squid restart", "entries_before": before["store_entries"], "entries_after": after["store_entries"]}
    )


@router.get("/api/maintenance/backup-config", response_model=Envelope, summary="Settings, WAF and lists")
async def backup_config(request: Request) -> dict:
    context = ctx(request)
    return ok(await context.db(context.store.backup))


@router.post(
    "/api/maintenance/restore-config",
    response_model=Envelope,
    responses=errors(400),
    summary="Restore a backup (all or nothing)",
)
async def restore_config(request: Request, body: RestoreBody) -> dict:
    context = ctx(request)
    raw = body.config.get("settings")
    if isinstance(raw, dict) and raw.get("ssl_bump_enabled", MASK) != MASK:
        try:
            await _check_bump(context, {"ssl_bump_enabled": parse_setting("ssl_bump_enabled", raw["ssl_bump_enabled"])})
        except SettingError as exc:
            raise ApiError(400, f"backup refused: {exc}") from None
    try:
        summary = await context.db(context.store.restore, body.config)
    except (SettingError, ValueError) as exc:
        raise ApiError(400, f"backup refused: {exc}") from None
    await context.db(context.store.audit, None, peer(request), "restore-config")
    return ok(summary, proxy=await context.sync_proxy())


def _ca_paths(request: Request) -> tuple[Any, Any]:
    return ca.ensure_ca(ctx(request).ca_cert.parent)


@router.get("/api/maintenance/check-cert-security", response_model=Envelope, summary="Findings about the CA")
async def check_cert_security(request: Request) -> dict:
    context = ctx(request)
    cert, key = await asyncio.to_thread(_ca_paths, request)
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
async def download_ca(request: Request) -> Response:
    cert, _ = await asyncio.to_thread(_ca_paths, request)
    return Response(
        cert.read_bytes(),
        media_type="application/x-pem-file",
        headers={"Content-Disposition": 'attachment; filename="rayfleet-webfilter-ca.pem"'},
    )


@router.get("/api/security/rate-limits", response_model=Envelope, summary="Addresses with failed logins")
async def rate_limits(request: Request) -> dict:
    context = ctx(request)
    cfg = context.config.auth
    return ok(
        await context.auth.locked.remote(),
        meta={"max_attempts": cfg.lockout_attempts, "window_seconds": cfg.lockout_window_seconds},
    )


@router.delete(
    "/api/security/rate-limits/{ip}",
    response_model=Envelope,
    responses=errors(400, 404),
    summary="Clear an address's failures",
)
async def clear_rate_limit(request: Request, ip: str) -> dict:
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        raise ApiError(400, f"not an IP address: {ip[:100]!r}") from None
    if not await ctx(request).auth.clear.remote(ip):
        raise ApiError(404, f"no failed attempts recorded for {ip}")
    return ok({"ip": ip, "cleared": True})


@router.post(
    "/api/notifications/test",
    response_model=Envelope,
    responses=errors(400, 409, 502),
    summary="Send a test to every configured target",
)
async def notifications_test(request: Request, body: NotifyBody | None = None) -> dict:
    context = ctx(request)
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
async def dns_detect(request: Request, body: DnsDetectBody, timeout: float = Query(1.0, gt=0, le=5)) -> dict:
    context = ctx(request)
    subnet = ipaddress.ip_network(context.config.dns_detect_subnet)
    for address in body.addresses:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            raise ApiError(400, f"not an IP address: {address[:100]!r}") from None
        if not (ip.is_loopback or ip in subnet):
            raise ApiError(400, f"{address} is neither loopback nor in the configured subnet {subnet}")
    if not await context.auth.acquire_scan.remote():
        raise ApiError(429, "two DNS scans are already running", {"Retry-After": "5"})
    try:
        found = await asyncio.gather(
            *(asyncio.to_thread(dnsprobe.probe, a, body.port, timeout) for a in body.addresses)
        )
    finally:
        await context.auth.release_scan.remote()
    return ok(list(found))
