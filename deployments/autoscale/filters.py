"""Strict query-string filters of the read routes (`/api/v1/decisions`, `/api/v1/timelines`).

Every value is checked as text before any conversion: ASCII digits only (no
`101.0`, no other script's digits, no sign or exponent), bounded lengths so
`int()`/`float()` never meet a 5,000-digit string, each parameter at most once,
and no parameter the route does not know. Errors never echo the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from starlette.datastructures import QueryParams

from actors.autoscale.policy import ACTIONS

from .errors import validation_failed
from .schemas import normalise_id

SINCE_TEXT = re.compile(r"[0-9]{1,12}(\.[0-9]{1,6})?", re.ASCII)
LIMIT_TEXT = re.compile(r"[0-9]{1,4}", re.ASCII)
MAX_LIMIT = 1000
DEFAULT_LIMIT = 100


@dataclass(frozen=True)
class DecisionFilter:
    vmid: str | None = None
    action: str | None = None
    since: float | None = None
    limit: int = DEFAULT_LIMIT


def _single(params: QueryParams, allowed: tuple[str, ...], errors: list[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for key in dict.fromkeys(params.keys()):
        if key not in allowed:
            errors.append(f"unknown query parameter (allowed: {', '.join(allowed)})")
            continue
        given = params.getlist(key)
        if len(given) > 1:
            errors.append(f"{key}: given more than once")
            continue
        values[key] = given[0]
    return values


def _vmid(text: str | None, errors: list[str]) -> str | None:
    if text is None:
        return None
    try:
        return normalise_id(text)
    except ValueError as exc:
        errors.append(f"lxc_id: {exc}")
        return None


def decision_filter(params: QueryParams) -> DecisionFilter:
    """`lxc_id`, `action` (set, hold, flag, skip), `since` (Unix seconds), `limit` (1-1000, default 100)."""
    errors: list[str] = []
    given = _single(params, ("lxc_id", "action", "since", "limit"), errors)
    vmid = _vmid(given.get("lxc_id"), errors)
    action = given.get("action")
    if action is not None and action not in ACTIONS:
        errors.append(f"action: must be one of {', '.join(ACTIONS)}")
    since = None
    if "since" in given:
        if SINCE_TEXT.fullmatch(given["since"]):
            since = float(given["since"])
        else:
            errors.append("since: Unix time in seconds, ASCII digits with an optional fraction")
    limit = DEFAULT_LIMIT
    if "limit" in given:
        if LIMIT_TEXT.fullmatch(given["limit"]) and 1 <= int(given["limit"]) <= MAX_LIMIT:
            limit = int(given["limit"])
        else:
            errors.append(f"limit: an integer in 1-{MAX_LIMIT}")
    if errors:
        raise validation_failed(errors)
    return DecisionFilter(vmid, action, since, limit)


def timeline_filter(params: QueryParams) -> str | None:
    """`lxc_id` (optional): one container's timeline instead of every container's."""
    errors: list[str] = []
    given = _single(params, ("lxc_id",), errors)
    vmid = _vmid(given.get("lxc_id"), errors)
    if errors:
        raise validation_failed(errors)
    return vmid
