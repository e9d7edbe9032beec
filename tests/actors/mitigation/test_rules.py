"""Custom WAF rules: validation, ids, and which map file each rule lives in."""

from __future__ import annotations

import pytest

from actors.mitigation.rules import RuleError, map_contents, new_rule
from actors.mitigation.waf_rules import SEVERITY_SCORES, active_builtin_rules, category_of, haproxy_key


def test_a_rule_gets_a_fresh_id_unless_one_is_given():
    first, second = new_rule("evil", "block", "high"), new_rule("evil", "block", "high")
    assert first.id != second.id and first.id.startswith("rule-")
    assert new_rule("evil", "block", "high", "fleet-7").id == "fleet-7"
    assert first.created_at.endswith("+00:00")


@pytest.mark.parametrize(
    "pattern,action,severity,problem",
    [
        ("x", "drop", "high", "action must be one of"),
        ("x", "block", "urgent", "severity must be one of"),
        ("(unclosed", "block", "high", "invalid regular expression"),
        (r"(a)\1", "block", "high", "back-references"),
        ("a\nb", "block", "high", "control characters"),
        ("", "block", "high", "1-1024"),
    ],
)
def test_unusable_rules_are_refused_with_the_reason(pattern, action, severity, problem):
    with pytest.raises(RuleError, match=problem):
        new_rule(pattern, action, severity)


def test_block_and_log_rules_have_their_own_maps_and_score_rules_the_map_of_their_severity():
    assert new_rule("a", "block", "low").map_kind == "block"
    assert new_rule("a", "log", "low").map_kind == "log"
    assert new_rule("a", "score", "medium").map_kind == "medium"


def test_custom_rules_come_before_the_builtin_rules_of_the_paranoia_level():
    custom = new_rule("evil thing", "score", "critical", "rule-x")
    maps = map_contents([custom], paranoia=1)
    assert set(maps) == {"block", "log", *SEVERITY_SCORES}
    assert maps["critical"][0] == (haproxy_key("evil thing"), "rule-x")
    assert r"\x20" in maps["critical"][0][0]  # one whitespace-free key per line
    builtin_ids = [rule_id for _, rule_id in maps["critical"][1:]]
    assert builtin_ids == [r.id for r in active_builtin_rules(1) if r.severity == "critical"]
    assert maps["block"] == [] and maps["log"] == []


def test_a_higher_paranoia_level_adds_rules():
    level1 = {r.id for r in active_builtin_rules(1)}
    level2 = {r.id for r in active_builtin_rules(2)}
    assert level1 < level2
    assert "crs-xss-tags-pl2" in level2 - level1
    assert category_of("crs-sqli-union") == "sql_injection"
    assert category_of("rule-x") is None
