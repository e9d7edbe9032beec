"""``/api/v1/spend`` and ``/v1/spend``: the request records summed per key, team, model or endpoint.

Query parameters: ``group_by`` (``key``, ``team``, ``model``, ``endpoint``; default ``key``),
``from`` and ``to`` (ISO 8601, a naive time being UTC, or Unix seconds; ``from`` inclusive,
``to`` exclusive; both optional), and the filters ``key_id`` and ``team``. Only answered
requests (status below 400) count. Anything else is 400 ``invalid_parameter``, its message
starting with the parameter's name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from deployments.llm_gateway.errors import GatewayError

GROUPS = {"key": "key_id", "team": "team", "model": "model", "endpoint": "endpoint"}
FILTERS = ("key_id", "team")
PARAMS = frozenset({"group_by", "from", "to", *FILTERS})


def _bad(param: str, why: str) -> GatewayError:
    return GatewayError(400, f"{param}: {why}", code="invalid_parameter")


def parse_time(param: str, text: str) -> float:
    """ISO 8601 (``Z`` or an offset; naive means UTC) or Unix seconds."""
    try:
        value = float(text)
    except ValueError:
        try:
            parsed = datetime.fromisoformat(text.strip())
        except ValueError:
            raise _bad(param, "expected an ISO 8601 time or Unix seconds") from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.timestamp()
    if not math.isfinite(value) or value < 0 or value > 1e11:
        raise _bad(param, "Unix seconds out of range")
    return value


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class SpendQuery:
    group_by: str = "key"
    since: float | None = None
    until: float | None = None
    key_id: str | None = None
    team: str | None = None

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> SpendQuery:
        unknown = sorted(set(params) - PARAMS)
        if unknown:
            raise _bad(unknown[0], f"unknown parameter (expected one of {', '.join(sorted(PARAMS))})")
        group_by = params.get("group_by", "key")
        if group_by not in GROUPS:
            raise _bad("group_by", f"expected one of {', '.join(GROUPS)}")
        since = parse_time("from", params["from"]) if "from" in params else None
        until = parse_time("to", params["to"]) if "to" in params else None
        if since is not None and until is not None and since >= until:
            raise _bad("from", "must be before to")
        filters = {}
        for name in FILTERS:
            value = params.get(name)
            if value is not None and (not value or len(value) > 256):
                raise _bad(name, "expected a non-empty value of at most 256 characters")
            filters[name] = value
        return cls(group_by, since, until, **filters)

    def sql(self, mark: str) -> tuple[str, list[Any]]:
        """The aggregate, with ``mark`` as the driver's placeholder; the grouped column comes from ``GROUPS`` only."""
        column = GROUPS[self.group_by]
        where, args = ["status < 400"], []
        for clause, value in (
            ("ts >= ", self.since),
            ("ts < ", self.until),
            ("key_id = ", self.key_id),
            ("team = ", self.team),
        ):
            if value is not None:
                where.append(clause + mark)
                args.append(value)
        sql = (
            f"SELECT {column}, COUNT(*), COALESCE(SUM(prompt_tokens),0), COALESCE(SUM(completion_tokens),0),"
            f" COALESCE(SUM(cost_usd),0) FROM llm_requests WHERE {' AND '.join(where)}"
            f" GROUP BY {column} ORDER BY 5 DESC, 1"
        )
        return sql, args

    def answer(self, rows: list[tuple[Any, ...]]) -> dict[str, Any]:
        data = [
            {
                self.group_by: group,
                "requests": int(n),
                "prompt_tokens": int(prompt),
                "completion_tokens": int(completion),
                "total_tokens": int(prompt) + int(completion),
                "cost_usd": round(float(cost), 10),
            }
            for group, n, prompt, completion, cost in rows
        ]
        return {
            "group_by": self.group_by,
            "from": iso(self.since),
            "to": iso(self.until),
            "filters": {name: getattr(self, name) for name in FILTERS if getattr(self, name) is not None},
            "data": data,
            "total_cost_usd": round(sum(d["cost_usd"] for d in data), 10),
            "total_requests": sum(d["requests"] for d in data),
        }
