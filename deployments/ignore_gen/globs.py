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
from functools import lru_cache
from itertools import compress, count, product, repeat
from operator import itemgetter, not_

from deployments.ignore_gen import passes

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
    regex: re.Pattern[str]  # over the path (anchored) or the basename (not anchored)
    body: str  # the glob, without `!`, trailing `/` and leading `/`


@lru_cache(maxsize=4096)
def _compile(text: str) -> _Compiled:
    negated = text.startswith("!")
    body = text[1:] if negated else text
    dir_only = body.endswith("/")
    body = body.rstrip("/")
    anchored = "/" in body
    last = body[3:]
    if body.startswith("**/") and "/" not in last and "**" not in last and "[" not in last:
        body, anchored = last, False  # `**/name` is `name` at any depth: matched on the basename
    body = body.lstrip("/")
    return _Compiled(text, negated, dir_only, anchored, re.compile(_regex(body), re.DOTALL), body)


def precompile(patterns: Iterable[str]) -> None:
    """Compile patterns ahead of the first request (the engine does it for its tables at load)."""
    for pattern in patterns:
        _compile(pattern)


_LAST = itemgetter(2)  # of a `str.rpartition`
_Kind = tuple[bool, bool]  # (anchored: matched against the path, not the basename; for a folder)


def _literals(glob: str) -> list[str] | None:
    """The strings `glob` matches when it has no wildcard (classes expanded), else None."""
    if "*" in glob or "?" in glob or "\\" in glob:
        return None
    if "[" not in glob:
        return [glob]
    spelled = expansions(glob)
    return None if spelled is None or any(m in s for s in spelled for m in _MARKERS) else spelled


def _needle(glob: str) -> str:
    """The longest run of plain characters of `glob`: every string it matches holds it. From
    the first `[` to the last `]` everything may be a class, so none of it is taken."""
    if "[" in glob:
        start = glob.index("[")
        end = glob.rfind("]", start)
        glob = glob[:start] + ("*" + glob[end + 1 :] if end != -1 else "")
    return max(re.split(r"[*?]|\\.?", glob), key=len)


@dataclass(frozen=True)
class _Gate:
    """The positive file patterns of one kind taken apart into set and suffix tables, so that
    a column of basenames or paths is screened by C-level passes (`rows`); only the patterns
    that fit no table are left in one regex. A superset test: `_decide` gives the verdict."""

    exact: frozenset[str]
    extensions: frozenset[str]  # `*.ext`: probed with the part after the last dot
    suffixes: tuple[str, ...]  # `*literal`
    prefixes: tuple[str, ...]  # `literal*`, and a path pattern's first folder (`dist/`)
    needles: tuple[str, ...]  # a literal run every match of a remaining pattern holds (`*.sw?`: `.sw`)
    rest: re.Pattern[str] | None

    @classmethod
    def of(cls, rules: Iterable[_Compiled]) -> _Gate:
        exact: set[str] = set()
        extensions: set[str] = set()
        suffixes: set[str] = set()
        prefixes: set[str] = set()
        needles: set[str] = set()
        rest: list[str] = []
        for rule in rules:
            body = rule.body
            if (whole := _literals(body)) is not None:
                exact.update(whole)
            elif body.startswith("*") and (ends := _literals(body[1:])) is not None:
                for end in ends:
                    if end.startswith(".") and "." not in end[1:] and end != ".":
                        extensions.add(end[1:])
                    else:
                        suffixes.add(end)
            elif body.endswith("*") and (starts := _literals(body[:-1])) is not None and "/" not in body[:-1]:
                prefixes.update(starts)
            elif "/" in body and (firsts := _literals(body.partition("/")[0])) is not None:
                prefixes.update(first + "/" for first in firsts)  # a path pattern: its first folder
            elif needle := _needle(body):
                needles.add(needle)
            else:
                rest.append(rule.regex.pattern)
        regex = re.compile("|".join(rest), re.DOTALL) if rest else None
        shortest = {n for n in needles if not any(o != n and o in n for o in needles)}  # `.sw` screens `.swp`
        return cls(
            frozenset(exact),
            frozenset(extensions),
            tuple(sorted(suffixes)),
            tuple(sorted(prefixes)),
            tuple(sorted(shortest)),
            regex,
        )

    def hit(self, subject: str) -> bool:
        """Whether a pattern of this gate may match `subject`."""
        return (
            subject in self.exact
            or (bool(self.extensions) and subject.rpartition(".")[2] in self.extensions)
            or subject.endswith(self.suffixes)
            or subject.startswith(self.prefixes)
            or any(map(subject.__contains__, self.needles))
            or (self.rest is not None and self.rest.fullmatch(subject) is not None)
        )

    def rows(self, subjects: list[str]) -> set[int]:
        """The indexes of the subjects a pattern of this gate may match (the tables in one C
        loop when `passes` is compiled)."""
        out = set(passes.gate_rows(subjects, self.exact, self.extensions, self.suffixes, self.prefixes, self.needles))
        if self.rest is not None:
            out.update(compress(count(), map(self.rest.fullmatch, subjects)))
        return out


