"""Parsing of Squid access-log lines written with `squidconf.LOG_FORMAT`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

COLUMNS = (
    "ts",
    "client",
    "method",
    "status",
    "squid_status",
    "bytes_in",
    "bytes_out",
    "elapsed_ms",
    "blocked",
    "rule",
    "url",
    "host",
    "agent",
)


@dataclass(frozen=True)
class Record:
    ts: float
    client: str
    method: str
    status: int
    squid_status: str
    bytes_in: int
    bytes_out: int
    elapsed_ms: int
    blocked: bool
    rule: str | None
    url: str
    host: str
    agent: str | None

    def message(self, mask_clients: bool = False) -> dict[str, Any]:
        """The WebSocket / API shape of a log row (`source: "http"`; DNS rows: `DnsRow.message`)."""
        return {
            "source": "http",
            "timestamp": iso_time(self.ts),
            "unix_timestamp": self.ts,
            "client_ip": mask_ip(self.client) if mask_clients else self.client,
            "method": self.method,
            "destination": self.url,
            "host": self.host,
            "status": self.status,
            "squid_status": self.squid_status,
            "bytes": self.bytes_out,
            "elapsed_ms": self.elapsed_ms,
            "blocked": self.blocked,
            "rule": self.rule,
        }


def iso_time(ts: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def mask_ip(ip: str) -> str:
    if ":" in ip:
        return ip.rsplit(":", 1)[0] + ":0"
    return ip.rsplit(".", 1)[0] + ".0" if "." in ip else ip


_HOST = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/@?#]*@)?(\[[^\]]*\]|[^:/?#]*)")


def host_of(method: str, url: str) -> str:
    if method == "CONNECT" or "://" not in url:
        return url.rsplit(":", 1)[0].strip("[]").lower()
    match = _HOST.match(url)
    return match.group(1).strip("[]").lower() if match else ""


def parse_line(line: str) -> Record | None:
    parts = line.rstrip("\n").split(" ", 10)
    if len(parts) < 10:
        return None
    try:
        ts = float(parts[0])
        status = int(parts[3])
        bytes_in, bytes_out, elapsed = int(parts[5]), int(parts[6]), int(parts[7])
    except ValueError:
        return None
    method, squid_status, rule, url = parts[2], parts[4], parts[8], parts[9]
    if method == "-":
        return None  # a connection that closed before sending a request (e.g. a port probe)
    agent = parts[10].strip().strip('"') if len(parts) > 10 else "-"
    return Record(
        ts=ts,
        client=parts[1],
        method=method,
        status=status,
        squid_status=squid_status,
        bytes_in=bytes_in,
        bytes_out=bytes_out,
        elapsed_ms=elapsed,
        blocked="DENIED" in squid_status,
        rule=None if rule == "-" else rule,
        url=url,
        host=host_of(method, url),
        agent=None if agent in ("-", "") else agent[:300],
    )
