"""Turn any user text into a safe FTS5 MATCH expression.

Rules (documented in README.md):
- words are split the way the `unicode61` tokenizer splits them (letters and
  digits; everything else, `_` included, separates);
- a bare chunk becomes a phrase whose last word is a prefix: `deploy` ->
  `"deploy"*`, `prod-3` -> `"prod 3"*`; all chunks must match (AND), in any order;
- `"quoted text"` is an exact phrase (no prefix);
- a chunk starting with `-` is excluded (`NOT`), when something else is searched;
- an upper-case `OR` between chunks makes alternatives;
- in each AND group, bare stop-words are dropped when another term remains, and
  a one-word term implied by another term (a repeat, or a prefix of another
  word) is dropped: both only make FTS5 walk long posting lists;
- when no memory matches every term, `relaxed_matches` gives the fallbacks:
  the AND of the terms found somewhere, then any one term (BM25 then favours
  memories matching more words);
- FTS5 syntax typed by the user (`AND`, `NEAR`, `col:`, `*`, `^`, parentheses)
  is only text: every word is emitted inside double quotes.
The result never makes FTS5 raise; text without any word gives `None`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_WORD = re.compile(r"[^\W_]+")
_TERM = re.compile(r'"((?:[^"]|"")*)"(\*?)')
_CHUNK = re.compile(r'"([^"]*)"?|(\S+)')
MAX_TERMS = 32


def words(text: str) -> list[str]:
    """Lower-cased word tokens, split like FTS5's unicode61 tokenizer."""
    return [w.lower() for w in _WORD.findall(text)]


def _phrase(tokens: list[str], prefix: bool) -> str:
    body = " ".join(t.replace('"', '""') for t in tokens)
    return f'"{body}"*' if prefix else f'"{body}"'


class _Term:
    """One positive or negative chunk of the query: its words, and how it was typed."""

    __slots__ = ("bare", "prefix", "tokens")

    def __init__(self, tokens: list[str], prefix: bool, bare: bool) -> None:
        self.tokens, self.prefix, self.bare = tokens, prefix, bare

    def expr(self) -> str:
        return _phrase(self.tokens, self.prefix)

    def is_stopword(self) -> bool:
        """A bare (unquoted) chunk that is one stop-word, e.g. `the`, `with`."""
        return self.bare and len(self.tokens) == 1 and self.tokens[0] in STOPWORDS

    def implies(self, other: _Term) -> bool:
        """Every memory matching self also matches `other` (a one-word term)."""
        if len(other.tokens) != 1:
            return False
        word = other.tokens[0]
        if other.prefix:
            return any(t.startswith(word) for t in self.tokens)
        exact = self.tokens if not self.prefix else self.tokens[:-1]
        return word in exact


def _simplify(group: list[_Term]) -> list[_Term]:
    """Drop the terms of an AND group that only cost time (README, "Ranking").

    1. Stop-words typed as bare words are dropped when the group has another
       term; a group made only of stop-words keeps them, and quoted phrases are
       never touched.
    2. A one-word term implied by another term of the group (a repeat, or a
       prefix of another word: `impo import` -> `import`) is dropped.
    """
    if any(not t.is_stopword() for t in group):
        group = [t for t in group if not t.is_stopword()]
    kept: list[_Term] = []
    for i, term in enumerate(group):
        implied = False
        for j, other in enumerate(group):
            if i == j or not other.implies(term):
                continue
            # Two terms implying each other (exact repeats): keep the first one.
            if not term.implies(other) or j < i:
                implied = True
                break
        if not implied:
            kept.append(term)
    return kept


def _parse(text: str) -> tuple[list[list[_Term]], list[_Term]]:
    """The query's OR groups of AND terms (simplified) and its excluded terms."""
    groups: list[list[_Term]] = [[]]
    negatives: list[_Term] = []
    count = 0
    for match in _CHUNK.finditer(text):
        if count >= MAX_TERMS:
            break
        quoted, bare = match.group(1), match.group(2)
        if quoted is not None:
            tokens = words(quoted)
            if tokens:
                groups[-1].append(_Term(tokens, prefix=False, bare=False))
                count += 1
            continue
        if bare == "OR":
            if groups[-1]:
                groups.append([])
            continue
        negate = bare.startswith("-") and len(bare) > 1
        tokens = words(bare[1:] if negate else bare)
        if not tokens:
            continue
        term = _Term(tokens, prefix=True, bare=True)
        (negatives if negate else groups[-1]).append(term)
        count += 1
    return [_simplify(g) for g in groups if g], negatives


