"""Parse what HAProxy's runtime API answers: `show info`, `show stat` (CSV), `show table`, log lines."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from actors.mitigation.haproxy_config import LOG_FIELDS, WAF_MAPS

_TABLE_ENTRY = re.compile(r"key=(\S+)")
_TABLE_FIELD = re.compile(r"(\w+(?:\(\d+\))?)=(\S+)")


def parse_info(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep:
            out[name.strip()] = value.strip()
    return out


def parse_stat(text: str) -> dict[tuple[str, str], dict[str, str]]:
    """`show stat` CSV → {(proxy, svname): row}."""
    body = text.lstrip("# ").strip()
    if not body:
        return {}
    rows = csv.DictReader(io.StringIO(body))
    return {(r["pxname"], r["svname"]): r for r in rows if r.get("pxname")}


@dataclass
class TableEntry:
    key: str
    fields: dict[str, int]

    def get(self, prefix: str) -> int:
        for name, value in self.fields.items():
            if name == prefix or name.startswith(prefix + "("):
                return value
        return 0


def parse_table(text: str) -> list[TableEntry]:
    """`show table <name>` lines → entries with integer fields (`http_req_rate(1000)=12` → 12)."""
    entries = []
    for line in text.splitlines():
        match = _TABLE_ENTRY.search(line)
        if not match:
            continue
        fields: dict[str, int] = {}
        for name, value in _TABLE_FIELD.findall(line[match.end() :]):
            try:
                fields[name] = int(value)
            except ValueError:
                continue
        entries.append(TableEntry(match.group(1), fields))
    return entries


@dataclass(frozen=True)
class LogRecord:
    """One request HAProxy logged: who, what happened, which WAF rules matched."""

    src: str
    status: int
    reason: str | None
    rules: dict[str, str]  # map kind (block, log, critical, ...) → rule id
    score: int
    time_ms: int
    term: str


def parse_log_line(datagram: bytes) -> LogRecord | None:
    """An RFC 3164 syslog datagram whose message is our `|`-separated log-format; None if it is not ours."""
    text = datagram.decode(errors="replace")
    _, sep, message = text.partition("]: ")
    if not sep:
        return None
    parts = message.strip().split("|")
    if len(parts) != len(LOG_FIELDS):
        return None
    values = dict(zip(LOG_FIELDS, parts, strict=True))

    def number(name: str) -> int:
        try:
            return int(values[name])
        except ValueError:
            return 0

    rules = {kind: values[kind] for kind in WAF_MAPS if values[kind] not in ("-", "")}
    reason = values["reason"] if values["reason"] not in ("-", "") else None
    return LogRecord(values["src"], number("status"), reason, rules, number("score"), number("time_ms"), values["term"])
