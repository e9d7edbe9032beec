"""One network node without I/O of its own: identity, signed log, reducer, Raft, notifications.

The Ray actor (actors/tasknet/node_actor.py) owns one and moves its messages; tests
drive several directly and deliver their gossip in any order.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from actors.tasknet import ring
from actors.tasknet.eventlog import EventLog
from actors.tasknet.events import MAX_EVENT_BYTES, EventError, make_anonymous, make_event, order_key
from actors.tasknet.hlc import HybridClock
from actors.tasknet.identity import Identity, verify
from actors.tasknet.ledger import DEFAULT_CHANNEL, Reject, tier_of
from actors.tasknet.raft import HardState, RaftCore
from actors.tasknet.records import Attestation, Event, NetworkState, Notification, Payload, Result, ZkpProof
from actors.tasknet.reducer import NOTIFICATIONS, Reducer, validate
from actors.tasknet.rules_governance import anonymous_message, proposal, public_message, ratify_message, ring_for
from actors.tasknet.sealing import SealKey
from actors.tasknet.wal import RecordLog, write_atomic

MAX_NOTIFICATIONS = 2000
MAX_CLOCK_SKEW_MS = 60_000  # events stamped further ahead wait (anti-entropy offers them again)


class NodeCore:
    def __init__(
        self,
        name: str,
        data_dir: Path | None,
        genesis_author: str | None = None,
        now_ms: Callable[[], int] | None = None,
    ) -> None:
        self.name = name
        self.data_dir = data_dir
        if data_dir is not None:
            data_dir.mkdir(parents=True, exist_ok=True)
            self.identity = Identity.load_or_create(data_dir / "node.key")
        else:
            self.identity = Identity.generate()
        self.node_id = self.identity.node_id
        self.ring_key = ring.RingKey.from_seed(self.identity.secret_seed("ring"))
        self.seal_key = SealKey(self.identity.secret_seed("seal"))
        self.now_ms = now_ms or (lambda: int(time.time() * 1000))
        self.clock = HybridClock(self.now_ms)
        self.log = EventLog()
        self.genesis_author = genesis_author
        self.reducer = Reducer(genesis_author)
        self.outbox: list[Event] = []
        self.notifications: deque[tuple[int, str, Notification]] = deque(maxlen=MAX_NOTIFICATIONS)
        self.cursor = 0
        self.listeners: set[Callable[[], object]] = set()
        self.started = time.time()
        self.stats = {
            "events_created": 0,
            "events_received": 0,
            "events_duplicate": 0,
            "events_invalid": 0,
            "events_future": 0,
            "refolds": 0,
        }
        self.raft: RaftCore | None = None
        self.events_file: RecordLog | None = None
        self.raft_file: RecordLog | None = None
        self._raft_saved: tuple[int, str | None, list[int]] = (0, None, [])
        self._raft_records = 0
        self.attestations: dict[str, Attestation] = {}
        self.relayed_images: set[str] = set()
        self._attest_out: list[Attestation] = []
        self._load()

    # ----- persistence: events.log and raft.log are fsynced append-only record files (wal.py)
    def _load(self) -> None:
        if self.data_dir is None:
            return
        meta = self.data_dir / "meta.json"
        if meta.exists() and self.genesis_author is None:
            self.set_genesis_author(json.loads(meta.read_text())["genesis_author"])
        self.events_file = RecordLog(self.data_dir / "events.log")
        self.stats["torn_bytes_dropped"] = self.events_file.torn_bytes
        stored, self.events_file.records = self.events_file.records, []
        legacy = self.data_dir / "events.jsonl"  # the format before the fsynced log
        if legacy.exists():
            lines = legacy.read_text(encoding="utf-8").splitlines()
            stored.extend(json.loads(line) for line in lines if line.startswith("{") and line.endswith("}"))
        for raw in stored:
            try:
                self.log.add(raw)
            except EventError:
                continue
        if legacy.exists():
            self.events_file.rewrite(self.log.all_events())
            legacy.unlink()
        for event in self.log.all_events():
            self.clock.observe(event["hlc"])
        self.reducer.refold(self.log.all_events())

    def _persist(self, events: list[Event]) -> None:
        if self.events_file is not None:
            self.events_file.append(events)

    def set_genesis_author(self, author: str) -> None:
        """Pin the bootstrap node whose genesis this node accepts (trust on first use)."""
        if self.genesis_author == author:
            return
        self.genesis_author = author
        self.reducer.genesis_author = author
        if self.data_dir:
            write_atomic(self.data_dir / "meta.json", json.dumps({"genesis_author": author}).encode())
        self._refold()

    # ----- state
    @property
    def state(self) -> NetworkState:
        return self.reducer.state

    def _refold(self) -> None:
        self.stats["refolds"] += 1
        cut = self.log.equivocations
        events = [e for e in self.log.all_events() if not (e["author"] in cut and e["seq"] >= cut[e["author"]])]
        self.reducer.refold(events)

    def _apply_new(self, events: list[Event], notify: bool = True) -> None:
        ordered = sorted(events, key=order_key)
        if ordered and not self.reducer.can_append(ordered[0]):
            self._refold()
        else:
            for event in ordered:
                self.reducer.apply(event)
        if notify:
            for event in ordered:
                if isinstance(self.reducer.outcomes.get(event["id"]), dict) and event["type"] in NOTIFICATIONS:
                    self._notify(event)

    def _notify(self, event: Event) -> None:
        self.cursor += 1
        data: dict[str, str | int] = {"event_id": event["id"], "author": event["author"], "channel": event["channel"]}
        payload = event["payload"]
        for key in ("task_id", "proposal_id", "title", "vote", "subtask_id", "amount", "bidder_id", "applicant_id"):
            if key in payload and isinstance(payload[key], (str, int)):
                data[key] = payload[key]
        if event["type"] in ("task_create", "composite_create", "proposal_create"):
            data["task_id" if event["type"] != "proposal_create" else "proposal_id"] = event["id"][:16]
        notification: Notification = {"type": NOTIFICATIONS[event["type"]], "data": data}
        self.notifications.append((self.cursor, event["channel"], notification))
        for listener in list(self.listeners):
            listener()

    def notifications_since(self, cursor: int) -> tuple[int, list[tuple[str, Notification]]]:
        return self.cursor, [(ch, msg) for n, ch, msg in self.notifications if n > cursor]

    # ----- writing
    def submit(self, type_: str, payload: Payload, channel: str = DEFAULT_CHANNEL) -> tuple[Event, Result]:
        """Validate against the current state, sign, append, apply; the event and the rule's result."""
        chain = self.log.chains.get(self.node_id, [])
        hlc = list(self.clock.tick())
        if chain and hlc <= chain[-1]["hlc"]:
            hlc = [chain[-1]["hlc"][0], chain[-1]["hlc"][1] + 1]
        prev = chain[-1]["id"] if chain else ""
        event = make_event(self.identity, len(chain) + 1, prev, hlc, channel, type_, payload)
        validate(self.state, event)
        self._add_own(event)
        self._persist([event])
        self._apply_new([event])
        result = self._result_of(event)
        self.stats["events_created"] += 1
        self.outbox.append(event)
        return event, result

    def _add_own(self, event: Event) -> None:
        """Append an event this node made; one the network would refuse (too large) is a 413, never stored."""
        try:
            self.log.add(event)
        except EventError as exc:
            limit = MAX_EVENT_BYTES // 1024
            raise Reject(f"the event would be refused by the network ({exc}; at most {limit} KiB)", 413) from exc

    def _result_of(self, event: Event) -> Result:
        outcome = self.reducer.outcomes.get(event["id"], "event was not applied")
        if isinstance(outcome, str):
            raise Reject(outcome)
        return outcome

    def receive(self, events: list[Any]) -> list[Event]:
        """Accept gossiped events (any order, duplicates allowed); the ones that were new."""
        fresh: list[Event] = []
        conflicts = len(self.log.conflicts)
        horizon = self.now_ms() + MAX_CLOCK_SKEW_MS
        for raw in events:
            hlc = raw.get("hlc") if isinstance(raw, dict) else None
            if isinstance(hlc, list) and hlc and isinstance(hlc[0], int) and hlc[0] > horizon:
                self.stats["events_future"] += 1
                continue
            try:
                added = self.log.add(raw)
            except EventError:
                self.stats["events_invalid"] += 1
                continue
            if not added:
                self.stats["events_duplicate"] += 1
            for event in added:
                self.clock.observe(event["hlc"])
            fresh.extend(added)
        self.stats["events_received"] += len(fresh)
        if fresh:
            self._persist(fresh)
        if len(self.log.conflicts) != conflicts:
            self._refold()
        elif fresh:
            self._apply_new(fresh)
        return fresh

    # ----- anonymous votes
    def anonymous_proof(self, proposal_id: str, value: str) -> ZkpProof:
        prop = proposal(self.state, {"proposal_id": proposal_id})
        mine = [t for t, members in prop["snapshot"]["tiers"].items() if any(n == self.node_id for n, _ in members)]
        if not mine:
            raise Reject("this node was not known when the proposal opened", 403)
        tier = mine[0]
        signature = ring.sign(
            self.ring_key, ring_for(prop, tier), proposal_id.encode(), anonymous_message(proposal_id, value, tier)
        )
        weight = float(self.state["config"]["tiers"][tier][1])
        return {
            "commitment": signature["key_image"],
            "challenge": signature["c0"],
            "response": signature["s"],
            "tier": tier,
            "tier_weight": weight,
        }

    def public_vote_payload(self, proposal_id: str, value: str) -> Payload:
        """A public vote with its key image and the proof that the image is this node's (a ring of one)."""
        signature = ring.sign(
            self.ring_key,
            [self.ring_key.public],
            proposal_id.encode(),
            public_message(proposal_id, value, self.node_id),
        )
        proof = {"challenge": signature["c0"], "response": signature["s"]}
        return {"proposal_id": proposal_id, "vote": value, "key_image": signature["key_image"], "proof": proof}

    def anonymous_event(self, proposal_id: str, value: str, proof: ZkpProof, channel: str) -> tuple[Event, Result]:
        """A validated anonymous vote not yet in this node's log (to hand to a relay); its key image
        is remembered so this node refuses a second one before the first comes back by gossip."""
        event = make_anonymous(
            list(self.clock.tick()),
            channel,
            "anon_vote",
            {"proposal_id": proposal_id, "vote": value, "zkp_proof": proof},
        )
        if proof.get("commitment") in self.relayed_images:
            raise Reject("this key already voted on the proposal (nullifier used)", 403)
        result = validate(self.state, event)
        if len(self.relayed_images) > 10_000:
            self.relayed_images.clear()
        self.relayed_images.add(str(proof["commitment"]))
        return event, result

    def submit_anonymous(self, proposal_id: str, value: str, proof: ZkpProof, channel: str) -> Result:
        """An anonymous vote entered into the network by this node itself (tests; no relay)."""
        event, result = self.anonymous_event(proposal_id, value, proof, channel)
        self._add_own(event)
        self._persist([event])
        self._apply_new([event])
        self.outbox.append(event)
        return result

    def current_tier(self) -> str:
        record = self.state["nodes"].get(self.node_id)
        return tier_of(self.state, record["reputation"]["_total"] if record else 0)

    # ----- Raft among validators
    def ensure_raft(self, seed: int | None = None) -> RaftCore | None:
        validators = self.state["config"]["validator_set"]
        if self.raft is None and self.node_id in validators:
            hard = self._load_raft()
            self.raft = RaftCore(self.node_id, validators, hard=hard, seed=seed)
        return self.raft

    def _load_raft(self) -> HardState:
        """Replay raft.log: `{hard: [term, voted_for]}` and `{from: i, entries}` (truncate at i, append)."""
        hard = HardState()
        if self.data_dir is None:
            return hard
        self.raft_file = RecordLog(self.data_dir / "raft.log")
        records, self.raft_file.records = self.raft_file.records, []
        legacy = self.data_dir / "raft.json"  # the format before the fsynced log
        if legacy.exists() and not records:
            raw = json.loads(legacy.read_text())
            records = [{"hard": [raw["term"], raw["voted_for"]]}, {"from": 0, "entries": raw["log"]}]
        for record in records:
            if "hard" in record:
                hard.term, hard.voted_for = record["hard"]
            else:
                del hard.log[record["from"] :]
                hard.log.extend(record["entries"])
        self._raft_saved = (hard.term, hard.voted_for, [e["term"] for e in hard.log])
        self._raft_records = len(records)
        if legacy.exists():
            self._compact_raft(hard)
            legacy.unlink()
        return hard

    def _compact_raft(self, hard: HardState) -> None:
        if self.raft_file is not None:
            self.raft_file.rewrite([{"hard": [hard.term, hard.voted_for]}, {"from": 0, "entries": hard.log}])
            self._raft_records = 2

    def persist_raft(self) -> None:
        """Append what changed since the last call (term and vote, the log from the first changed entry), fsynced."""
        if self.raft is None or not self.raft.dirty:
            return
        self.raft.dirty = False
        hard = self.raft.hard
        term, voted_for, terms = self._raft_saved
        records: list[dict[str, Any]] = []
        if (term, voted_for) != (hard.term, hard.voted_for):
            records.append({"hard": [hard.term, hard.voted_for]})
        same = 0  # Raft's log matching: the same index and term hold the same entry
        while same < min(len(terms), len(hard.log)) and terms[same] == hard.log[same]["term"]:
            same += 1
        if same < len(terms) or same < len(hard.log):
            records.append({"from": same, "entries": hard.log[same:]})
        self._raft_saved = (hard.term, hard.voted_for, [e["term"] for e in hard.log])
        if self.raft_file is None or not records:
            return
        self.raft_file.append(records)
        self._raft_records += len(records)
        if self._raft_records > 2 * len(hard.log) + 1000:
            self._compact_raft(hard)

    def apply_committed(self) -> None:
        """Sign an attestation for each newly committed Raft entry; ratify once a majority signed."""
        if self.raft is None:
            return
        for index, data in self.raft.take_committed():
            pid = data.get("proposal_id")
            if not isinstance(pid, str) or index <= self.state["last_ratified_index"]:
                continue
            term = self.raft.term_at(index)
            signature = self.identity.sign(ratify_message(pid, index, term))
            attestation: Attestation = {
                "proposal_id": pid,
                "raft_index": index,
                "term": term,
                "channel": str(data.get("channel", DEFAULT_CHANNEL)),
                "by": str(data.get("by", "")),
                "signatures": {self.node_id: signature},
            }
            self._attest_out.append(attestation)
            self.add_attestation(attestation)

    def take_attestations(self) -> list[Attestation]:
        """Attestations to send to the other validators (own ones, once each)."""
        out, self._attest_out = self._attest_out, []
        return out

    def unratified_attestations(self) -> list[Attestation]:
        """Every attestation held for entries not ratified yet (re-sent while they wait)."""
        floor = self.state["last_ratified_index"]
        return [a for a in self.attestations.values() if a["raft_index"] > floor]

    def add_attestation(self, raw: Any) -> bool:
        """Merge a validator's attestation (signatures checked); True when it ratified the entry."""
        try:
            pid, index, term = str(raw["proposal_id"]), int(raw["raft_index"]), int(raw["term"])
            incoming = dict(raw["signatures"])
            channel, by = str(raw.get("channel", DEFAULT_CHANNEL))[:64], str(raw.get("by", ""))[:64]
        except (KeyError, TypeError, ValueError):
            return False
        floor = self.state["last_ratified_index"]
        if index <= floor:
            return False
        message = ratify_message(pid, index, term)
        nodes, validators = self.state["nodes"], self.state["config"]["validator_set"]
        key = f"{index}:{term}:{pid}"
        held = self.attestations.setdefault(
            key,
            {"proposal_id": pid, "raft_index": index, "term": term, "channel": channel, "by": by, "signatures": {}},
        )
        for signer, sig in incoming.items():
            if signer in validators and signer in nodes and signer not in held["signatures"]:
                if isinstance(sig, str) and verify(nodes[signer]["public_key"], message, sig):
                    held["signatures"][signer] = sig
        if len(held["signatures"]) <= len(validators) // 2:
            return False
        payload = {"proposal_id": pid, "raft_index": index, "term": term, "ratified_by": by or self.node_id}
        try:
            self.submit("ratified", {**payload, "signatures": dict(held["signatures"])}, held["channel"])
        except Reject:
            return False
        self.attestations = {k: a for k, a in self.attestations.items() if a["raft_index"] > index}
        return True
