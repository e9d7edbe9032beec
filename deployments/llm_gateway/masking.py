"""Secrets masked out of the configuration shown by ``GET /admin/config``."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

MASK = "***"
_SECRET_NAMES = re.compile(r"(?:dsn|password|secret|token|api_key|credential|redis_url|url_with_auth)$")
_URL_AUTH = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<auth>[^@/\s]+)@", re.IGNORECASE)


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
    return mask(config.model_dump(mode="json"))
