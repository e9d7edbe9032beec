"""A domain list's plain names in the form Squid's `dstdomain` ACL needs, updated by difference.

The form: names lower-cased without a final dot, a name under another listed name dropped (Squid rejects
overlapping `dstdomain` entries, and the parent covers it), sorted by the reversed name. Computed from
scratch this took about 0.5 s of every edit of a 200 000-name list, though an edit adds or removes one
name. `DomainIndex` keeps the sorted forms and applies only the rules added and removed since the list it
answers for; `DomainMemo` answers for the last few lists a render asks about (the blacklist, the names
DNS blocks, the whitelists), deriving an unseen list's index from the one of the nearest size.

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


def _name(key: str) -> str:
    return key[-2::-1]


def _run(key: str) -> str:
    """The first key past the run of `key` and its subdomains' keys ('/' follows '.')."""
    return key[:-1] + "/"


def _outermost(keys: Iterable[str]) -> list[str]:
    """The keys (sorted) of no listed parent: a key is dropped when it starts with the last kept one."""
    kept: list[str] = []
    for key in keys:
        if kept and key.startswith(kept[-1]):
            continue
        kept.append(key)
    return kept


class DomainIndex:
    """The plain names of one list of rules (`*.name` and `/regex/` rules are kept aside, as rules).
    Immutable once built: `derive` makes a new index for another list."""

    def __init__(self, rules: Sequence[str]) -> None:
        self.rules = list(rules)
        self.rule_set = set(self.rules)
        self.counts: dict[str, int] = {}  # normalised name -> distinct rules that give it
        self.pattern_rules: set[str] = set()
        for rule in self.rule_set:
            if is_pattern(rule):
                self.pattern_rules.add(rule)
            elif name := normal(rule):
                self.counts[name] = self.counts.get(name, 0) + 1
        self.keys = sorted(_key(name) for name in self.counts)
        self.kept_keys = _outermost(self.keys)
        self.kept_names = [_name(key) for key in self.kept_keys]

    def derive(self, rules: Sequence[str]) -> DomainIndex:
        """The index of `rules`, from this one when the two lists differ by at most MAX_CHANGES rules."""
        new = list(rules)
        new_set = set(new)
        added = new_set - self.rule_set
        # every old rule is still there when the sizes say so (an edit that only adds skips a second pass)
        removed = self.rule_set - new_set if len(new_set) - len(added) < len(self.rule_set) else set()
        if len(added) + len(removed) > MAX_CHANGES:
            return DomainIndex(new)
        index = DomainIndex.__new__(DomainIndex)
        index.rules, index.rule_set = new, new_set
        index.counts = dict(self.counts)
        index.pattern_rules = set(self.pattern_rules)
        index.keys, index.kept_keys, index.kept_names = list(self.keys), list(self.kept_keys), list(self.kept_names)
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
        key = _key(name)
        insort(self.keys, key)
        parent = name.partition(".")[2]
        if parent and self.covers(parent):
            return  # under a listed parent
        low, high = bisect_left(self.kept_keys, key), bisect_left(self.kept_keys, _run(key))
        self.kept_keys[low:high] = [key]  # its subdomains, kept until now, are covered by it
        self.kept_names[low:high] = [name]

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
        key = _key(name)
        del self.keys[bisect_left(self.keys, key)]
        at = bisect_left(self.kept_keys, key)
        if at == len(self.kept_keys) or self.kept_keys[at] != key:
            return  # it was under a listed parent, which still covers its subdomains
        # it was kept, so no parent of it is listed: its listed subdomains come out from under it
        below = _outermost(self.keys[bisect_left(self.keys, key) : bisect_left(self.keys, _run(key))])
        self.kept_keys[at : at + 1] = below
        self.kept_names[at : at + 1] = [_name(k) for k in below]


class DomainMemo:
    """The indexes of the last `size` lists asked about, most recent first; thread-safe."""

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
            near = base is not None and abs(len(base.rules) - len(wanted)) <= MAX_CHANGES
            index = base.derive(wanted) if base is not None and near else DomainIndex(wanted)
            self._indexes.insert(0, index)
            del self._indexes[self.size :]
            return index