@dataclass(frozen=True)
class _Screen:
    """Every glob of one kind (negations included) filed by what each of its matches must
    have, so that a subject is checked only against the regexes of the globs it could match:
    an extension table (`*.pyc` under `pyc`), suffixes, prefixes (a path pattern's first
    folder), literal runs it must hold, and the few globs that fit none (always checked)."""

    tails: dict[str, tuple[int, ...]]
    ends: tuple[tuple[str, int], ...]
    starts: tuple[tuple[str, int], ...]
    needles: tuple[tuple[str, int], ...]
    always: tuple[int, ...]
    # The words of `ends`, `starts` and `needles` alone: one C-level test of a subject against
    # all of them before their globs are picked one by one (most subjects meet none).
    end_words: tuple[str, ...] = ()
    start_words: tuple[str, ...] = ()
    needle_words: tuple[str, ...] = ()

    @classmethod
    def of(cls, globs: Iterable[tuple[int, _Compiled]]) -> _Screen:
        tails: dict[str, list[int]] = {}
        ends: list[tuple[str, int]] = []
        starts: list[tuple[str, int]] = []
        needles: list[tuple[str, int]] = []
        always: list[int] = []
        for at, rule in globs:
            body = rule.body
            if body.startswith("*") and (spelled := _literals(body[1:])) is not None:
                for end in spelled:
                    if end.startswith(".") and "." not in end[1:] and end != ".":
                        tails.setdefault(end[1:], []).append(at)
                    else:
                        ends.append((end, at))
            elif body.endswith("*") and (spelled := _literals(body[:-1])) is not None and "/" not in body[:-1]:
                starts.extend((start, at) for start in spelled)
            elif "/" in body and (spelled := _literals(body.partition("/")[0])) is not None:
                starts.extend((first + "/", at) for first in spelled)
            elif needle := _needle(body):
                needles.append((needle, at))
            else:
                always.append(at)
        return cls(
            {t: tuple(i) for t, i in tails.items()},
            tuple(ends),
            tuple(starts),
            tuple(needles),
            tuple(always),
            tuple({end for end, _ in ends}),
            tuple({start for start, _ in starts}),
            tuple({needle for needle, _ in needles}),
        )

    def candidates(self, subject: str) -> list[int]:
        """The indexes of the globs that may match `subject`, in no particular order."""
        out = [*self.tails.get(subject.rpartition(".")[2], ()), *self.always]
        if subject.endswith(self.end_words):
            out.extend(at for end, at in self.ends if subject.endswith(end))
        if subject.startswith(self.start_words):
            out.extend(at for start, at in self.starts if subject.startswith(start))
        if any(map(subject.__contains__, self.needle_words)):
            out.extend(at for needle, at in self.needles if needle in subject)
        return out


