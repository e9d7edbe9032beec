"""Settings the API accepts: only those that take effect, each with its type, default and effect."""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography import x509

from actors.webfilter import dotforward
from actors.webfilter.splice import SPLICE_CATEGORIES
from rayfleet.crs.config import PROSE_EXCLUSIONS

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


def _splice_categories(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingError(f"expected a list of category names ({', '.join(SPLICE_CATEGORIES)})")
    unknown = [v for v in value if v not in SPLICE_CATEGORIES]
    if unknown:
        raise SettingError(f"unknown category {unknown[0][:40]!r}: one of {', '.join(SPLICE_CATEGORIES)}")
    return list(dict.fromkeys(value))


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


def _address_list(value: Any, most: int, what: str) -> list[str]:
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split() if v]
    if not isinstance(value, list) or len(value) > most or not all(isinstance(v, str) for v in value):
        raise SettingError(f"expected a list of at most {most} {what}")
    for item in value:
        if _UNSAFE.search(item) or len(item) > 100:
            raise SettingError(f"not {what}: {item[:100]!r}")
    return value


def _host_and_port(item: str, default_port: int | None) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """`1.2.3.4:53`, `[2001:db8::1]:53`, or with a default port `1.2.3.4` / `2001:db8::1`."""
    host, port = item, default_port
    if item.startswith("["):
        host, _, rest = item[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None if rest else default_port
    elif item.count(":") == 1:
        host, _, text = item.partition(":")
        port = int(text) if text.isdigit() else None
    address = ipaddress.ip_address(host)  # ValueError for anything but an address
    if port is None or not 0 < port < 65536:
        raise ValueError(item)
    return address, port


def _proxy_listen(value: Any) -> list[str]:
    out = []
    for item in _address_list(value, 16, "ip:port listeners"):
        try:
            address, port = _host_and_port(item, None)
        except ValueError:
            raise SettingError(f"expected ip:port or [ipv6]:port, got {item[:100]!r}") from None
        out.append(f"[{address}]:{port}" if address.version == 6 else f"{address}:{port}")
    return list(dict.fromkeys(out))


def _dns_listen(value: Any) -> list[str]:
    try:
        return list(dict.fromkeys(str(ipaddress.ip_address(v)) for v in _address_list(value, 16, "addresses")))
    except ValueError as exc:
        raise SettingError(f"expected IP addresses (dnsmasq answers on port 53): {exc}") from None


def _dns_upstreams(value: Any) -> list[str]:
    """Resolvers dnsmasq forwards to: plain (`addr` or `addr#port`, its `server=` values) or DNS over TLS
    (`tls://addr[:port]#name`, through the local forwarder, `dotforward`); never both, since dnsmasq would
    send plain queries beside the encrypted ones."""
    out = []
    for item in _address_list(value, 8, "resolvers"):
        if dotforward.is_tls(item):
            try:
                out.append(str(dotforward.parse(item)))
            except ValueError as exc:
                raise SettingError(f"{item[:100]!r}: {exc}") from None
            continue
        try:
            address, port = _host_and_port(item, 53)
        except ValueError:
            raise SettingError(
                f"expected a resolver ip, ip:port, [ipv6]:port or tls://ip[:port]#name, got {item[:100]!r}"
            ) from None
        out.append(str(address) if port == 53 else f"{address}#{port}")
    if len({dotforward.is_tls(u) for u in out}) > 1:
        raise SettingError("plain and tls:// resolvers cannot be mixed (queries would leave in plain beside TLS)")
    return list(dict.fromkeys(out))


_CA_PATH = re.compile(r"/[A-Za-z0-9._+/-]{1,499}")  # unbound's parser splits on quotes and spaces, not lines
_CA_MAX = 4 * 1024 * 1024


def _ca_file(value: Any) -> str:
    """ "" (the system store) or an absolute path (letters, digits, `._+-/`) to a regular file holding at least one
    PEM certificate, read up to 4 MiB (a device or FIFO is never opened)."""
    if value == "":
        return ""
    if not isinstance(value, str) or not _CA_PATH.fullmatch(value):
        raise SettingError(
            'expected an absolute path to a PEM CA bundle (letters, digits, . _ + - /), or "" for the system store'
        )
    path = Path(value)
    try:
        if not path.is_file():
            raise SettingError(f"{value!r} is not a regular file")
        with path.open("rb") as fh:
            data = fh.read(_CA_MAX + 1)
    except OSError:
        raise SettingError(f"cannot read {value!r}") from None
    try:
        certificates = x509.load_pem_x509_certificates(data) if len(data) <= _CA_MAX else []
    except ValueError:
        certificates = []
    if not certificates:
        raise SettingError(f"{value!r} holds no PEM certificate (at most 4 MiB)")
    return value


def _waf_engine(value: Any) -> str:
    if value not in ("url_regex", "crs"):
        raise SettingError('expected "url_regex" (Squid URL rules) or "crs" (ModSecurity + OWASP CRS tier)')
    return str(value)


def _integer(low: int, high: int) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise SettingError(f"expected an integer from {low} to {high}")
        return value

    return parse


def _rule_ids(value: Any) -> list[int]:
    if (
        not isinstance(value, list)
        or len(value) > 500
        or not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 999_999 for v in value)
    ):
        raise SettingError("expected a list of at most 500 rule ids (integers from 1 to 999999)")
    return sorted(set(value))


