"""Structured logging: one JSON object per line, with secret values redacted."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from typing import Any

_REDACTIONS: set[str] = set()
_KEYLIKE = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")


def register_secret(value: str | None) -> None:
    """Make sure `value` never appears in any log line of this process."""
    if value and len(value) >= 4:
        _REDACTIONS.add(value)


def redact(text: str) -> str:
    for secret in sorted(_REDACTIONS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, "[REDACTED]")
    return _KEYLIKE.sub(r"\1[REDACTED]", text)


_RECORD_FIELDS = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


def extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The fields the call passed with ``extra={...}``."""
    return {k: v for k, v in vars(record).items() if k not in _RECORD_FIELDS and not k.startswith("_")}


class JsonFormatter(logging.Formatter):
    """Render a record as a JSON line; extra fields from ``extra={...}`` are kept."""

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            **extra_fields(record),
        }
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return redact(json.dumps(payload, default=str, ensure_ascii=False))


class TextFormatter(logging.Formatter):
    """``<time> <LEVEL> <logger>: <message> key=value ...`` (the ``extra`` fields kept), secrets redacted."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        extra = [f"{k}={v}" for k, v in extra_fields(record).items()]
        return redact(" ".join([super().format(record), *extra]))


def get_logger(component: str) -> logging.Logger:
    """The logger of a component, configured once with the JSON formatter on stderr."""
    logger = logging.getLogger(f"rayfleet.{component}")
    root = logging.getLogger("rayfleet")
    if not any(getattr(h, "_rayfleet", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        handler._rayfleet = True  # type: ignore[attr-defined]
        root.addHandler(handler)
        root.setLevel(os.environ.get("RAYFLEET_LOG_LEVEL", "INFO").upper())
        root.propagate = False
    return logger