@dataclass(frozen=True)
class _Tables:
    rules: tuple[_Compiled, ...]
    gates: dict[_Kind, _Gate]  # the kind's positive patterns
    screens: dict[_Kind, _Screen]  # the kind's globs
    literal: dict[_Kind, dict[str, int]]  # the kind's patterns without wildcards: spelling -> last index
    # The first folders (with `/`) of the path patterns that can match a folder, negations
    # included; None when one of them starts with a wildcard.
    path_firsts: tuple[str, ...] | None


def _firsts(rules: Iterable[_Compiled]) -> tuple[str, ...] | None:
    """The first folders (with a trailing `/`) a path of `rules` can start with; None: any."""
    out: set[str] = set()
    for rule in rules:
        spelled = _literals(rule.body.partition("/")[0])
        if spelled is None:
            return None
        out.update(first + "/" for first in spelled)
    return tuple(sorted(out))


@lru_cache(maxsize=64)
def _tables(patterns: tuple[str, ...]) -> _Tables:
    """The patterns compiled once per distinct pattern list (a request's rules are one of a few
    lists): per kind, by basename or by path, for files or for folders."""
    rules = tuple(_compile(p) for p in patterns)
    gates: dict[_Kind, _Gate] = {}
    screens: dict[_Kind, _Screen] = {}
    literal: dict[_Kind, dict[str, int]] = {}
    for anchored in (False, True):
        for is_dir in (False, True):
            kind = [(i, r) for i, r in enumerate(rules) if r.anchored == anchored and (is_dir or not r.dir_only)]
            gates[anchored, is_dir] = _Gate.of(r for _, r in kind if not r.negated)
            spelled = {i: _literals(r.body) for i, r in kind}
            literal[anchored, is_dir] = {word: i for i, r in kind for word in spelled[i] or ()}
            screens[anchored, is_dir] = _Screen.of((i, r) for i, r in kind if spelled[i] is None)
    return _Tables(rules, gates, screens, literal, _firsts(r for r in rules if r.anchored))


