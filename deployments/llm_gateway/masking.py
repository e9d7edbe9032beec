"""Masking, in one place: secrets out of the configuration shown by ``GET /admin/config``
(``masked_config``), and personal data out of the audit trail and the request export
(``scrub``: emails, card numbers, phone numbers and API keys in every string)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

MASK = "***"
_SECRET_NAMES = re.compile(r"(?:dsn|password|secret|token|api_key|credential|redis_url|url_with_auth)$")
_URL_AUTH = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<auth>[^@/\s]+)@", re.IGNORECASE)


_PII = (
    (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "[email]"),
    (re.compile(r"\b(?:sk|pk|rk|key|api|token)[-_][A-Za-z0-9_-]{8,}\b"), "[api-key]"),
    (re.compile(r"\b(?:\d[ -]?){13,19}\b"), "[card]"),
    (re.compile(r"(?<!\w)\+?\d{1,3}?[ .-]?\(?\d{2,4}\)?[ .-]?\d{3,4}[ .-]?\d{3,4}(?!\w)"), "[phone]"),
)


def mask_pii(text: str) -> str:
    for pattern, label in _PII:
        text = pattern.sub(label, text)
    return text


def scrub(value: Any) -> Any:
    """``value`` with personal data masked in every string, at any depth (keys are left alone)."""
    if isinstance(value, str):
        return mask_pii(value)
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def _mask_value(name: str, value: Any) -> Any:
    if isinstance(value, str) and value and _SECRET_NAMES.search(name) and not name.endswith("_env"):
        return MASK
    if isinstance(value, str):
        return _URL_AUTH.sub(lambda m: f"{m.group('scheme')}{MASK}@", value)
    return value


def mask(data: Any, name: str = "") -> Any:
    if isinstance(data, dict):
        return {k: mask(v, str(k)) for k, v in data.items()}
    if isinstance(data, list):
        return [mask(v, name) for v in data]
    return _mask_value(name, data)


def masked_config(config: BaseModel) -> dict[str, Any]:
    masked: dict[str, Any] = mask(config.model_dump(mode="json"))
    return masked
