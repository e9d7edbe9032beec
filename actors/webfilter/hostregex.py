"""The host patterns a domain list accepts (`/regex/` rules): a small subset of regular expressions that
means the same to Python's `re` (which checks it here) and to POSIX ERE (Squid's `dstdom_regex`, which
enforces it), and that cannot backtrack catastrophically.

Allowed: lower-case letters, digits, `.` (any character), `-`, `_`; the escapes `\\.` and `\\-`; anchors
`^` `$`; bracket classes of those characters (`[a-z0-9-]`, `[^.]`); groups `( )` and alternation `|`;
the quantifiers `*` `+` `?` and `{m}` `{m,}` `{m,n}` (counts up to 64). Refused, with the reason: class
shorthands and other escapes (`\\d` is a plain `d` in ERE: write `[0-9]`), `(?...)` groups, lazy or
stacked quantifiers, a quantified group that contains a quantifier (nested quantifiers, `(a+)+`) or an
alternation (`(a|ab)+`), the two shapes of catastrophic backtracking; a pattern over 255 characters;
a pattern that matches the empty name (it would match every name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LENGTH = 255
MAX_REPEAT = 64
_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789.-_^$*+?()[]{}|,\\")
_CLASS_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789.-_")
_REPEAT = re.compile(r"\{(\d{1,3})(,(\d{0,3}))?\}")


class PatternError(ValueError):
    """A host pattern outside the accepted subset (the message says why)."""


@dataclass
class _Group:
    quantified_inside: bool = False  # a quantifier somewhere inside the group
    alternation_inside: bool = False


def _bracket(body: str, start: int) -> int:
    """The index after the bracket class that starts at `start`."""
    end = body.find("]", start + 1)
    inner = body[start + 1 : end] if end > 0 else ""
    if end < 0 or not inner.lstrip("^"):
        raise PatternError("invalid regex: an unclosed or empty [ ] class")
    if not set(inner.lstrip("^")) <= _CLASS_CHARS:
        raise PatternError("invalid regex: a [ ] class may hold only letters, digits, `.`, `-` and `_`")
    return end + 1


def _quantifier(body: str, at: int) -> int:
    """The index after the quantifier at `at` (`*`, `+`, `?` or a bounded `{m,n}`)."""
    if body[at] != "{":
        return at + 1
    match = _REPEAT.match(body, at)
    if not match:
        raise PatternError("invalid regex: a `{` that is not a repeat count {m}, {m,} or {m,n}")
    counts = [int(n) for n in (match.group(1), match.group(3)) if n]
    if any(n > MAX_REPEAT for n in counts):
        raise PatternError(f"repeat count over {MAX_REPEAT}")
    if len(counts) == 2 and counts[0] > counts[1]:
        raise PatternError("invalid regex: a repeat count {m,n} with m > n")
    return match.end()


def _walk(body: str) -> None:
    """Check the structure: escapes, classes, groups and where quantifiers stand."""
    stack: list[_Group] = []
    previous: str | _Group | None = None  # "atom", "quantifier", a closed group, or None (nothing to repeat)
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            if body[i + 1 : i + 2] not in (".", "-"):
                raise PatternError("only the escapes \\. and \\- are allowed (write [0-9] for a digit)")
            previous, i = "atom", i + 2
        elif c == "[":
            previous, i = "atom", _bracket(body, i)
        elif c == "(":
            stack.append(_Group())
            previous, i = None, i + 1
        elif c == ")":
            if not stack:
                raise PatternError("invalid regex: an unbalanced )")
            group = stack.pop()
            if stack:
                stack[-1].quantified_inside |= group.quantified_inside
                stack[-1].alternation_inside |= group.alternation_inside
            previous, i = group, i + 1
        elif c == "|":
            if stack:
                stack[-1].alternation_inside = True
            previous, i = None, i + 1
        elif c in "*+?{":
            if previous is None or previous == "quantifier":
                raise PatternError("invalid regex: a quantifier with nothing to repeat, or after another one")
            if isinstance(previous, _Group) and previous.quantified_inside:
                raise PatternError("nested quantifiers: a quantified group may not contain a quantifier")
            if isinstance(previous, _Group) and previous.alternation_inside:
                raise PatternError("a quantified group may not contain an alternation")
            if stack:
                stack[-1].quantified_inside = True
            previous, i = "quantifier", _quantifier(body, i)
        elif c in "}],":
            raise PatternError(f"invalid regex: a stray {c!r}")
        else:
            previous, i = (None if c in "^$" else "atom"), i + 1
    if stack:
        raise PatternError("invalid regex: an unclosed (")


def check(pattern: str) -> str:
    """`pattern` (without its slashes) in canonical form (lower case); PatternError if it is refused."""
    body = pattern.lower()
    if not body:
        raise PatternError("the regex is empty")
    if len(body) > MAX_LENGTH:
        raise PatternError(f"regex longer than {MAX_LENGTH} characters")
    if "(?" in body:
        raise PatternError("(?...) groups are not supported")
    stray = sorted(set(body) - _CHARS)
    if stray:
        raise PatternError(f"character {stray[0]!r} not allowed in a regex rule")
    _walk(body)
    try:
        compiled = re.compile(body)
    except re.error as exc:
        raise PatternError(f"invalid regex: {exc}") from None
    if compiled.search(""):
        raise PatternError("the regex matches the empty name, so it would match every name")
    return body


def from_wildcard(rule: str) -> str:
    """The host pattern of a `*.name` rule: any subdomain of `name`, not `name` itself."""
    return "\\." + re.escape(rule[2:]).replace("\\-", "-") + "$"