class Matcher:
    """Which paths a list of gitignore patterns ignores, as git decides it (last match wins;
    nothing inside an ignored folder can be re-included).

    The compiled tables are shared by every matcher of the same pattern list (`_tables`): a
    path no positive pattern may match is cleared by set and suffix probes (`_Gate`) before
    any pattern's regex runs; folder decisions are memoised per matcher. `candidates` narrows
    a list of paths down to the ones a pattern could ignore with C-level passes."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self._tables = _tables(tuple(patterns))
        self._folders: dict[str, _Compiled | None] = {}
        self._under: dict[str, bool] = {}
        self._first: dict[str, tuple[str, str] | None] = {}
        self._screened: dict[tuple[str, bool], bool] = {}

    def _search(self, anchored: bool, is_dir: bool, subject: str, best: int) -> int:
        """The index of the last pattern of one kind matching `subject`, if above `best`: a
        dict probe for the literal patterns, the regexes of the globs the screen lets through."""
        tables = self._tables
        best = max(best, tables.literal[anchored, is_dir].get(subject, -1))
        for at in sorted(tables.screens[anchored, is_dir].candidates(subject), reverse=True):
            if at < best:
                break
            if tables.rules[at].regex.fullmatch(subject) is not None:
                return at
        return best

    def _by_name(self, name: str, is_dir: bool) -> bool:
        """Whether a positive basename pattern may match `name` (once per distinct basename:
        folder and file names repeat across a tree)."""
        key = (name, is_dir)
        known = self._screened.get(key)
        if known is None:
            known = self._screened[key] = self._tables.gates[False, is_dir].hit(name)
        return known

    def _decide(self, path: str, is_dir: bool) -> _Compiled | None:
        name = path.rpartition("/")[2]
        if not (self._by_name(name, is_dir) or self._tables.gates[True, is_dir].hit(path)):
            return None
        best = self._search(True, is_dir, path, self._search(False, is_dir, name, -1))
        return self._tables.rules[best] if best >= 0 else None

    def _folder(self, prefix: str) -> _Compiled | None:
        if prefix not in self._folders:
            self._folders[prefix] = self._decide(prefix, True)
        return self._folders[prefix]

    def _ignored_folder(self, folder: str) -> bool:
        """Whether a positive pattern ignores `folder` or one of the folders above it."""
        known = self._under.get(folder)
        if known is None:
            parent = folder.rpartition("/")[0]
            rule = self._folder(folder)
            known = (rule is not None and not rule.negated) or (bool(parent) and self._ignored_folder(parent))
            self._under[folder] = known
        return known

    def _ignored_folders(self, folders: list[str]) -> set[str]:
        """The folders (each with a trailing `/`) that are ignored or lie in an ignored folder.

        A folder no path pattern can start like is decided by its segments alone: it is
        ignored when one of its segments is, and each distinct segment is decided once (a
        C-level screen, then the basename patterns' verdict for the few it lets through).
        The others are decided prefix by prefix (`_ignored_folder`, memoised)."""
        firsts = self._tables.path_firsts
        if firsts is None:
            return {folder for folder in folders if self._ignored_folder(folder[:-1])}
        by_path = list(map(str.startswith, folders, repeat(firsts)))
        out = {folder for folder in compress(folders, by_path) if self._ignored_folder(folder[:-1])}
        plain = list(compress(folders, map(not_, by_path)))
        segments = passes.segments(plain)
        screened = map(segments.__getitem__, self._tables.gates[False, True].rows(segments))
        ignored = {segment for segment in screened if self._ignores_name(segment)}
        if ignored:  # a few words: compared as byte spans, no str made per segment
            held = passes.holding_like(plain, frozenset(ignored), (), ()) if len(ignored) <= 64 else None
            out.update(map(plain.__getitem__, passes.holding(plain, ignored) if held is None else held))
        return out

    def _ignores_name(self, segment: str) -> bool:
        """Whether the last basename pattern matching the folder name `segment` is positive."""
        at = self._search(False, True, segment, -1)
        return at >= 0 and not self._tables.rules[at].negated

    def candidates(self, paths: list[str], split: tuple[list[str], list[str]] | None = None) -> list[str]:
        """The paths of `paths` (in their order) that `ignored_by` can answer for: those in an
        ignored folder (decided once per distinct folder) and those a file pattern matches.
        `split`: the paths' names and folders (`passes.columns(paths, False)`) when known."""
        names, folders = split if split is not None else passes.columns(paths, False)[:2]
        ignored = self._ignored_folders(list(filter(None, set(folders))))
        distinct = list(set(names))  # basename patterns are screened once per distinct name
        named = set(map(distinct.__getitem__, self._tables.gates[False, False].rows(distinct)))
        rows = set(passes.rows_in(folders, ignored))
        rows.update(passes.rows_in(names, named))
        rows.update(self._tables.gates[True, False].rows(paths))
        return [paths[at] for at in sorted(rows)]

    def ignored_by(self, path: str) -> tuple[str, str] | None:
        """(what is ignored: the path or its first ignored folder + `/`, the pattern), or None."""
        folder, slash, _ = path.rpartition("/")
        if slash and (hit := self._first_ignored(folder)) is not None:
            return hit
        rule = self._decide(path, False)
        return (path, rule.text) if rule is not None and not rule.negated else None

    def _first_ignored(self, folder: str) -> tuple[str, str] | None:
        """(the topmost of `folder` and the folders above it that a positive pattern ignores,
        + `/`, the pattern), or None: decided once per distinct folder, top down from the
        nearest one decided before (paths share their folders)."""
        first = self._first
        chain: list[str] = []
        at: str | None = folder
        while at is not None and at not in first:
            chain.append(at)
            parent, slash, _ = at.rpartition("/")
            at = parent if slash else None
        hit = first[at] if at is not None else None
        for prefix in reversed(chain):
            if hit is None and (rule := self._folder(prefix)) is not None and not rule.negated:
                hit = (prefix + "/", rule.text)
            first[prefix] = hit
        return hit


def escape(path: str) -> str:
    """A literal path as a gitignore pattern anchored at the root."""
    return "/" + re.sub(r"([*?\[\]\\!# ])", r"\\\1", path)
