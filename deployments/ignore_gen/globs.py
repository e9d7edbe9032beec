"""Does one gitignore pattern already ignore everything another one does?

`diff_against` uses this so that `*.pyc` in an existing file is not reported as
"removed" when the generator emits `*.py[cod]`, nor `*.py[cod]` as "added" when the
file already has `*.pyc`, `*.pyo` and `*.pyd`.

The test is sound, not complete: when it says "covered", every path the pattern
matches is matched by the covering patterns under gitignore's rules; when it cannot
tell, it says "not covered" and the pattern is reported as added or removed as before.
How: the covered pattern's character classes are expanded into its concrete spellings
(at most `MAX_EXPANSIONS`); its `*`, `?` and `**` become marker characters that only a
`*`, `?` or `**` of the covering pattern can match, so a match proves coverage for every
string the wildcard stands for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import product

MAX_EXPANSIONS = 256
STAR, QMARK, GLOBSTAR = "\x00", "\x01", "\x02"  # markers: never in a real pattern
_MARKERS = STAR + QMARK + GLOBSTAR


@dataclass(frozen=True)
class Pattern:
    """A positive gitignore pattern taken apart: what to match, where and what kind of path."""

    text: str
    body: str  # without the leading `/` and the trailing `/`
    anchored: bool  # a `/` at the start or in the middle: relative to the file's folder
    dir_only: bool  # trailing `/`: directories only

    @property
    def last(self) -> str:
        """The last path segment of the body (what an unanchored pattern is compared with)."""
        return self.body.rsplit("/", 1)[-1]


def parse(text: str) -> Pattern | None:
    """The parts of a positive pattern; None for a negation (only compared verbatim)."""
    if text.startswith("!"):
        return None
    dir_only = text.endswith("/") and not text.endswith("\\/")
    body = text[:-1] if dir_only else text
    anchored = "/" in body.rstrip("/")
    if body.startswith("**/") and "/" not in body[3:]:
        body, anchored = body[3:], False  # `**/name` is `name` at any depth
    return Pattern(text, body.lstrip("/"), anchored, dir_only)


def _tokens(glob: str) -> list[list[str]]:
    """Each position of `glob` as its alternatives: literal chars, expanded classes, markers."""
    out: list[list[str]] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "\\" and i + 1 < len(glob):
            out.append([glob[i + 1]])
            i += 2
            continue
        if c == "*":
            if glob.startswith("**", i):
                out.append([GLOBSTAR])
                i += 2
            else:
                out.append([STAR])
                i += 1
            continue
        if c == "?":
            out.append([QMARK])
        elif c == "[" and (end := glob.find("]", i + 2)) != -1:
            out.append(_class(glob[i + 1 : end]))
            i = end + 1
            continue
        else:
            out.append([c])
        i += 1
    return out


def _class(inner: str) -> list[str]:
    """The characters of a `[...]` class; a negated class stands for one unknown character."""
    if inner.startswith(("!", "^")):
        return [QMARK]
    chars: list[str] = []
    i = 0
    while i < len(inner):
        if i + 2 < len(inner) and inner[i + 1] == "-":
            chars.extend(chr(c) for c in range(ord(inner[i]), ord(inner[i + 2]) + 1))
            i += 3
        else:
            chars.append(inner[i])
            i += 1
    return chars or [QMARK]


def expansions(glob: str) -> list[str] | None:
    """The concrete spellings of `glob` with markers for its wildcards; None when too many."""
    tokens = _tokens(glob)
    count = 1
    for options in tokens:
        count *= len(options)
        if count > MAX_EXPANSIONS:
            return None
    return ["".join(parts) for parts in product(*tokens)]


def matcher(glob: str) -> re.Pattern[str]:
    """`glob` as a regex over marked strings: only its own wildcards can match a marker."""
    parts: list[str] = []
    for options in _tokens(glob):
        if options == [GLOBSTAR]:
            parts.append(".*")
        elif options == [STAR]:
            parts.append(f"[^/{GLOBSTAR}]*")
        elif options == [QMARK]:
            parts.append(f"[^/{STAR}{GLOBSTAR}]")
        else:
            parts.append("[" + "".join(re.escape(c) for c in options if c not in _MARKERS) + "]")
    return re.compile("".join(parts), re.DOTALL)


class Coverage:
    """The patterns of one side, ready to say which of them cover a pattern of the other side."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.exact = set(patterns)
        self.parsed = [p for p in (parse(t) for t in sorted(self.exact)) if p is not None]
        self.regex = {p.text: matcher(p.body) for p in self.parsed}

    def _covers(self, cover: Pattern, target: Pattern, spelling: str) -> bool:
        if cover.dir_only and not target.dir_only:
            return False  # a file of that name would not be ignored
        if not cover.anchored:
            last = spelling.rsplit("/", 1)[-1]
            return self.regex[cover.text].fullmatch(last) is not None
        return target.anchored and self.regex[cover.text].fullmatch(spelling) is not None

    def covering(self, text: str) -> list[str]:
        """The patterns of this side that together cover `text` (empty when they do not)."""
        if text in self.exact:
            return [text]
        target = parse(text)
        spellings = expansions(target.body) if target else None
        if target is None or not spellings:
            return []
        used: set[str] = set()
        for spelling in spellings:
            cover = next((c for c in self.parsed if self._covers(c, target, spelling)), None)
            if cover is None:
                return []
            used.add(cover.text)
        return sorted(used)


