"""Client groups in Squid: a source-network group (e.g. `kids: 198.18.5.0/24`) with its own domain
blacklist and whitelist, the blacklist optionally limited to time windows.

Per group `<name>`: `src` ACL of its networks, `dstdomain` / `dstdom_regex` ACLs of its lists, one `time`
ACL line per window (lines of one ACL name are OR-ed). Its rules come before the global whitelists and
blacklists (a group's block is stricter than the global policy, and wins over the global whitelist), and
inside the group its whitelist wins over its blacklist, as the global lists do. A refusal is tagged
`group:<name>` in the log and answered by a policy page naming the group. Squid evaluates `time` in its
own (the node's) local time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

SQUID_DAYS = {"sun": "S", "mon": "M", "tue": "T", "wed": "W", "thu": "H", "fri": "F", "sat": "A"}


class Window(TypedDict):
    days: list[str]  # mon..sun
    start: str  # HH:MM, before end
    end: str


class GroupPolicy(TypedDict):
    name: str  # [a-z][a-z0-9_-]{0,31}
    networks: list[str]
    blacklist: list[str]  # domain rules (names, `*.name`, `/regex/`), validated like the global lists
    whitelist: list[str]
    windows: list[Window]  # empty: the block applies at all times


def rule_name(group: str) -> str:
    return f"group:{group}"


def reason(group: str) -> str:
    return f"the domain is blocked for the client group {group}, which your address belongs to"


def acl_entries(group: GroupPolicy) -> dict[str, list[str]]:
    """File stem -> entries of one group: `src` (its networks), `black`, `white` (domain rules)."""
    name = group["name"]
    return {
        f"group_{name}_src": group["networks"],
        f"group_{name}_black": group["blacklist"],
        f"group_{name}_white": group["whitelist"],
    }


def time_lines(group: GroupPolicy) -> list[str]:
    """`acl group_<name>_time time <days> HH:MM-HH:MM`, one line per window."""
    return [
        f"acl group_{group['name']}_time time {''.join(SQUID_DAYS[d] for d in w['days'])} {w['start']}-{w['end']}"
        for w in group["windows"]
    ]


def access_lines(
    groups: list[GroupPolicy],
    lines: list[str],
    src_acl: Callable[[str, str, str, list[str]], bool],
    domain_acl: Callable[[str, list[str]], str | None],
    deny: Callable[[list[str], str, str], None],
) -> None:
    """Append every group's ACLs and http_access lines to `lines`: `src_acl(name, kind, file, entries)`
    defines an ACL from a file, `domain_acl(stem, rules)` the names and patterns ACLs of a domain list
    and returns the ACL that matches either (None for an empty list), `deny` a tagged deny."""
    for group in groups:
        name = group["name"]
        src = f"group_{name}_src"
        if not src_acl(src, "src", f"{src}.txt", group["networks"]):
            continue
        white = domain_acl(f"group_{name}_white", group["whitelist"])
        if white:
            lines.append(f"http_access allow {src} {white}")
        black = domain_acl(f"group_{name}_black", group["blacklist"])
        if not black:
            continue
        when = ""
        if group["windows"]:
            lines.extend(time_lines(group))
            when = f" group_{name}_time"
        deny(lines, f"{src} {black}{when}", rule_name(name))
