"""Configuration loading: YAML validated by pydantic, with environment overrides.

An override is ``<PREFIX>__<section>__<key>=<value>``; the value is decoded as
JSON when it parses (numbers, booleans, lists) and used as a string otherwise.
Secrets never live in YAML for the demo configs; `masked` is what any place
that shows configuration must use.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, SecretBytes, SecretStr

M = TypeVar("M", bound=BaseModel)

MASK = "********"
_SECRET_WORDS = ("key", "secret", "token", "password", "passwd", "dsn", "credential")
# names that contain a secret word but hold no secret (they name where one lives)
_NOT_SECRET_SUFFIXES = ("_env", "_file", "_path", "_id")


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message says why and where."""


def read_yaml(path: str | Path | None) -> dict[str, Any]:
    """Parse a YAML mapping; a missing path gives an empty mapping."""
    if path is None:
        return {}
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"configuration file not found: {p}")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{p}: invalid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: top level must be a mapping")
    return data


def apply_env_overrides(data: dict[str, Any], prefix: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Overlay ``PREFIX__a__b=value`` variables onto a nested mapping (copy)."""
    env = os.environ if environ is None else environ
    result = json.loads(json.dumps(data, default=str)) if data else {}
    marker = prefix.upper() + "__"
    for name, raw in sorted(env.items()):
        if not name.upper().startswith(marker):
            continue
        path = [part.lower() for part in name[len(marker) :].split("__") if part]
        if not path:
            continue
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        node = result
        for part in path[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        node[path[-1]] = value
    return result


def load_yaml(
    path: str | Path | None, model: type[M], env_prefix: str | None = None, environ: Mapping[str, str] | None = None
) -> M:
    """Load `path` into `model`, applying env overrides when `env_prefix` is set."""
    from pydantic import ValidationError

    data = read_yaml(path)
    if env_prefix:
        data = apply_env_overrides(data, env_prefix, environ)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(top level)"
            lines.append(f"{where}: {err['msg']}")
        raise ConfigError(f"{path or 'configuration'}: " + "; ".join(lines)) from None


def is_secret_name(name: str) -> bool:
    lowered = name.lower()
    if lowered.endswith(_NOT_SECRET_SUFFIXES):
        return False
    return any(word in lowered for word in _SECRET_WORDS)


def masked(value: Any, _name: str = "") -> Any:
    """A JSON-able copy of `value` with every secret replaced by a mask."""
    if isinstance(value, BaseModel):
        return {k: masked(getattr(value, k), k) for k in type(value).model_fields}
    if isinstance(value, (SecretStr, SecretBytes)):
        return MASK if value.get_secret_value() else ""
    if isinstance(value, Mapping):
        return {str(k): masked(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [masked(v, _name) for v in value]
    if _name and is_secret_name(_name) and isinstance(value, (str, bytes)) and value:
        return MASK
    if isinstance(value, Path):
        return str(value)
    return value
