"""Compose files as `docker compose` inside a simulated container reads them."""

from __future__ import annotations

from typing import Any

import yaml


def parse_compose(text: str) -> dict[str, Any]:
    """The services of a compose file (raises ValueError on bad YAML)."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("services"), dict) or not doc["services"]:
        raise ValueError("services must be a mapping")
    services: dict[str, Any] = doc["services"]
    return services
