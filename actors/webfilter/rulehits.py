"""Which domain rule decided a blocked host: the per-entry hit counts of the domain blacklist.

Squid's log names the rule class (`domain_blacklist`), not the entry. Given the rules in force, a host is
credited to the most specific listed name that covers it (the host itself, then each parent), else to
the first `*.name` or `/regex/` rule that matches it (the same patterns Squid's dstdom_regex runs), else to
nothing (a rule since removed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from actors.webfilter import hostregex
from actors.webfilter.entries import is_pattern

Decision = tuple[str, str]  # (rule, source)


class RuleIndex:
    def __init__(self, sources: Mapping[str, list[str]]) -> None:
        """`sources`: source name (`domain-blacklist`, `subscription:<id>`) -> its domain rules."""
        self.names: dict[str, Decision] = {}
        self.patterns: list[tuple[re.Pattern[str], Decision]] = []
        for source, rules in sources.items():
            for rule in rules:
                if not is_pattern(rule):
                    self.names.setdefault(rule, (rule, source))
                else:
                    body = hostregex.from_wildcard(rule) if rule.startswith("*.") else rule[1:-1]
                    self.patterns.append((re.compile(body, re.IGNORECASE), (rule, source)))

    def decide(self, host: str) -> Decision | None:
        labels = host.lower().strip(".").split(".")
        for i in range(len(labels) - 1):  # the host, then each parent of at least two labels
            found = self.names.get(".".join(labels[i:]))
            if found is not None:
                return found
        return next((decision for pattern, decision in self.patterns if pattern.search(host)), None)