def _regex(glob: str) -> str:
    """A gitignore glob (no leading/trailing `/`) as a regex over a slash-separated path."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and (end := glob.find("]", i + 2)) != -1:
            inner = glob[i + 1 : end]
            negate = inner[:1] in ("!", "^")
            body = inner[1:] if negate else inner
            out.append("[" + ("^/" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif glob[i] == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class _Compiled:
    text: str
    negated: bool
    dir_only: bool
    anchored: bool
    regex: re.Pattern[str]


def _compile(text: str) -> _Compiled:
    negated = text.startswith("!")
    body = text[1:] if negated else text
    dir_only = body.endswith("/")
    body = body.rstrip("/")
    anchored = "/" in body
    return _Compiled(text, negated, dir_only, anchored, re.compile(_regex(body.lstrip("/")), re.DOTALL))


class Matcher:
    """Which paths a list of gitignore patterns ignores, as git decides it (last match wins;
    nothing inside an ignored folder can be re-included).

    The positive patterns are also joined into one regex per kind (by name or by path, for
    files or folders), so a path no pattern matches is cleared in a couple of C-level
    regex calls; folder decisions are memoised."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.rules = [_compile(p) for p in patterns]
        self._folders: dict[str, _Compiled | None] = {}
        self._any: dict[tuple[bool, bool], re.Pattern[str] | None] = {}
        for anchored in (False, True):
            for is_dir in (False, True):
                parts = [
                    r.regex.pattern
                    for r in self.rules
                    if not r.negated and r.anchored == anchored and (is_dir or not r.dir_only)
                ]
                self._any[anchored, is_dir] = re.compile("|".join(parts), re.DOTALL) if parts else None

    def _maybe(self, path: str, name: str, is_dir: bool) -> bool:
        by_name, by_path = self._any[False, is_dir], self._any[True, is_dir]
        return (by_name is not None and by_name.fullmatch(name) is not None) or (
            by_path is not None and by_path.fullmatch(path) is not None
        )

    def _decide(self, path: str, is_dir: bool) -> _Compiled | None:
        name = path.rsplit("/", 1)[-1]
        if not self._maybe(path, name, is_dir):
            return None
        last = None
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if (rule.regex.fullmatch(path) if rule.anchored else rule.regex.fullmatch(name)) is not None:
                last = rule
        return last

    def _folder(self, prefix: str) -> _Compiled | None:
        if prefix not in self._folders:
            self._folders[prefix] = self._decide(prefix, True)
        return self._folders[prefix]

    def ignored_by(self, path: str) -> tuple[str, str] | None:
        """(what is ignored: the path or its first ignored folder + `/`, the pattern), or None."""
        parts = path.split("/")
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            rule = self._folder(prefix)
            if rule is not None and not rule.negated:
                return prefix + "/", rule.text
        rule = self._decide(path, False)
        return (path, rule.text) if rule is not None and not rule.negated else None


def escape(path: str) -> str:
    """A literal path as a gitignore pattern anchored at the root."""
    return "/" + re.sub(r"([*?\[\]\\!# ])", r"\\\1", path)
