"""The web filter's WAF categories as OWASP CRS rule families, for the CRS inspection tier (`rayfleet.crs`).

Each category is a family of CRS 3.3 rules (by id range) plus the local rules tagged like it:
SQL_INJECTION 942xxx, XSS 941xxx, PATH_TRAVERSAL 930xxx, COMMAND_INJECTION 932xxx, LOG4SHELL 944xxx and
a JNDI-lookup rule, SSRF 931xxx (remote URLs with an address) and a rule for metadata endpoints and
loopback or private URLs in parameters. A disabled category's family is removed (`SecRuleRemoveById`).

Which category refused a request: every scoring rule of an enabled family also counts a hit in
`tx.rf_<category>` (`SecRuleUpdateActionById`), and CRS's blocking evaluation (949110) is replaced by one
rule per category, each answering its own status: the category with the most hits (ties: `PRECEDENCE`
order), a status Squid's `http_reply_access` reads (`http_status`) and answers with the category's error
page. Refusals from no family (protocol, scanner, PHP, XXE rules...) are `CRS`. The local rules (Log4j lookups,
metadata endpoints, private URLs...) are the tier's own, shared with the mitigation node: `rayfleet.crs.local_rules`.
"""

from __future__ import annotations

from rayfleet.crs.config import LOCAL_RULES
from rayfleet.crs.widening import crs_rules, scoring_rules, widen

GENERIC = "CRS"  # a refusal by rules outside the six families
# the family of each category: CRS id ranges (inclusive) and the `attack-*` tags of local rules
FAMILIES: dict[str, tuple[tuple[tuple[int, int], ...], tuple[str, ...]]] = {
    "SQL_INJECTION": (((942000, 942999),), ("attack-sqli", "attack-injection-nosql", "attack-injection-ldap")),
    "XSS": (((941000, 941999),), ("attack-xss",)),
    "PATH_TRAVERSAL": (((930000, 930999),), ("attack-lfi",)),
    "COMMAND_INJECTION": (((932000, 932999),), ("attack-rce", "attack-injection-template")),
    "LOG4SHELL": (((944000, 944999),), ("attack-log4shell",)),
    "SSRF": (((931000, 931999),), ("attack-ssrf",)),
}
# when rules of several families fired, the refusal is credited to the first of them
PRECEDENCE = ("LOG4SHELL", "SSRF", "SQL_INJECTION", "XSS", "COMMAND_INJECTION", "PATH_TRAVERSAL")
BASE_STATUS = 470  # GENERIC; the categories of PRECEDENCE answer 471, 472, ...
STATUSES: dict[str, int] = {GENERIC: BASE_STATUS, **{c: BASE_STATUS + 1 + i for i, c in enumerate(PRECEDENCE)}}
BLOCKING_IDS: dict[str, int] = {GENERIC: 101999, **{c: 101900 + i for i, c in enumerate(PRECEDENCE)}}


def category_of(rule_id: int, tags: tuple[str, ...] = ()) -> str | None:
    """The category whose family holds this rule (by id range for CRS's rules, by tag for local ones)."""
    for name, (ranges, _) in FAMILIES.items():
        if any(low <= rule_id <= high for low, high in ranges):
            return name
    for name, (_, family_tags) in FAMILIES.items():
        if set(tags) & set(family_tags):
            return name
    return None


def family_ids(categories: list[str] | set[str]) -> dict[str, list[int]]:
    """Category -> the ids of its scoring rules (CRS's, the tier's local rules and ours)."""
    local = scoring_rules(LOCAL_RULES)
    out: dict[str, list[int]] = {c: [] for c in categories}
    for rule_id, tags in [*crs_rules(), *local]:
        name = category_of(rule_id, tags)
        if name in out:
            out[name].append(rule_id)
    return out


def extra_rules(enabled: list[str], exclusions: tuple[int, ...] = ()) -> str:
    """The directives the web filter adds after CRS (the tier's local rules, `rayfleet.crs.local_rules`,
    are already in): the disabled categories' families removed, the enabled ones counting their hits, and the per-category blocking rules."""
    on = [c for c in PRECEDENCE if c in enabled]
    off = [c for c in PRECEDENCE if c not in enabled]
    lines = ["SecRuleRemoveById 949110"]
    removed = family_ids(off)
    for name in off:
        ranges = " ".join(f"{low}-{high}" for low, high in FAMILIES[name][0])
        local = " ".join(str(i) for i in removed[name] if i < 900000)
        lines.append(f"SecRuleRemoveById {ranges} {local}".rstrip())
    skip = set(exclusions)
    for name, ids in family_ids(on).items():
        flag = "tx.rf_" + name.lower()
        lines += [f'SecRuleUpdateActionById {i} "setvar:{flag}=+1"' for i in ids if i not in skip]
        lines += widen(i for i in ids if i not in skip)  # CRS's rules also read the path
    flags = [f"tx.rf_{c.lower()}" for c in on]
    if flags:
        lines.append(
            'SecAction "id:101899,phase:2,pass,nolog,t:none,' + ",".join(f"setvar:{f}=+0" for f in flags) + '"'
        )
    for name in on:
        links = [f'    SecRule TX:RF_{name} "@gt 0" "t:none{",chain" if len(on) > 1 else ""}"']
        others = [o for o in on if o != name]
        for k, other in enumerate(others):
            more = ",chain" if k < len(others) - 1 else ""
            links.append(f'    SecRule TX:RF_{name} "@ge %{{tx.rf_{other.lower()}}}" "t:none{more}"')
        lines.append(
            'SecRule TX:ANOMALY_SCORE "@ge %{tx.inbound_anomaly_score_threshold}" '
            f'"id:{BLOCKING_IDS[name]},phase:2,deny,status:{STATUSES[name]},t:none,log,chain,'
            f"msg:'Inbound Anomaly Score Exceeded (Total Score: %{{TX.ANOMALY_SCORE}}), {name}'\"\n" + "\n".join(links)
        )
    lines.append(
        'SecRule TX:ANOMALY_SCORE "@ge %{tx.inbound_anomaly_score_threshold}" '
        f'"id:{BLOCKING_IDS[GENERIC]},phase:2,deny,status:{STATUSES[GENERIC]},t:none,log,'
        "msg:'Inbound Anomaly Score Exceeded (Total Score: %{TX.ANOMALY_SCORE})'\""
    )
    return "\n".join(lines) + "\n"


def category_of_block(rule_ids: tuple[str, ...]) -> str:
    """The category an audit-log block (`rayfleet.crs.audit.AuditBlock.rule_ids`) was refused under: the
    one its blocking rule names."""
    by_id = {str(rule_id): name for name, rule_id in BLOCKING_IDS.items()}
    return next((by_id[r] for r in rule_ids if r in by_id), GENERIC)


def blocking_rule(rule_id: str) -> bool:
    """One of the refusing rules above (not a rule that says why)."""
    return rule_id in {str(i) for i in BLOCKING_IDS.values()}
