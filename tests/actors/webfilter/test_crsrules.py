"""The WAF categories as CRS families, and what Squid is told when the engine is `crs` (pure rendering;
the behaviour through real Squid and nginx is tests/deployments/webfilter/test_waf_crs.py)."""

from __future__ import annotations

from pathlib import Path

from actors.webfilter import crsrules, squidconf, waf
from actors.webfilter.crstier import tier_config
from actors.webfilter.squidconf import Policy

EVERY = list(waf.CATEGORIES)


def test_every_category_has_a_family_of_scoring_rules():
    ids = crsrules.family_ids(EVERY)
    assert set(ids) == set(EVERY)
    assert all(ids[name] for name in EVERY)
    assert crsrules.category_of(942100) == "SQL_INJECTION" and crsrules.category_of(944110) == "LOG4SHELL"
    assert crsrules.category_of(100110, ("attack-sqli",)) == "SQL_INJECTION"  # the tier's own local rule
    assert crsrules.category_of(920350) is None  # protocol enforcement: no category, a `CRS` refusal
    # paranoia-level markers (`skipAfter`) score nothing and are not counted as family hits
    assert 942011 not in ids["SQL_INJECTION"] and 942100 in ids["SQL_INJECTION"]


def test_a_disabled_category_is_removed_and_the_others_count_and_block():
    rules = crsrules.extra_rules([c for c in EVERY if c != "XSS"])
    assert "SecRuleRemoveById 941000-941999" in rules and "SecRuleRemoveById 942000-942999" not in rules
    assert 'SecRuleUpdateActionById 942100 "setvar:tx.rf_sql_injection=+1"' in rules
    assert "tx.rf_xss" not in rules and "SecRuleRemoveById 949110" in rules
    blocking = [line for line in rules.splitlines() if "deny,status:" in line]
    statuses = {int(line.split("status:")[1].split(",")[0]) for line in blocking}
    assert statuses == {crsrules.STATUSES[c] for c in EVERY if c != "XSS"} | {crsrules.STATUSES["CRS"]}


def test_an_excluded_rule_is_not_updated():
    rules = crsrules.extra_rules(EVERY, exclusions=(942100,))
    assert "SecRuleUpdateActionById 942100 " not in rules and "SecRuleUpdateActionById 942110 " in rules


def test_blocks_from_the_audit_log_get_the_category_of_their_blocking_rule():
    sqli = str(crsrules.BLOCKING_IDS["SQL_INJECTION"])
    assert crsrules.category_of_block(("942100", sqli)) == "SQL_INJECTION"
    assert crsrules.category_of_block(("913100", str(crsrules.BLOCKING_IDS["CRS"]))) == "CRS"
    assert crsrules.blocking_rule(sqli) and not crsrules.blocking_rule("942100")


def test_squid_sends_plain_http_to_the_tier_never_direct_and_maps_its_statuses():
    policy = Policy(waf_engine="crs", waf_categories=["SQL_INJECTION"])
    conf = squidconf.squid_conf(
        policy, root=Path("/srv/wf"), port=3128, dns="127.53.0.1", cache_mem_mb=8, user=None, crs_port=4000
    )
    assert "cache_peer 127.0.0.1 parent 4000 0 no-query" in conf and "never_direct allow crs_inspected" in conf
    assert f"acl crs_refused_sql_injection http_status {crsrules.STATUSES['SQL_INJECTION']}" in conf
    assert "http_reply_access deny crs_refused_sql_injection crs_mark_sql_injection" in conf
    assert "request_header_access X-Rayfleet-Client deny all" in conf  # the client's own copy goes
    # the URL rules stay for what the tier never sees (bumped HTTPS)
    assert "http_access deny waf_sql_injection !crs_inspected mark_waf_sql_injection" in conf
    # no tier port (not started): inspected requests have no way out at all
    closed = squidconf.squid_conf(policy, root=Path("/srv/wf"), port=3128, dns="127.53.0.1", cache_mem_mb=8, user=None)
    assert "never_direct allow crs_inspected" in closed and "cache_peer" not in closed
    plain = squidconf.squid_conf(
        Policy(waf_categories=["SQL_INJECTION"]),
        root=Path("/srv/wf"),
        port=3128,
        dns="127.53.0.1",
        cache_mem_mb=8,
        user=None,
        crs_port=4000,
    )
    assert "cache_peer" not in plain and "never_direct" not in plain


def test_the_tier_forwards_through_our_resolver_with_the_policy_settings():
    policy = Policy(
        waf_engine="crs", waf_categories=EVERY, waf_paranoia_level=3, waf_anomaly_threshold=10, waf_exclusions=[942100]
    )
    crs, upstream = tier_config(policy, 4000, "127.53.0.1")
    assert (crs.paranoia_level, crs.anomaly_threshold, crs.exclusions) == (3, 10, (942100,))
    assert upstream.forward is not None and upstream.forward.resolver == "127.53.0.1" and upstream.port == 4000
    assert crs.body_limit_action == "partial" and "SecRuleRemoveById 949110" in crs.extra_rules
