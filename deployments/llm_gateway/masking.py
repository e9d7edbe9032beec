"""Masking, in one place: secrets out of the configuration shown by ``GET /admin/config``
(``masked_config``), and personal data out of the audit trail and the request export
(``scrub``: emails, card numbers, phone numbers and API keys in every string).

Masking runs in time linear in its input, whatever the input: every string is first cut to
``MAX_FIELD`` characters (``bounded``), and no pattern can backtrack over more than a
bounded stretch: the email pattern starts only where a run of address characters starts,
API keys are found per run of key characters (a run holds at most one key, from its first
key prefix to its end), and the card and phone patterns have bounded repetitions only.
Callers run it off the event loop (the audit and export writers' threads).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

MASK = "***"
_SECRET_NAMES = re.compile(r"(?:dsn|password|secret|token|api_key|credential|redis_url|url_with_auth)$")
_URL_AUTH = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<auth>[^@/\s]+)@", re.IGNORECASE)


MAX_FIELD = 1024  # characters of one string kept in an audit or export record

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_KEY_RUN = re.compile(r"[A-Za-z0-9_-]+")
_KEY_START = re.compile(r"\b(?:sk|pk|rk|key|api|token)[-_]")
_KEY_MIN = 8  # characters after the prefix
_PII = (
    (re.compile(r"\b(?:\d[ -]?){13,19}\b"), "[card]"),
    (re.compile(r"(?<!\w)\+?\d{1,3}?[ .-]?\(?\d{2,4}\)?[ .-]?\d{3,4}[ .-]?\d{3,4}(?!\w)"), "[phone]"),
)


def bounded(text: str, limit: int = MAX_FIELD) -> str:
    """``text`` cut to ``limit`` characters, saying how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\u2026[cut {len(text) - limit} chars]"


def _key_in_run(match: re.Match[str]) -> str:
    # a key runs from a prefix to the end of its run of key characters (less trailing dashes), so the
    # first prefix of the run decides: a later one leaves fewer characters
    run = match.group()
    end = len(run.rstrip("-"))
    start = _KEY_START.search(run, 0, end)
    if start is None or end - start.end() < _KEY_MIN:
        return run
    return f"{run[: start.start()]}[api-key]{run[end:]}"


def mask_pii(text: str) -> str:
    text = _EMAIL.sub("[email]", text)
    text = _KEY_RUN.sub(_key_in_run, text)
    for pattern, label in _PII:
        text = pattern.sub(label, text)
    return text


def _each_string(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: _each_string(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_each_string(v, fn) for v in value]
    return value


def bound_all(value: Any) -> Any:
    """``value`` with every string cut to ``MAX_FIELD`` characters, at any depth."""
    return _each_string(value, bounded)


def scrub(value: Any) -> Any:
    """``value`` with every string bounded, then personal data masked in it, at any depth (keys are left alone)."""
    return _each_string(value, lambda text: mask_pii(bounded(text)))


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
