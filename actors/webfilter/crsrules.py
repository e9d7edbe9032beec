"""The web filter's WAF categories as OWASP CRS rule families, for the CRS inspection tier (`rayfleet.crs`).

Each category is a family of CRS 3.3 rules (by id range) plus the local rules tagged like it:
SQL_INJECTION 942xxx, XSS 941xxx, PATH_TRAVERSAL 930xxx, COMMAND_INJECTION 932xxx, LOG4SHELL 944xxx and
a JNDI-lookup rule, SSRF 931xxx (remote URLs with an address) and a rule for metadata endpoints and
loopback or private URLs in parameters. A disabled category's family is removed (`SecRuleRemoveById`).

Which category refused a request: every scoring rule of an enabled family also counts a hit in
`tx.rf_<category>` (`SecRuleUpdateActionById`), and CRS's blocking evaluation (949110) is replaced by one
rule per category, each answering its own status: the category with the most hits (ties: `PRECEDENCE`
order), a statusSquid's `http_reply_access` reads (`http_status`) and answers with the category's error page. Refusals from no family (protocol, scanner, PHP, XXE rules...) are `CRS`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from rayfleet.crs.config import CRS_RULES, LOCAL_RULES

GENERIC = "CRS"  # a refusal by rules outside the six families
# the family of each category: CRS id ranges (inclusive) and the `attack-*` tags of local rules
FAMILIES: dict[str, tuple[tuple[tuple[int, int], ...], tuple[str, ...]]] = {
    "SQL_INJECTION": (((942000, 942999),), ("attack-sqli",)),
    "XSS": (((941000, 941999),), ("attack-xss",)),
    "PATH_TRAVERSAL": (((930000, 930999),), ("attack-lfi",)),
    "COMMAND_INJECTION": (((932000, 932999),), ("attack-rce",)),
    "LOG4SHELL": (((944000, 944999),), ("attack-log4shell",)),
    "SSRF": (((931000, 931999),), ("attack-ssrf",)),
}
# when rules of several families fired, the refusal is credited to the first of them
PRECEDENCE = ("LOG4SHELL", "SSRF", "SQL_INJECTION", "XSS", "COMMAND_INJECTION", "PATH_TRAVERSAL")
BASE_STATUS = 470  # GENERIC; the categories of PRECEDENCE answer 471, 472, ...
STATUSES: dict[str, int] = {GENERIC: BASE_STATUS, **{c: BASE_STATUS + 1 + i for i, c in enumerate(PRECEDENCE)}}
BLOCKING_IDS: dict[str, int] = {GENERIC: 101999, **{c: 101900 + i for i, c in enumerate(PRECEDENCE)}}


# They run after CRS's sum of the anomaly score (REQUEST-949), so they add to the sum as well.
# Attack classes CRS 3.3 leaves to other families or misses, in CRS's style (ids 1011xx).
# LOG4SHELL: a Log4j lookup: `${jndi:`, any of Log4j's lookup prefixes, or a lookup nested in a lookup
# (how the JNDI keyword is spelled around filters); CRS 3.3.4 has no rule for it.
# SSRF: a cloud metadata endpoint anywhere in the request, or a URL in a parameter or body that points
# at loopback, a private network or the link-local range.
@dataclass(frozen=True)
class LocalRule:
    """One of our rules, in CRS's style: critical at paranoia level 1, tagged with its family, and
    (running after CRS's sum of the score, REQUEST-949) adding to the sum as well. With `when`
    (variables, operator), the rule is chained behind that condition."""

    id: int
    targets: str
    operator: str
    transforms: tuple[str, ...]
    msg: str
    tag: str
    when: tuple[str, str] | None = None

    def render(self) -> str:
        tags = f"tag:'{self.tag}',tag:'paranoia-level/1',severity:'CRITICAL'"
        scores = SCORES
        decode = "".join(f"t:{t}," for t in self.transforms)
        if self.when is not None:
            return (
                f'SecRule {self.when[0]} "{self.when[1]}" \\\n    "id:{self.id},phase:2,block,t:none,\\\n'
                f"    msg:'{self.msg}',\\\n    {tags},chain\"\n"
                f'    SecRule {self.targets} "{self.operator}" \\\n        "t:none,{decode}\\\n'
                + scores.replace("\n    ", "\n        ").replace("    setvar", "        setvar", 1)
                + '"\n'
            )
        return (
            f'SecRule {self.targets} "{self.operator}" \\\n'
            f'    "id:{self.id},phase:2,block,capture,t:none,{decode}\\\n'
            f"    msg:'{self.msg}',logdata:'Matched Data: %{{TX.0}}',\\\n    {tags},\\\n{scores}\"\n"
        )


SCORES = (
    "    setvar:'tx.anomaly_score_pl1=+%{tx.critical_anomaly_score}',\\\n"
    "    setvar:'tx.anomaly_score=+%{tx.critical_anomaly_score}'"
)
LOCAL: tuple[LocalRule, ...] = (
    LocalRule(
        101100,
        "REQUEST_LINE|ARGS|ARGS_NAMES|REQUEST_COOKIES|REQUEST_HEADERS|XML:/*|REQUEST_BODY",
        r"@rx \$\{(?:[a-z0-9]{0,10}\$\{|(?:jndi|lower|upper|env|sys|java|date|base64|main|ctx|k8s|docker|web|spring|bundle|marker|log4j|event|sd|map)\s*:|::-)",
        ("urlDecodeUni", "urlDecodeUni", "lowercase"),
        "Log4j lookup (JNDI, nested or filtered lookup)",
        "attack-log4shell",
    ),
    LocalRule(
        101110,
        "REQUEST_LINE|ARGS|ARGS_NAMES|REQUEST_HEADERS|XML:/*|REQUEST_BODY",
        r"@rx (?:^|[^a-z0-9.-])(?:169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200|fd00:ec2::254)(?:[^a-z0-9.-]|$)",
        ("urlDecodeUni", "lowercase"),
        "Cloud metadata endpoint",
        "attack-ssrf",
    ),
    LocalRule(
        101111,
        "ARGS|XML:/*|REQUEST_BODY",
        r"@rx [a-z][a-z0-9+.-]{1,10}://(?:[^/@\s]*@)?\[?(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|0x7f[0-9a-f.x]*|2130706433|::1?|::ffff:127\.[\d.]+|10(?:\.\d{1,3}){3}|192\.168(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2}|169\.254(?:\.\d{1,3}){2})\]?(?:[:/?#]|$)",
        ("urlDecodeUni", "lowercase"),
        "URL to loopback, a private network or link-local in a parameter",
        "attack-ssrf",
    ),
    # Template injection (server-side): an expression in `{{ }}`, `#{ }`, `${{ }}` or `<% %>` delimiters,
    # counted as COMMAND_INJECTION (it runs code on the server).
    LocalRule(
        101120,
        "ARGS|ARGS_NAMES|REQUEST_COOKIES|REQUEST_HEADERS:Referer|REQUEST_FILENAME|XML:/*",
        r"@rx (?:\{\{[^}]{0,200}(?:[*+/()\[\]'\x22]|__|\.\w)[^}]{0,200}\}\}|[#$]\{\{?[^}]{0,200}[*+()'\x22][^}]{0,200}\}|<%=?[^%]{0,200}%>)",
        ("urlDecodeUni", "htmlEntityDecode"),
        "Server-side template expression",
        "attack-rce",
    ),
    # Query injection besides SQL, counted as SQL_INJECTION: MongoDB operators as keys or in JSON text, a
    # JavaScript tautology or early return closing a quoted string (NoSQL `$where`), LDAP filter syntax
    # (a filter closed and another opened, or `(&`, `(|`, `(!` combinators around `attr=value` groups), and
    # XPath axes and node tests.
    LocalRule(
        101130,
        "ARGS|ARGS_NAMES|REQUEST_COOKIES|REQUEST_HEADERS:Referer|REQUEST_FILENAME|XML:/*",
        r"@rx (?:[\[{\x22']\s*\$(?:n?in|ne|gte?|lte?|regex|where|exists|expr|elemmatch|or|and|nor|not)\b|'\s*(?:;\s*return\b|\|\|\s*'[^']*'\s*===?|&&\s*this\.)|\bthis\.\w+\.match\s*\(|\*\s*\)\s*\(|\)\s*\(\s*[|&!]|\(\s*[&|!]\s*\(\s*\w+\s*[=~<>]|\(\s*\w+\s*=\s*\*\s*\)|\*\(\)\|&|\bchild::|::node\(\)|\bcount\s*\(\s*/)",
        ("urlDecodeUni", "htmlEntityDecode", "lowercase"),
        "NoSQL, LDAP or XPath query injection",
        "attack-sqli",
    ),
    # Response splitting: a line break (also percent-encoded once more, or the UTF-8 spellings that
    # some servers fold into CR and LF) followed by a header name and a colon.
    LocalRule(
        101140,
        "ARGS|ARGS_NAMES|REQUEST_COOKIES|REQUEST_FILENAME|XML:/*",
        r"@rx (?:[\r\n]|%0[ad]|\xe5\x98[\x8a\x8d])+\s*[a-z][a-z0-9-]{1,40}\s*:",
        ("urlDecodeUni", "lowercase"),
        "HTTP header injection (response splitting)",
        "attack-protocol",
    ),
    # Cookies: CRS matches cookie values as sent, still percent-encoded; these run libinjection and a
    # command-chaining check on the decoded values (and on the path and Referer, for the chaining).
    LocalRule(
        101150,
        "REQUEST_COOKIES|REQUEST_COOKIES_NAMES",
        r"@detectSQLi",
        ("urlDecodeUni", "urlDecodeUni"),
        "SQL injection in a decoded cookie (libinjection)",
        "attack-sqli",
    ),
    LocalRule(
        101151,
        "REQUEST_COOKIES|REQUEST_COOKIES_NAMES",
        r"@detectXSS",
        ("urlDecodeUni", "urlDecodeUni", "htmlEntityDecode"),
        "XSS in a decoded cookie (libinjection)",
        "attack-xss",
    ),
    # Command chaining: a shell separator or substitution, then a command interpreters and attackers reach
    # for first (a path before it allowed).
    LocalRule(
        101160,
        "ARGS|REQUEST_COOKIES|REQUEST_HEADERS:Referer|REQUEST_FILENAME|XML:/*",
        r"@rx (?:[;&|`\n]|\$\(|\$\{ifs\})\s*(?:[\w./-]*/)?(?:wget|curl|nc|ncat|netcat|bash|sh|zsh|ksh|python[0-9.]*|perl|ruby|php|node|chmod|chown|cat|ls|id|whoami|uname|sleep|ping|nslookup|powershell|pwsh|cmd(?:\.exe)?|dir|type|rm|base64|telnet|socat)(?:\s|$|[;&|`'\x22)<>]|\$\{ifs\})",
        ("urlDecodeUni", "urlDecodeUni", "lowercase"),
        "Shell command chained into the request",
        "attack-rce",
    ),
    # SQL that libinjection lets through: a quote closed then a comment, a boolean operator, or a time
    # delay; tautologies between numbers; SQL Server's globals and procedures; hex-escaped quotes.
    LocalRule(
        101170,
        "ARGS|REQUEST_COOKIES|REQUEST_HEADERS:Referer|REQUEST_FILENAME|XML:/*",
        r"@rx (?:'\s*(?:--|#|/\*|;\s*(?:exec|select|drop|declare)\b|(?:or|and)\b\s*(?:select\b|\(|exists\b|$)|sleep\s*\(?\s*\d)|\b(?:or|and)\s+\d+\s*=\s*\d+|@@[a-z_]{3,}|\b(?:sp_password|xp_cmdshell)\b|(?:\\x[0-9a-f]{2}){2}|\\x27|\\x22)",
        ("urlDecodeUni", "urlDecodeUni", "htmlEntityDecode", "lowercase"),
        "SQL injection (quote then comment, operator or delay; tautology; server globals)",
        "attack-sqli",
    ),
    # Script in an XML body (the parser keeps text, not tags, for XML:/*), and a JavaScript string
    # breakout followed by a call.
    LocalRule(
        101180,
        "REQUEST_BODY",
        r"@rx <(?:script|iframe|frame|svg|img|image|object|embed|applet|base|details|isindex|input|body|style|math|video|audio|form|meta|link|marquee)\b|\bon[a-z]{3,20}\s*=|(?:java|vb)script\s*:",
        ("urlDecodeUni", "htmlEntityDecode", "lowercase"),
        "Script, HTML element or event handler in an XML body",
        "attack-xss",
        when=("REQBODY_PROCESSOR", "@streq XML"),
    ),
    LocalRule(
        101181,
        "ARGS|REQUEST_COOKIES|REQUEST_HEADERS:Referer|REQUEST_FILENAME|XML:/*",
        r"@rx [\x22']\s*[;)]\s*[a-z_$][\w$.]*\s*\([^)]{0,100}\)\s*;?\s*(?://|<!--|$)",
        ("urlDecodeUni", "htmlEntityDecode", "lowercase"),
        "JavaScript string breakout with a call",
        "attack-xss",
    ),
    # File access: stream wrappers, and well-known secret files named in a parameter.
    LocalRule(
        101190,
        "ARGS|REQUEST_COOKIES|REQUEST_HEADERS:Referer|REQUEST_FILENAME|XML:/*",
        r"@rx (?:\b(?:php|phar|zip|expect|glob|compress\.zlib|compress\.bzip2)://|(?:^|[/\\])\.(?:git|svn|hg|env|ssh|aws|htaccess|htpasswd|bash_history|npmrc|docker)(?:[/\\]|$)|\b(?:web\.config|wp-config\.php)\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b)",
        ("urlDecodeUni", "urlDecodeUni", "lowercase"),
        "Stream wrapper or secret file in the request",
        "attack-lfi",
    ),
)
OWN_RULES = "".join(rule.render() for rule in LOCAL)
# CRS 3.3 runs its injection rules on parameters, cookies and a few headers: the families' rules also
# inspect the path and the Referer (where an attack stands in a link or a REST path segment)
WIDENED_TARGETS = "REQUEST_FILENAME|REQUEST_HEADERS:Referer"

_RULE = re.compile(r"^Sec(?:Rule|Action)\b(.*?)(?=^Sec|\Z)", re.M | re.S)
_ID = re.compile(r"\bid:(\d+)")
_TAG = re.compile(r"tag:'([^']+)'")


def scoring_rules(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """The (id, tags) of every rule of `text` that adds to the anomaly score (the markers that skip
    paranoia levels, and the chained rules' continuations, have no score of their own)."""
    found = []
    for match in _RULE.finditer(text):
        body = match.group(1)
        rule_id = _ID.search(body)
        if rule_id is not None and "anomaly_score_pl" in body:
            found.append((int(rule_id.group(1)), tuple(_TAG.findall(body))))
    return found


@functools.cache
def crs_rules(folder: Path = CRS_RULES) -> tuple[tuple[int, tuple[str, ...]], ...]:
    return tuple(r for path in sorted(folder.glob("REQUEST-*.conf")) for r in scoring_rules(path.read_text()))


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
    local = scoring_rules(LOCAL_RULES) + scoring_rules(OWN_RULES)
    out: dict[str, list[int]] = {c: [] for c in categories}
    for rule_id, tags in [*crs_rules(), *local]:
        name = category_of(rule_id, tags)
        if name in out:
            out[name].append(rule_id)
    return out


def extra_rules(enabled: list[str], exclusions: tuple[int, ...] = ()) -> str:
    """The directives the web filter adds after CRS: our local rules, the disabled categories'
    families removed, the enabled ones counting their hits, and the per-category blocking rules."""
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
        lines += [f"SecRuleUpdateTargetById {i} {WIDENED_TARGETS}" for i in ids if i not in skip and i >= 900000]
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
    return OWN_RULES + "\n".join(lines) + "\n"


def category_of_block(rule_ids: tuple[str, ...]) -> str:
    """The category an audit-log block (`rayfleet.crs.audit.AuditBlock.rule_ids`) was refused under: the
    one its blocking rule names."""
    by_id = {str(rule_id): name for name, rule_id in BLOCKING_IDS.items()}
    return next((by_id[r] for r in rule_ids if r in by_id), GENERIC)


def blocking_rule(rule_id: str) -> bool:
    """One of the refusing rules above (not a rule that says why)."""
    return rule_id in {str(i) for i in BLOCKING_IDS.values()}