def _block_mode(value: Any) -> str:
    if value not in ("sinkhole", "nxdomain"):
        raise SettingError('expected "sinkhole" (0.0.0.0 and ::) or "nxdomain"')
    return str(value)


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
            "waf_engine",
            "url_regex",
            _waf_engine,
            "url_regex: Squid's URL rules per category; crs: every plain-HTTP request (URL, headers, body) is "
            "inspected by ModSecurity + OWASP CRS in an nginx tier Squid uses as a parent, and refused while "
            "that tier is down",
        ),
        Setting("waf_paranoia_level", 2, _integer(1, 4), "CRS paranoia level (crs engine)"),
        Setting("waf_anomaly_threshold", 5, _integer(1, 1000), "CRS inbound anomaly score that refuses (crs engine)"),
        Setting("waf_exclusions", list(PROSE_EXCLUSIONS), _rule_ids, "CRS rule ids removed (crs engine)"),
        Setting(
            "ssl_bump_enabled",
            False,
            _bool,
            "Squid decrypts HTTPS with the interception CA (peek, then bump): every rule and the logs see full URLs",
        ),
        Setting(
            "tls_splice_categories",
            list(SPLICE_CATEGORIES),
            _splice_categories,
            "built-in categories of domains TLS interception passes through unbumped (banking, health, "
            "pinned_apps), besides the tls-splice list",
        ),
        Setting("allowed_networks", ["127.0.0.0/8", "::1/128"], _networks, "clients allowed to use the proxy"),
        Setting("blocked_sources", [], _networks, "clients refused whatever they ask for"),
        Setting(
            "proxy_listen",
            [],
            _proxy_listen,
            "ip:port addresses Squid listens on besides its loopback port (LAN clients; allowed_networks decides who)",
        ),
        Setting(
            "dns_listen",
            [],
            _dns_listen,
            "addresses our dnsmasq answers clients on (port 53), besides Squid's; 0.0.0.0 or :: for every address",
        ),
        Setting(
            "dns_block_mode",
            "sinkhole",
            _block_mode,
            "what our dnsmasq answers for a blacklisted name and its subdomains: 0.0.0.0 and :: (sinkhole), "
            "or NXDOMAIN",
        ),
        Setting(
            "dns_upstreams",
            [],
            _dns_upstreams,
            "resolvers dnsmasq forwards names it does not know to: plain DNS (ip, ip:port) or DNS over TLS "
            "(tls://ip[:port]#name, certificate and name verified, never plain); none: nothing leaves the machine",
        ),
        Setting(
            "dns_upstream_ca_file",
            "",
            _ca_file,
            "CA bundle (PEM file on the node) the tls:// resolvers' certificates are verified with; empty: the "
            "system store",
        ),
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
    "proxy_listen",
    "dns_listen",
    "dns_upstreams",
    "dns_upstream_ca_file",
    "dns_block_mode",
    "enable_domain_blacklist",
    "enable_ip_blacklist",
    "block_direct_ip",
    "egress_default_deny",
    "enable_waf",
    "waf_engine",
    "waf_paranoia_level",
    "waf_anomaly_threshold",
    "waf_exclusions",
    "allowed_networks",
    "blocked_sources",
    "ssl_bump_enabled",
    "tls_splice_categories",
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
        "items": [
            {"check": key, "points": points, "passed": checks[key], "needs": advice}
            for key, points, advice in SCORE_ITEMS
        ],
    }
