"""ModSecurity's JSON audit log (Serial: one JSON object a line) → the requests the WAF refused."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# the anomaly evaluations: they say "blocked", the rules before them say why
EVALUATION_RULES = frozenset({"949110", "959100", "980130", "980140"})
_SCORE = re.compile(r"Total Score: (\d+)")


@dataclass(frozen=True)
class AuditBlock:
    """One refused request: who sent it, what it asked for, the answer and the rules that fired."""

    client_ip: str
    method: str
    uri: str
    status: int
    rule_ids: tuple[str, ...]
    score: int
    unique_id: str


def parse_audit_line(line: str | bytes) -> AuditBlock | None:
    """One audit-log line; None for anything that is not a refused transaction (status >= 400)."""
    try:
        record = json.loads(line)
        tx: dict[str, Any] = record["transaction"]
        status = int(tx.get("response", {}).get("http_code") or 0)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if status < 400:
        return None
    rule_ids: list[str] = []
    score = 0
    for message in tx.get("messages") or []:
        details = message.get("details") or {} if isinstance(message, dict) else {}
        rule_id = str(details.get("ruleId") or "")
        if rule_id in EVALUATION_RULES:
            found = _SCORE.search(str(message.get("message", "")))
            score = int(found.group(1)) if found else score
        elif rule_id and rule_id not in rule_ids:
            rule_ids.append(rule_id)
    request = tx.get("request") or {}
    return AuditBlock(
        client_ip=str(tx.get("client_ip", "")),
        method=str(request.get("method", "")),
        uri=str(request.get("uri", ""))[:512],
        status=status,
        rule_ids=tuple(rule_ids),
        score=score,
        unique_id=str(tx.get("unique_id", "")),
    )


class AuditTail:
    """Reads the lines appended to the audit log since the last call. The log is emptied once it
    has been read past `max_bytes` (ModSecurity appends, so it goes on writing at the new end);
    a log that shrank is read from its start again."""

    def __init__(self, path: Path, max_bytes: int = 8 << 20, chunk: int = 1 << 20) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.chunk = chunk
        self._offset = 0
        self._partial = b""

    def read(self) -> list[AuditBlock]:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return []
        if size < self._offset:
            self._offset, self._partial = 0, b""
        with open(self.path, "rb") as log:
            log.seek(self._offset)
            data = log.read(self.chunk)
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        if self._offset >= self.max_bytes and self._offset >= size and not self._partial:
            os.truncate(self.path, 0)
            self._offset = 0
        return [block for line in lines if line.strip() and (block := parse_audit_line(line)) is not None]
