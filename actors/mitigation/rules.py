"""Custom WAF rules of a node: ids that never collide, and the map each rule lives in."""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from actors.mitigation.waf_rules import SEVERITY_SCORES, active_builtin_rules, haproxy_key, validate_pattern

ACTIONS = ("block", "log", "score")


class RuleError(ValueError):
    pass


@dataclass
class CustomRule:
    id: str
    pattern: str
    action: str
    severity: str
    hits: int = 0
    status: str = "active"
    created_at: str = ""
    source: str = ""  # api: the node's route; fleet: the fleet's rule ("": stored before rules said it)
    generation: int = 0  # the fleet's generation when it pushed the rule

    @property
    def map_kind(self) -> str:
        """block → waf_block.map, log → waf_log.map, score → the map of its severity."""
        return self.severity if self.action == "score" else self.action

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def new_rule(
    pattern: str, action: str, severity: str, rule_id: str | None = None, source: str = "api", generation: int = 0
) -> CustomRule:
    if action not in ACTIONS:
        raise RuleError(f"action must be one of {', '.join(ACTIONS)}")
    if severity not in SEVERITY_SCORES:
        raise RuleError(f"severity must be one of {', '.join(SEVERITY_SCORES)}")
    try:
        validate_pattern(pattern)
    except ValueError as exc:
        raise RuleError(str(exc)) from None
    return CustomRule(
        id=rule_id or f"rule-{secrets.token_hex(6)}",
        pattern=pattern,
        action=action,
        severity=severity,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        source=source,
        generation=generation,
    )


def map_contents(rules: list[CustomRule], paranoia: int) -> dict[str, list[tuple[str, str]]]:
    """(key, rule id) lines of every WAF map: custom rules first, then the built-in rules."""
    out: dict[str, list[tuple[str, str]]] = {kind: [] for kind in ("block", "log", *SEVERITY_SCORES)}
    for rule in rules:
        out[rule.map_kind].append((haproxy_key(rule.pattern), rule.id))
    for builtin in active_builtin_rules(paranoia):
        out[builtin.severity].append((haproxy_key(builtin.pattern), builtin.id))
    return out
