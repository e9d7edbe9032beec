"""Settings the API accepts: only those that take effect, each with its type, default and effect."""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MASK = "********"  # how a set secret is shown (and, sent back in a backup or a settings call, "keep it")


class SettingError(ValueError):
    pass


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "on", "off"):
        return value.lower() in ("true", "1", "on")
    raise SettingError("expected a boolean")


def _days(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise SettingError("expected an integer number of days")
    try:
        days = int(value)
    except ValueError:
        raise SettingError("expected an integer number of days") from None
    if not 1 <= days <= 3650:
        raise SettingError("must be between 1 and 3650")
    return days


def _networks(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split() if v]
    if not isinstance(value, list) or len(value) > 1000:
        raise SettingError("expected a list of addresses or CIDRs (at most 1000)")
    try:
        return [str(ipaddress.ip_network(str(v).strip(), strict=False)) for v in value]
    except ValueError as exc:
        raise SettingError(str(exc)) from None


_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")  # a line break in a URL or token could become a header or a path


def _url(value: Any) -> str:
    if value in (None, ""):
        return ""
    if not isinstance(value, str) or len(value) > 2000:
        raise SettingError("expected a URL")
    if _UNSAFE.search(value):
        raise SettingError("a URL may not contain whitespace or control characters")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingError("expected an http(s) URL")
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str | int) or len(str(value)) > 500:
        raise SettingError("expected a short string")
    return str(value)


def _matching(pattern: str, what: str) -> Callable[[Any], str]:
    """A text setting that must match `pattern` whole (a token that goes into a request path or header)."""
    compiled = re.compile(pattern)

    def parse(value: Any) -> str:
        text = _text(value)
        if text and not compiled.fullmatch(text):
            raise SettingError(f"expected {what}")
        return text

    return parse


def _host_port(value: Any) -> str:
    text = _text(value)
    if not text:
        return ""
    host, _, port = text.rpartition(":")
    try:
        ipaddress.ip_address(host.strip("[]"))
        if not 0 < int(port) < 65536:
            raise ValueError
    except ValueError:
        raise SettingError("expected ip:port (UDP syslog receiver)") from None
    return text


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    parse: Callable[[Any], Any]
    effect: str
    secret: bool = False


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting("enable_domain_blacklist", True, _bool, "Squid denies dstdomain matches of the domain blacklist"),
        Setting("enable_ip_blacklist", True, _bool, "Squid denies dst matches of the IP blacklist"),
        Setting("block_direct_ip", False, _bool, "Squid denies URLs and CONNECTs whose host is a bare IP"),
        Setting("egress_default_deny", False, _bool, "only egress-allowlisted destinations are reachable"),
        Setting("enable_waf", True, _bool, "Squid denies URLs matching the enabled WAF categories"),
        Setting(
            "ssl_bump_enabled",
            False,
            _bool,
            "Squid decrypts HTTPS with the interception CA (peek, then bump): every rule and the logs see full URLs",
        ),
        Setting("allowed_networks", ["127.0.0.0/8", "::1/128"], _networks, "clients allowed to use the proxy"),
        Setting("blocked_sources", [], _networks, "clients refused whatever they ask for"),
        Setting("log_retention_days", 30, _days, "POST /api/logs/clear-old deletes older log rows"),
        Setting("gdpr_mode", False, _bool, "client addresses in /api/logs and the stream lose their last octet"),
        Setting("enable_notifications", False, _bool, "WAF alerts are forwarded to every configured target"),
        Setting("notify_webhook_url", "", _url, "webhook target (raw JSON POST)"),
        Setting("notify_ntfy_url", "", _url, "ntfy topic URL (text POST)"),
        Setting("notify_gotify_url", "", _url, "Gotify server URL (POST /message)"),
        Setting(
            "notify_gotify_token",
            "",
            _matching(r"[\x21-\x7e]{1,500}", "a token of visible ASCII characters"),
            "Gotify application token",
            secret=True,
        ),
        Setting("notify_telegram_url", "", _url, "bot API base URL (POST /bot<token>/sendMessage)"),
        Setting(
            "notify_telegram_token",
            "",
            _matching(r"[0-9]{1,20}:[A-Za-z0-9_-]{1,200}", "a bot token <digits>:<letters, digits, _ or ->"),
            "bot token",
            secret=True,
        ),
        Setting(
            "notify_telegram_chat_id",
            "",
            _matching(r"-?[0-9]{1,20}|@[A-Za-z0-9_]{1,64}", "a chat id (a number or @name)"),
            "chat id",
        ),
        Setting("notify_teams_url", "", _url, "team chat incoming-webhook URL (MessageCard)"),
        Setting("notify_syslog_address", "", _host_port, "SIEM syslog receiver ip:port (RFC 5424 over UDP)"),
        Setting(
            "notify_allow_private_targets",
            False,
            _bool,
            "notification targets may resolve to loopback or private addresses (an operator's own receiver); "
            "otherwise only public addresses are called, checked at each send",
        ),
    )
}

