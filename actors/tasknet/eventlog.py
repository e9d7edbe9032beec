"""The set of events a node holds: per-author chains, a pending buffer for gaps, anonymous events.

Accepting an event checks its signature and chain position only; whether it is valid
against the state machine is decided by the reducer when the log is folded, so every
node decides the same way whatever order events arrived in.

After a certified checkpoint (checkpoint.py) the events it covers are dropped: each chain
then starts after its `base` (the seq, id and clock of the author's last covered event),
and the ids of covered anonymous events are kept so that a copy arriving again is a duplicate.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from actors.tasknet.events import ANON, ChainError, EventError, check_shape
from actors.tasknet.records import Event

Head = tuple[int, str, list[int]]
"""An author's position: (seq, event id, hlc) of the last event; (0, "", []) before the first."""

NO_HEAD: Head = (0, "", [])


class EventLog:
    def __init__(self) -> None:
        self.chains: dict[str, list[Event]] = {}
        self.base: dict[str, Head] = {}
        self.anonymous: dict[str, Event] = {}
        self.covered_anonymous: set[str] = set()
        self.pending: dict[tuple[str, int], Event] = {}
        self.equivocations: dict[str, int] = {}
        self.conflicts: dict[str, Event] = {}
        self.max_pending = 10_000
        self.by_id: dict[str, Event] = {}
        self.version = 0  # bumped by every change to what the log holds (see `digest`)
        self._digest: tuple[int, str] = (-1, "")

    def __len__(self) -> int:
        return sum(len(c) for c in self.chains.values()) + len(self.anonymous)

    def base_seq(self, author: str) -> int:
        return self.base.get(author, NO_HEAD)[0]

    def top(self, author: str) -> Head:
        """The author's last event held (or the checkpoint's head when none follows it)."""
        chain = self.chains.get(author)
        if chain:
            return chain[-1]["seq"], chain[-1]["id"], chain[-1]["hlc"]
        return self.base.get(author, NO_HEAD)

    def has(self, event: Event) -> bool:
        if event["author"] == ANON:
            return event["id"] in self.anonymous or event["id"] in self.covered_anonymous
        base = self.base_seq(event["author"])
        chain = self.chains.get(event["author"], [])
        if event["seq"] <= base:
            return event["seq"] == base and self.base[event["author"]][1] == event["id"]
        return event["seq"] - base <= len(chain) and chain[event["seq"] - base - 1]["id"] == event["id"]

    def digest(self) -> str:
        """A hash of what this log holds: every author's head (seq and id), the anonymous event ids and
        the conflicting branches. Two logs with the same digest lack nothing from each other, so an
        anti-entropy round compares digests before it pulls. Recomputed only after a change."""
        if self._digest[0] != self.version:
            authors = set(self.chains) | set(self.base)
            heads = sorted((a, self.top(a)[0], self.top(a)[1]) for a in authors)
            held = [heads, sorted(self.anonymous), sorted(self.conflicts)]
            blob = json.dumps(held, separators=(",", ":")).encode()
            self._digest = (self.version, hashlib.sha256(blob).hexdigest())
        return self._digest[1]

    def version_vector(self) -> dict[str, int]:
        authors = set(self.chains) | set(self.base)
        return {author: self.top(author)[0] for author in authors}

    def heads(self) -> dict[str, str]:
        authors = set(self.chains) | set(self.base)
        return {author: self.top(author)[1] for author in authors if self.top(author)[0]}

    def missing_for(
        self, vector: dict[str, int], anon_ids: set[str], limit: int = 2000, heads: dict[str, str] | None = None
    ) -> list[Event]:
        """Events the holder of `vector`, `heads` and `anon_ids` lacks, oldest per author first.

        Where the requester's head differs from this node's event at the same position, that
        event is sent too, so the requester detects the fork (equivocation). An author whose
        missing events this node compacted away is skipped: the requester needs the checkpoint.
        """
        out: list[Event] = []
        for author, chain in sorted(self.chains.items()):
            have = vector.get(author, 0)
            base = self.base_seq(author)
            if have < base:
                continue
            head = (heads or {}).get(author)
            if head is not None and base < have <= base + len(chain) and chain[have - base - 1]["id"] != head:
                out.append(chain[have - base - 1])
            out.extend(chain[have - base :])
        out.extend(e for i, e in sorted(self.anonymous.items()) if i not in anon_ids)
        out.extend(self.conflicts.values())
        return out[:limit]

    def add(self, raw: Any) -> list[Event]:
        """Accept an event (verified); returns every event newly appended (gaps it filled included).

        Raises EventError when the event is forged or malformed. A duplicate returns [] without
        a second signature check (it must equal the stored event field for field); so does an
        event a certified checkpoint already covers.
        """
        if isinstance(raw, dict):
            known = self.by_id.get(str(raw.get("id")))
            if known is not None and all(raw.get(k) == v for k, v in known.items()):
                return []
            if self._covered(raw):
                return []
        event = check_shape(raw)
        if event["id"] in self.conflicts:
            return []
        if event["author"] == ANON:
            if event["id"] in self.anonymous or event["id"] in self.covered_anonymous:
                return []
            self.anonymous[event["id"]] = event
            self.by_id[event["id"]] = event
            self.version += 1
            return [event]
        added: list[Event] = []
        self._place(event, added)
        return added

    def _covered(self, raw: dict[str, Any]) -> bool:
        """Whether a certified checkpoint already holds this position (the event changes nothing)."""
        if raw.get("author") == ANON:
            return raw.get("id") in self.covered_anonymous
        seq = raw.get("seq")
        return isinstance(seq, int) and seq <= self.base_seq(str(raw.get("author")))

    def _place(self, event: Event, added: list[Event]) -> None:
        author = event["author"]
        chain = self.chains.setdefault(author, [])
        base = self.base_seq(author)
        seq = event["seq"]
        top_seq, top_id, top_hlc = self.top(author)
        if seq <= top_seq:
            if chain[seq - base - 1]["id"] != event["id"]:
                self.equivocations[author] = min(seq, self.equivocations.get(author, seq))
                self.conflicts.setdefault(event["id"], event)
                self.version += 1
            return
        if seq > top_seq + 1:
            if len(self.pending) < self.max_pending:
                self.pending[(author, seq)] = event
            return
        if event["prev"] != top_id:
            raise ChainError("event does not extend its author's chain")
        if top_seq and list(event["hlc"]) <= list(top_hlc):
            raise ChainError("event clock does not advance its author's chain")
        chain.append(event)
        self.by_id[event["id"]] = event
        self.version += 1
        added.append(event)
        following = self.pending.pop((author, seq + 1), None)
        if following is not None:
            try:
                self._place(following, added)
            except EventError:
                pass

    def compact(self, heads: dict[str, Head], anonymous: set[str]) -> None:
        """Drop what a certified checkpoint covers: each chain up to its head, the covered anonymous events.

        A held event at a head's position with another id is the other branch of an
        equivocation: the author is cut from there and that event kept as evidence.
        """
        for author, head in heads.items():
            seq = head[0]
            if seq <= self.base_seq(author):
                continue
            base = self.base_seq(author)
            chain = self.chains.get(author, [])
            kept: list[Event]
            if seq - base <= len(chain) and chain[seq - base - 1]["id"] != head[1]:
                self.equivocations[author] = min(seq, self.equivocations.get(author, seq))
                self.conflicts.setdefault(chain[seq - base - 1]["id"], chain[seq - base - 1])
                dropped, kept = chain, []
            elif seq - base > len(chain):
                dropped, kept = chain, []
            else:
                dropped, kept = chain[: seq - base], chain[seq - base :]
            for event in dropped:
                self.by_id.pop(event["id"], None)
            self.chains[author] = kept
            self.base[author] = (seq, head[1], list(head[2]))
            for key in [k for k in self.pending if k[0] == author and k[1] <= seq]:
                del self.pending[key]
            following = None if kept else self.pending.pop((author, seq + 1), None)
            if following is not None:
                try:
                    self._place(following, [])
                except EventError:
                    pass
        for event_id in anonymous:
            if self.anonymous.pop(event_id, None) is not None:
                self.by_id.pop(event_id, None)
        self.covered_anonymous |= anonymous
        self.version += 1

    def all_events(self) -> list[Event]:
        out = [e for chain in self.chains.values() for e in chain]
        out.extend(self.anonymous.values())
        return out
