"""Built-in WAF rule sets and the scoring model (OWASP CRS style).

HAProxy matches these with `map_reg` against one normalised target per request:
path and query percent-decoded twice (`+` as space) and lowercased, then every
header value percent-decoded and lowercased. HAProxy has no HTML-entity decoder,
so the patterns themselves accept the entity spellings of `<`, `:` and `(`.

Each rule has a paranoia level (PL1 matches only what is clearly an attack; higher
levels add broader patterns with more false positives) and a severity. A request's
anomaly score is the sum of the severities of the matched severity classes; it is
blocked at `anomaly_threshold` (5 by default, as in CRS).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

SEVERITY_SCORES: dict[str, int] = {"critical": 5, "high": 4, "medium": 3, "low": 2}
_BACKREF = re.compile(r"\\[1-9]|\(\?P=|\\g<|\\k<")
CATEGORIES = ("sql_injection", "xss", "path_traversal", "command_injection")

_LT = r"(?:<|&lt;?|&#0*60;?|&#x0*3c;?|\\x3c|\\u003c)"
_COLON = r"(?::|&colon;|&#0*58;?|&#x0*3a;?)"
_PAREN = r"(?:\(|&lpar;|&#0*40;?|&#x0*28;?)"
_CMDS = (
    r"(?:cat|ls|id|whoami|uname|wget|curl|nc|ncat|netcat|bash|sh|zsh|python[23]?|perl|ruby|php|rm|chmod|"
    r"chown|ping|nslookup|dig|ifconfig|ps|kill|echo|sleep|telnet|powershell|cmd|net\s+user|type|dir|more|head|tail)"
)


@dataclass(frozen=True)
class BuiltinRule:
    id: str
    category: str
    pattern: str
    severity: str = "critical"
    paranoia: int = 1


BUILTIN_RULES: tuple[BuiltinRule, ...] = (
    # SQL injection
    BuiltinRule("crs-sqli-union", "sql_injection", r"union(?:\s|/\*.*?\*/|\()+(?:all\s+|distinct\s+)?select\b"),
    BuiltinRule(
        "crs-sqli-tautology",
        "sql_injection",
        r"['\"`)]\s*(?:or|and|xor|\|\||&&)\s*\(?\s*(?:\d+|'[^']*'|\"[^\"]*\"|true|false)\s*(?:=|<>|!=|<|>|like\b|is\b)",
    ),
    BuiltinRule("crs-sqli-bool-true", "sql_injection", r"['\"`]\s*(?:or|\|\|)\s*(?:true|not\s+false)\b"),
    BuiltinRule("crs-sqli-numeric-tautology", "sql_injection", r"\b(?:or|and)\s+\d+\s*(?:=|<>|!=|<|>)\s*\d+\b"),
    BuiltinRule("crs-sqli-comment", "sql_injection", r"['\"`]\s*\)*\s*(?:;\s*)?(?:--|#|/\*)"),
    BuiltinRule(
        "crs-sqli-stacked",
        "sql_injection",
        r";\s*(?:drop|insert|update|delete|create|alter|truncate|exec(?:ute)?|shutdown|declare|select)\s+[\w@*(]",
    ),
    BuiltinRule(
        "crs-sqli-functions",
        "sql_injection",
        r"\b(?:sleep|benchmark|pg_sleep|load_file|extractvalue|updatexml|dbms_pipe\.receive_message)\s*" + _PAREN,
    ),
    BuiltinRule(
        "crs-sqli-keywords",
        "sql_injection",
        r"(?:waitfor\s+delay|information_schema|xp_cmdshell|into\s+(?:out|dump)file|sys\.(?:tables|objects)"
        r"|sqlite_master|pg_catalog|@@version)",
    ),
    BuiltinRule("crs-sqli-select-from", "sql_injection", r"\bselect\b[^&]{1,100}?\bfrom\b", "critical", 2),
    BuiltinRule("crs-sqli-order-by", "sql_injection", r"\border\s+by\s+\d+", "critical", 2),
    BuiltinRule("crs-sqli-hex", "sql_injection", r"\b0x[0-9a-f]{8,}", "medium", 3),
    BuiltinRule(
        "crs-sqli-functions-pl2", "sql_injection", r"\b(?:char|concat|ascii|substring|version|user)\s*\(", "critical", 2
    ),
    # Cross-site scripting
    BuiltinRule("crs-xss-script", "xss", _LT + r"\s*/?\s*script\b"),
    BuiltinRule(
        "crs-xss-handler",
        "xss",
        r"(?:[\s\"'/;]|" + _LT + r"\w+)on(?:error|load|click|dblclick|mouse\w+|focus\w*|blur|submit|change|key\w+"
        r"|toggle|animation\w+|pointer\w+|begin|start|end|input|invalid|wheel|resize|scroll|unload|hashchange)\s*=",
    ),
    BuiltinRule("crs-xss-js-uri", "xss", r"(?:javascript|vbscript|livescript)\s*" + _COLON),
    BuiltinRule(
        "crs-xss-tags", "xss", _LT + r"\s*/?\s*(?:iframe|object|embed|svg|applet|meta|base|marquee|frameset|math)\b"
    ),
    BuiltinRule(
        "crs-xss-sinks",
        "xss",
        r"(?:document\s*\.\s*(?:cookie|write|location|domain)|window\s*\.\s*location|\beval\s*"
        + _PAREN
        + r"|\balert\s*"
        r"(?:"
        + _PAREN
        + r"|`)|\bprompt\s*"
        + _PAREN
        + r"|\bconfirm\s*"
        + _PAREN
        + r"|fromcharcode|data\s*"
        + _COLON
        + r"\s*text/html|\bsrcdoc\s*=)",
    ),
    BuiltinRule(
        "crs-xss-tags-pl2",
        "xss",
        _LT + r"\s*/?\s*(?:img|body|video|audio|details|style|link|form|input)\b",
        "critical",
        2,
    ),
    BuiltinRule("crs-xss-expression", "xss", r"expression\s*" + _PAREN, "critical", 2),
    # Path traversal and local file inclusion
    BuiltinRule("crs-lfi-dotdot", "path_traversal", r"\.\.(?:[/\\;]|%2f|%5c|%c0%af|\xc0\xaf|$)"),
    BuiltinRule(
        "crs-lfi-files",
        "path_traversal",
        r"(?:/etc/(?:passwd|shadow|group|hosts|issue|crontab)|/proc/self/|win\.ini|boot\.ini|\.htaccess|\.htpasswd"
        r"|/\.git/|/\.env\b|web\.config|\.ssh/id_\w+|/var/log/)",
    ),
    BuiltinRule("crs-lfi-schemes", "path_traversal", r"\b(?:file|php|zip|phar|expect|glob|jar)://"),
    BuiltinRule("crs-lfi-null", "path_traversal", r"%00|\\x00|\\0", "critical", 2),
    # Command injection
    BuiltinRule("crs-rce-chain", "command_injection", r"(?:;|\|\|?|&&|\$\(|`)\s*" + _CMDS + r"(?:[\s;|&<>`)/]|$)"),
    BuiltinRule("crs-rce-subshell", "command_injection", r"\$\{ifs\}|\$ifs\b|\$\((?:[^)]{1,80})\)|`[^`]{1,80}`"),
    BuiltinRule(
        "crs-rce-paths",
        "command_injection",
        r"(?:/bin/(?:ba|z|da)?sh\b|/usr/bin/\w+|\bcmd(?:\.exe)?\s*/c\b|powershell(?:\.exe)?\s+-\w"
        r"|\bnc(?:at)?\s+-[elvnp]+|(?:wget|curl)\s+(?:-\S+\s+)*(?:https?|ftp)://)",
    ),
    BuiltinRule("crs-rce-newline", "command_injection", r"[\r\n]\s*" + _CMDS + r"\s", "critical", 2),
)


def active_builtin_rules(paranoia: int) -> list[BuiltinRule]:
    return [r for r in BUILTIN_RULES if r.paranoia <= paranoia]


def category_of(rule_id: str) -> str | None:
    for rule in BUILTIN_RULES:
        if rule.id == rule_id:
            return rule.category
    return None


def validate_pattern(pattern: str) -> str:
    """Raise ValueError when `pattern` is not a usable regular expression."""
    if not pattern or len(pattern) > 1024:
        raise ValueError("pattern must be 1-1024 characters")
    if any(ord(c) < 32 and c not in "\t" for c in pattern):
        raise ValueError("pattern must not contain control characters; write them as \\n, \\x00, ...")
    if _BACKREF.search(pattern):
        raise ValueError("back-references are not supported (HAProxy compiles patterns without captures)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # POSIX classes are valid PCRE
            re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    return pattern


def haproxy_key(pattern: str) -> str:
    """A pattern as one whitespace-free map key, matched case-insensitively (the target is lowercased)."""
    escaped = pattern.replace(" ", r"\x20").replace("\t", r"\t")
    return "(?i)" + escaped
