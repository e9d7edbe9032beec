"""Notification targets: webhook, ntfy, Gotify, Telegram-style bot, Teams-style card, syslog (SIEM).

Each send reports its own outcome; a failure is a failure (status code or error), never success.
Before each send the target's host is resolved and, like an import URL's, must be public (loopback,
private, link-local... are refused: a target could otherwise call our own admin API), unless the
operator set `notify_allow_private_targets` for a receiver of their own; the send then goes to the
address that was checked.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import socket
from typing import Any
from urllib.parse import urlsplit

import httpx

from actors.webfilter.fetch import Pinned, is_public, resolve

TIMEOUT = 5.0


async def _checked_address(url: str, allow_private: bool) -> tuple[str, str]:
    """(the address `url` may be called at now, "") or ("", why it may not)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "", "target must be an http(s) URL with a host"
    try:
        addresses = await resolve(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    except OSError:
        return "", "target host does not resolve"
    if not addresses or not (allow_private or all(is_public(a) for a in addresses)):
        return "", "target resolves to a non-public address (see notify_allow_private_targets)"
    return addresses[0], ""


async def _post(client: httpx.AsyncClient, url: str, allow_private: bool, **kwargs: Any) -> dict[str, Any]:
    """POST to the address that was checked (no second lookup for a rebinding name to answer)."""
    address, refused = await _checked_address(url, allow_private)
    if refused:
        return {"ok": False, "error": refused}
    hop = Pinned.to(url, address)
    headers = {**kwargs.pop("headers", {}), **hop.headers}
    try:
        response = await client.post(hop.url, headers=headers, extensions=hop.extensions, **kwargs)
    except httpx.HTTPError as exc:
        return {"ok": False, "error": type(exc).__name__}
    return {"ok": 200 <= response.status_code < 300, "status_code": response.status_code}


def _syslog(address: str, title: str, message: str, allow_private: bool) -> dict[str, Any]:
    host, _, port = address.rpartition(":")
    if not (allow_private or is_public(host.strip("[]"))):
        return {"ok": False, "error": "target is a non-public address (see notify_allow_private_targets)"}
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    line = f"<132>1 {stamp} rayfleet-webfilter webfilter - alert - {title}: {message}"
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sent = sock.sendto(line.encode()[:2048], (host.strip("[]"), int(port)))
    except OSError as exc:
        return {"ok": False, "error": type(exc).__name__}
    return {"ok": sent > 0, "bytes": sent}


def targets(settings: dict[str, Any]) -> list[str]:
    names = []
    if settings["notify_webhook_url"]:
        names.append("webhook")
    if settings["notify_ntfy_url"]:
        names.append("ntfy")
    if settings["notify_gotify_url"] and settings["notify_gotify_token"]:
        names.append("gotify")
    if settings["notify_telegram_url"] and settings["notify_telegram_token"] and settings["notify_telegram_chat_id"]:
        names.append("telegram")
    if settings["notify_teams_url"]:
        names.append("teams")
    if settings["notify_syslog_address"]:
        names.append("syslog")
    return names


async def send_all(
    settings: dict[str, Any], title: str, message: str, event: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Send to every configured target at once; `{target: {ok, ...}}`."""
    s = settings
    private = bool(s.get("notify_allow_private_targets", False))
    async with httpx.AsyncClient(timeout=TIMEOUT, trust_env=False) as client:
        jobs: dict[str, Any] = {}
        for name in targets(s):
            if name == "webhook":
                jobs[name] = _post(
                    client, s["notify_webhook_url"], private, json={"title": title, "message": message, **event}
                )
            elif name == "ntfy":
                jobs[name] = _post(
                    client, s["notify_ntfy_url"], private, content=message.encode(), headers={"Title": title}
                )
            elif name == "gotify":
                jobs[name] = _post(
                    client,
                    s["notify_gotify_url"].rstrip("/") + "/message",
                    private,
                    json={"title": title, "message": message, "priority": 5},
                    headers={"X-Gotify-Key": s["notify_gotify_token"]},
                )
            elif name == "telegram":
                jobs[name] = _post(
                    client,
                    f"{s['notify_telegram_url'].rstrip('/')}/bot{s['notify_telegram_token']}/sendMessage",
                    private,
                    json={"chat_id": s["notify_telegram_chat_id"], "text": f"{title}\n{message}"},
                )
            elif name == "teams":
                card = {
                    "@type": "MessageCard",
                    "@context": "http://schema.org/extensions",
                    "title": title,
                    "text": message,
                }
                jobs[name] = _post(client, s["notify_teams_url"], private, json=card)
            elif name == "syslog":
                jobs[name] = asyncio.to_thread(_syslog, s["notify_syslog_address"], title, message, private)
        results = await asyncio.gather(*jobs.values())
    return dict(zip(jobs, results, strict=True))