PROXY_SETTINGS = (
    "enable_domain_blacklist",
    "enable_ip_blacklist",
    "block_direct_ip",
    "egress_default_deny",
    "enable_waf",
    "allowed_networks",
    "blocked_sources",
    "ssl_bump_enabled",
)


def parse_setting(name: str, value: Any) -> Any:
    setting = SETTINGS.get(name)
    if setting is None:
        raise SettingError(f"unknown setting {name!r}: only settings that take effect are accepted")
    try:
        return setting.parse(value)
    except SettingError as exc:
        raise SettingError(f"{name}: {exc}") from None


def encode(value: Any) -> str:
    return json.dumps(value)


def decode(text: str) -> Any:
    return json.loads(text)


def redacted(values: dict[str, Any]) -> dict[str, Any]:
    return {k: (MASK if SETTINGS[k].secret and v else v) for k, v in values.items() if k in SETTINGS}


SCORE_ITEMS: list[tuple[str, int, str]] = [
    ("domain_blacklist", 15, "enable the domain blacklist and add entries"),
    ("ip_blacklist", 15, "enable the IP blacklist and add entries"),
    ("waf", 20, "enable the WAF with at least one category"),
    ("ssl_bump", 15, "turn on ssl_bump_enabled (clients trust GET /api/security/download-ca) to inspect HTTPS"),
    ("block_direct_ip", 5, "block requests to bare IP addresses"),
    ("egress_default_deny", 10, "turn on egress default-deny with an allowlist"),
    ("restricted_clients", 10, "restrict allowed_networks (no 0.0.0.0/0)"),
    ("password_changed", 5, "change the generated admin password"),
    ("notifications", 5, "enable notifications with at least one target"),
]


def security_score(effective: dict[str, Any]) -> dict[str, Any]:
    """Points for each protection that is in effect (settings AND the state they act on; for ssl_bump, Squid
    running with bumping on and the CA the API serves)."""
    checks = {
        "domain_blacklist": effective["enable_domain_blacklist"] and effective["domain_blacklist_count"] > 0,
        "ip_blacklist": effective["enable_ip_blacklist"] and effective["ip_blacklist_count"] > 0,
        "waf": effective["enable_waf"] and effective["waf_enabled_categories"] > 0,
        "ssl_bump": effective["ssl_bump_enabled"] and effective["ssl_bump_in_effect"],
        "block_direct_ip": effective["block_direct_ip"],
        "egress_default_deny": effective["egress_default_deny"],
        "restricted_clients": not any(n in ("0.0.0.0/0", "::/0") for n in effective["allowed_networks"]),
        "password_changed": effective["password_changed"],
        "notifications": effective["enable_notifications"] and effective["notification_targets"] > 0,
    }
    score = sum(points for key, points, _ in SCORE_ITEMS if checks[key])
    return {
        "score": score,
        "max_score": sum(points for _, points, _ in SCORE_ITEMS),
        "checks": checks,
        "recommendations": [advice for key, _, advice in SCORE_ITEMS if not checks[key]],
    }
