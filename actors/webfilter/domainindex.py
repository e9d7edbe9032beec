"""A domain list's plain names in the form Squid's `dstdomain` ACL needs, updated by difference.

The form: names lower-cased without a final dot, a name under another listed name dropped (Squid rejects
overlapping `dstdomain` entries, and the parent covers it), sorted by the reversed name. Computed from
scratch this took about 0.5 s of every edit of a 200 000-name list, though an edit adds or removes one
name. `DomainIndex` keeps the sorted forms and applies only the rules added and removed since the list it
answers for; `DomainMemo` answers for the last few lists a render asks about (the blacklist, the names
DNS blocks, the whitelists), deriving an unseen list's index from the one of the nearest size, which it
then replaces: one index a list, about 21 MB for 200 000 names (the names are the list's own strings).

Order: a name's key is the name reversed plus a final dot, so the keys of a name's subdomains are exactly
the keys that start with its own key, and they sort in one run right after it.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, insort
from collections.abc import Iterable, Sequence

from actors.webfilter.entries import is_pattern

# above this many added plus removed rules an index is rebuilt rather than updated (an insertion into a
# sorted list of 200 000 moves its tail: a few thousand of them cost what a rebuild costs)
MAX_CHANGES = 2000


def normal(rule: str) -> str:
    return rule.lower().strip(".")


def _key(name: str) -> str:
    return name[::-1] + "."


def _run(name: str) -> str:
    """The first key past the run of `name`'s key and its subdomains' keys ('/' follows '.')."""
    return name[::-1] + "/"


def _outermost(names: Iterable[str]) -> list[str]:
    """The names (sorted by key) of no listed parent: a name under the last kept one is dropped."""
    kept: list[str] = []
    for name in names:
        if kept and name.endswith("." + kept[-1]):
            continue
        kept.append(name)
    return kept


class DomainIndex:
    """The plain names of one list of rules (`*.name` and `/regex/` rules are kept aside, as rules).
    Immutable once built: `derive` makes a new index for another list. Only names are stored (the
    caller's strings where a rule is already normalised); keys are computed when searching."""

    def __init__(self, rules: Sequence[str]) -> None:
        self.rules = list(rules)
        self.rule_set = set(self.rules)
        self.counts: dict[str, int] = {}  # normalised name -> distinct rules that give it
        self.pattern_rules: set[str] = set()
        for rule in self.rule_set:
            if is_pattern(rule):
                self.pattern_rules.add(rule)
            elif name := normal(rule):
                name = rule if name == rule else name
                self.counts[name] = self.counts.get(name, 0) + 1
        self.names = sorted(self.counts, key=_key)
        self.kept_names = _outermost(self.names)

    def derive(self, rules: Sequence[str]) -> DomainIndex | None:
        """The index of `rules`, from this one; None when the two lists differ by more than MAX_CHANGES rules
        (building it from scratch is then cheaper)."""
        new = list(rules)
        new_set = set(new)
        added = new_set - self.rule_set
        # every old rule is still there when the sizes say so (an edit that only adds skips a second pass)
        removed = self.rule_set - new_set if len(new_set) - len(added) < len(self.rule_set) else set()
        if len(added) + len(removed) > MAX_CHANGES:
            return None
        index = DomainIndex.__new__(DomainIndex)
        index.rules, index.rule_set = new, new_set
        index.counts = dict(self.counts)
        index.pattern_rules = set(self.pattern_rules)
        index.names, index.kept_names = list(self.names), list(self.kept_names)
        for rule in removed:
            index._remove(rule)
        for rule in added:
            index._add(rule)
        return index

    def covers(self, name: str) -> bool:
        """`name` (normalised) or one of its parents is a listed name."""
        if name in self.counts:
            return True
        return any(name[i + 1 :] in self.counts for i, char in enumerate(name) if char == ".")

    def _add(self, rule: str) -> None:
        if is_pattern(rule):
            self.pattern_rules.add(rule)
            return
        name = normal(rule)
        if not name:
            return
        self.counts[name] = self.counts.get(name, 0) + 1
        if self.counts[name] > 1:
            return
        insort(self.names, name, key=_key)
        parent = name.partition(".")[2]
        if parent and self.covers(parent):
            return  # under a listed parent
        low = bisect_left(self.kept_names, _key(name), key=_key)
        high = bisect_left(self.kept_names, _run(name), key=_key)
        self.kept_names[low:high] = [name]  # its subdomains, kept until now, are covered by it

    def _remove(self, rule: str) -> None:
        if is_pattern(rule):
            self.pattern_rules.discard(rule)
            return
        name = normal(rule)
        if not name:
            return
        self.counts[name] -= 1
        if self.counts[name] > 0:
            return
        del self.counts[name]
        del self.names[bisect_left(self.names, _key(name), key=_key)]
        at = bisect_left(self.kept_names, _key(name), key=_key)
        if at == len(self.kept_names) or self.kept_names[at] != name:
            return  # it was under a listed parent, which still covers its subdomains
        # it was kept, so no parent of it is listed: its listed subdomains come out from under it
        low = bisect_left(self.names, _key(name), key=_key)
        self.kept_names[at : at + 1] = _outermost(self.names[low : bisect_left(self.names, _run(name), key=_key)])


class DomainMemo:
    """The indexes of recent lists, most recent first; thread-safe. A list's index derived from a known
    one replaces it (an edit supersedes the list it edited: one index a list, not one a version)."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._indexes: list[DomainIndex] = []
        self._lock = threading.Lock()

    def index(self, rules: Sequence[str]) -> DomainIndex:
        wanted = rules if isinstance(rules, list) else list(rules)
        with self._lock:
            for at, known in enumerate(self._indexes):
                if known.rules == wanted:
                    self._indexes.insert(0, self._indexes.pop(at))
                    return known
            base = min(self._indexes, key=lambda known: abs(len(known.rules) - len(wanted)), default=None)
            index = None
            if base is not None and abs(len(base.rules) - len(wanted)) <= MAX_CHANGES:
                index = base.derive(wanted)
                if index is not None:
                    self._indexes.remove(base)
            index = index or DomainIndex(wanted)
            self._indexes.insert(0, index)
            del self._indexes[self.size :]
            return index
