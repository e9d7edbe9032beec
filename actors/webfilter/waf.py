"""WAF categories: url_regex ACLs that Squid evaluates on every request URL.

Squid matches the URL as the client sent it (no percent-decoding), so each rule
covers the raw and the percent-encoded spelling of its characters.
"""

from __future__ import annotations

CATEGORIES: dict[str, list[str]] = {
    "SQL_INJECTION": [
        r"('|%27)[[:space:]+%20]*(or|and|%6f%72)[[:space:]+%20]*('|%27)?[0-9a-z]*('|%27)?[[:space:]+%20]*(=|%3d)",
        r"union([[:space:]+]|%20|/\*.*\*/)+(all([[:space:]+]|%20)+)?select",
        r"(;|%3b)[[:space:]+%20]*(drop|delete|truncate)([[:space:]+]|%20)+table",
        r"sleep(\(|%28)[0-9]+(\)|%29)",
    ],
    "XSS": [
        r"(<|%3c)[[:space:]]*script",
        r"javascript(:|%3a)",
        r"on(error|load|mouseover)[[:space:]+%20]*(=|%3d)",
    ],
    "PATH_TRAVERSAL": [
        r"(\.\.|%2e%2e)(/|%2f|\\|%5c)",
        r"/etc/(passwd|shadow)",
    ],
    "COMMAND_INJECTION": [
        r"(;|%3b|\||%7c)[[:space:]+%20]*(cat|wget|curl|nc|bash|sh)([[:space:]+]|%20)",
        r"(\$|%24)(\(|%28)[a-z]+",
    ],
    "LOG4SHELL": [
        r"(\$|%24)(\{|%7b)jndi(:|%3a)",
    ],
    "SSRF": [
        r"169\.254\.169\.254",
        r"metadata\.google\.internal",
    ],
}

DESCRIPTIONS: dict[str, str] = {
    "SQL_INJECTION": "SQL injection in the URL (tautologies, UNION SELECT, stacked DROP, time-based probes)",
    "XSS": "script injection in the URL",
    "PATH_TRAVERSAL": "directory traversal and system file reads",
    "COMMAND_INJECTION": "shell commands chained into parameters",
    "LOG4SHELL": "JNDI lookup strings (CVE-2021-44228)",
    "SSRF": "cloud metadata endpoints",
}


def acl_name(category: str) -> str:
    return "waf_" + category.lower()


def rule_name(category: str) -> str:
    """The `rule` note Squid logs when this category blocks a request."""
    return "waf:" + category