def _compose(groups: list[list[_Term]], negatives: list[_Term]) -> str:
    parts = [g[0].expr() if len(g) == 1 else "(" + " AND ".join(t.expr() for t in g) + ")" for g in groups]
    expr = parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"
    if negatives:
        expr = f"{expr} NOT ({' OR '.join(t.expr() for t in negatives)})"
    return expr


def build_match(text: str) -> str | None:
    """The MATCH expression where every term of an AND group must match."""
    groups, negatives = _parse(text)
    return _compose(groups, negatives) if groups else None


def build_any_match(text: str) -> str | None:
    """Every positive term of every group as an alternative: any one term may match.

    BM25 then ranks first the memories that match the most (and the rarest)
    words. Stop-words are left out (they would match nearly every memory)
    unless nothing else is left; exclusions still apply. None when the query
    has no AND group of two or more terms (the result would be `build_match`'s).
    """
    loose = _loosened(text, None)
    return loose[0][0] if loose else None


def relaxed_matches(text: str, exists: Callable[[str], bool]) -> list[tuple[str, bool]]:
    """The MATCH expressions to try, in order, when no memory matches every term,
    each with True when any one of its terms may match (the OR form).

    1. For a query of one AND group: the AND of the terms that match some memory
       (`exists(term_expression)`), when some do not: a word found nowhere (a
       typo, a word from another vocabulary) no longer hides the memories that
       have all the others.
    2. Any one of those terms (`build_any_match` without the terms found nowhere).
    Empty when the query cannot be loosened or no term matches anything.
    """
    return _loosened(text, exists)


def _loosened(text: str, exists: Callable[[str], bool] | None) -> list[tuple[str, bool]]:
    groups, negatives = _parse(text)
    if not any(len(g) > 1 for g in groups):
        return []
    terms: list[_Term] = []
    seen: set[str] = set()
    for term in (t for g in groups for t in g):
        if term.expr() not in seen:
            seen.add(term.expr())
            terms.append(term)
    if any(not t.is_stopword() for t in terms):
        terms = [t for t in terms if not t.is_stopword()]
    if exists is None:
        return [(_compose([[t] for t in terms], negatives), True)]
    present = [t for t in terms if exists(t.expr())]
    if not present:
        return []
    out: list[tuple[str, bool]] = []
    if len(groups) == 1 and len(present) < len(terms):
        out.append((_compose([present], negatives), False))
    if len(present) > 1:
        out.append((_compose([[t] for t in present], negatives), True))
    return out


STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
        "il",
        "lo",
        "la",
        "gli",
        "le",
        "un",
        "una",
        "uno",
        "di",
        "da",
        "del",
        "della",
        "dei",
        "e",
        "è",
        "per",
        "con",
        "su",
        "che",
        "non",
    ]
)


def content_tokens(text: str) -> set[str]:
    """Distinct lower-cased words without stop-words: the unit of the Jaccard comparison."""
    return {w for w in words(text) if w not in STOPWORDS}


def snippet(value: str, match: str, width: int = 12) -> str:
    """About `width` words of `value` around the first word the query matches, matches in << >>.

    Computed here rather than with FTS5's snippet(): fetching snippets for a
    handful of rows by rowid costs a full query evaluation per row in FTS5.
    """
    exact: set[str] = set()
    prefixes: list[str] = []
    for body, star in _TERM.findall(match):
        parts = words(body.replace('""', '"'))
        if not parts:
            continue
        exact.update(parts[:-1])
        (prefixes.append(parts[-1]) if star else exact.add(parts[-1]))
    spans = [(m.start(), m.end(), m.group().lower()) for m in _WORD.finditer(value)]
    if not spans:
        return value[:160]
    hit = [w in exact or any(w.startswith(p) for p in prefixes) for _, _, w in spans]
    first = hit.index(True) if any(hit) else 0
    lo = max(0, min(first - width // 3, len(spans) - width))
    hi = min(len(spans), lo + width)
    out: list[str] = ["…" if lo > 0 else value[: spans[0][0]]]
    pos = spans[lo][0]
    for i in range(lo, hi):
        start, end, _ = spans[i]
        out.append(value[pos:start])
        out.append(f"<<{value[start:end]}>>" if hit[i] else value[start:end])
        pos = end
    out.append("…" if hi < len(spans) else value[pos:])
    return "".join(out).strip()
