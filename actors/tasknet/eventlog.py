"""The set of events a node holds: per-author chains, a pending buffer for gaps, anonymous events.

Accepting an event checks its signature and chain position only; whether it is valid
against the state machine is decided by the reducer when the log is folded, so every
node decides the same way whatever order events arrived in.
"""

from __future__ import annotations

from typing import Any

from actors.tasknet.events import ANON, EventError, check_shape
from actors.tasknet.records import Event


class EventLog:
    def __init__(self) -> None:
        self.chains: dict[str, list[Event]] = {}
        self.anonymous: dict[str, Event] = {}
        self.pending: dict[tuple[str, int], Event] = {}
        self.equivocations: dict[str, int] = {}
        self.conflicts: dict[str, Event] = {}
        self.max_pending = 10_000
        self.by_id: dict[str, Event] = {}

    def __len__(self) -> int:
        return sum(len(c) for c in self.chains.values()) + len(self.anonymous)

    def has(self, event: Event) -> bool:
        if event["author"] == ANON:
            return event["id"] in self.anonymous
        chain = self.chains.get(event["author"], [])
        return 0 < event["seq"] <= len(chain) and chain[event["seq"] - 1]["id"] == event["id"]

    def version_vector(self) -> dict[str, int]:
        return {author: len(chain) for author, chain in self.chains.items()}

    def heads(self) -> dict[str, str]:
        return {author: chain[-1]["id"] for author, chain in self.chains.items() if chain}

    def missing_for(
        self, vector: dict[str, int], anon_ids: set[str], limit: int = 2000, heads: dict[str, str] | None = None
    ) -> list[Event]:
        """Events the holder of `vector`, `heads` and `anon_ids` lacks, oldest per author first.

        Where the requester's head differs from this node's event at the same position, that
        event is sent too, so the requester detects the fork (equivocation).
        """
        out: list[Event] = []
        for author, chain in sorted(self.chains.items()):
            have = vector.get(author, 0)
            head = (heads or {}).get(author)
            if head is not None and 0 < have <= len(chain) and chain[have - 1]["id"] != head:
                out.append(chain[have - 1])
            out.extend(chain[have:])
        out.extend(e for i, e in sorted(self.anonymous.items()) if i not in anon_ids)
        out.extend(self.conflicts.values())
        return out[:limit]

    def add(self, raw: Any) -> list[Event]:
        """Accept an event (verified); returns every event newly appended (gaps it filled included).

        Raises EventError when the event is forged or malformed. A duplicate returns [] without
        a second signature check (it must equal the stored event field for field).
        """
        if isinstance(raw, dict):
            known = self.by_id.get(str(raw.get("id")))
            if known is not None and all(raw.get(k) == v for k, v in known.items()):
                return []
        event = check_shape(raw)
        if event["id"] in self.conflicts:
            return []
        if event["author"] == ANON:
            if event["id"] in self.anonymous:
                return []
            self.anonymous[event["id"]] = event
            self.by_id[event["id"]] = event
            return [event]
        added: list[Event] = []
        self._place(event, added)
        return added

    def _place(self, event: Event, added: list[Event]) -> None:
        author = event["author"]
        chain = self.chains.setdefault(author, [])
        seq = event["seq"]
        if seq <= len(chain):
            if chain[seq - 1]["id"] != event["id"]:
                self.equivocations[author] = min(seq, self.equivocations.get(author, seq))
                self.conflicts.setdefault(event["id"], event)
            return
        if seq > len(chain) + 1:
            if len(self.pending) < self.max_pending:
                self.pending[(author, seq)] = event
            return
        expected_prev = chain[-1]["id"] if chain else ""
        if event["prev"] != expected_prev:
            raise EventError("event does not extend its author's chain")
        if chain and list(event["hlc"]) <= list(chain[-1]["hlc"]):
            raise EventError("event clock does not advance its author's chain")
        chain.append(event)
        self.by_id[event["id"]] = event
        added.append(event)
        following = self.pending.pop((author, seq + 1), None)
        if following is not None:
            try:
                self._place(following, added)
            except EventError:
                pass

    def all_events(self) -> list[Event]:
        out = [e for chain in self.chains.values() for e in chain]
        out.extend(self.anonymous.values())
        return out
