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

from actors.tasknet import checkpoint as cp
from actors.tasknet import ring
from actors.tasknet.eventlog import EventLog
from actors.tasknet.events import MAX_EVENT_BYTES, ChainError, EventError, make_anonymous, make_event
from actors.tasknet.hlc import HybridClock
from actors.tasknet.identity import Identity, verify
from actors.tasknet.ledger import DEFAULT_CHANNEL, Reject, tier_of
from actors.tasknet.raft import LEADER, ChangeRefused, HardState, LogEntry, RaftCore
from actors.tasknet.raftstore import RaftStorageError, RaftStore
from actors.tasknet.records import Attestation, Event, NetworkState, Notification, Payload, Result, ZkpProof
from actors.tasknet.reducer import NOTIFICATIONS, Reducer, validate
from actors.tasknet.rules_governance import (
    anonymous_message,
    changed_set,
    proposal,
    public_message,
    ratify_message,
    ratifying_set,
    ring_for,
)
from actors.tasknet.sealing import SealKey
from actors.tasknet.wal import RecordLog, write_atomic

MAX_NOTIFICATIONS = 2000
MAX_CLOCK_SKEW_MS = 60_000  # events stamped further ahead wait (anti-entropy offers them again)
CHECKPOINT_INTERVAL_MS = 300_000  # checkpoint horizons are multiples of this on the event clock
CHECKPOINT_SETTLE_MS = 120_000  # how long after a horizon passes before a node checkpoints at it
RAFT_SNAPSHOT_ENTRIES = 10_000  # Raft entries applied past the last snapshot before the next one


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
            "events_out_of_chain": 0,
            "events_future": 0,
            "refolds": 0,
            "events_below_horizon": 0,
            "checkpoints_installed": 0,
            "checkpoint_events_dropped": 0,
            "checkpoint_horizon": 0,
            "checkpoints_refused": 0,
        }
        self.raft: RaftCore | None = None
        self.events_file: RecordLog | None = None
        self.raft_store: RaftStore | None = None
        self.raft_snapshot_entries = RAFT_SNAPSHOT_ENTRIES
        self.raft_election_ticks = 10  # RaftCore's default; raft_election_timeout_s sets it
        self.raft_heartbeat_ticks = 2  # RaftCore's default; raft_heartbeat_interval_s sets it
        self.raft_error: str | None = None  # why this node's Raft state on disk could not be loaded
        self.closed = False  # close() ran: the record files are closed and no Raft store opens again
        self.attestations: dict[str, Attestation] = {}
        self.relayed_images: set[str] = set()
        self._attest_out: list[Attestation] = []
        self.checkpoint_interval_ms = CHECKPOINT_INTERVAL_MS
        self.checkpoint_settle_ms = CHECKPOINT_SETTLE_MS
        self.checkpoint: cp.Base | None = None  # the certified base (its state kept as JSON only)
        self._base_json = b""
        self.genesis_event: Event | None = None
        self.candidates: dict[int, tuple[cp.Checkpoint, bytes]] = {}  # own checkpoints, not certified yet
        self.signatures = cp.SignatureBook()
        self.wanted: cp.Certificate | None = None  # certified elsewhere, this node's position differs
        self._load()

    # ----- persistence: events.log and raft.log are fsynced append-only record files (wal.py)
    def _load(self) -> None:
        if self.data_dir is None:
            return
        meta = self.data_dir / "meta.json"
        if meta.exists() and self.genesis_author is None:
            self.set_genesis_author(json.loads(meta.read_text())["genesis_author"])
        saved = self.data_dir / "checkpoint.json"
        if saved.exists():
            try:
                checkpoint = cp.verify_checkpoint(json.loads(saved.read_bytes()), self.genesis_author)
            except (cp.CheckpointError, ValueError):
                self.stats["checkpoints_refused"] += 1  # a peer's certified checkpoint replaces it
            else:
                self._install(checkpoint, None, persist=False)
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
        if legacy.exists() or (self.checkpoint is not None and len(stored) > len(self.log)):
            self.events_file.rewrite(self.log.all_events())
        if legacy.exists():
            legacy.unlink()
        for event in self.log.all_events():
            self.clock.observe(event["hlc"])
        self.reducer.refold(self.log.all_events())

    def close(self) -> None:
        """Close the record files (the node actor stops, or a node object is dropped in tests and
        benches); idempotent. A write after it fails (the file is closed) rather than being lost."""
        self.closed = True
        if self.events_file is not None:
            self.events_file.close()
        if self.raft_store is not None:
            self.raft_store.close()

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

    def _active_events(self) -> list[Event]:
        """The events held after the base, without those an equivocation cut."""
        cut = self.log.equivocations
        return [e for e in self.log.all_events() if not (e["author"] in cut and e["seq"] >= cut[e["author"]])]

    def _refold(self) -> None:
        self.stats["refolds"] += 1
        self.reducer.refold(self._active_events())

    def _apply_new(self, events: list[Event], notify: bool = True) -> None:
        ordered = sorted(events, key=self.reducer.key)
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
        seq, prev, top_hlc = self.log.top(self.node_id)
        hlc = list(self.clock.tick())
        if seq and hlc <= top_hlc:
            hlc = [top_hlc[0], top_hlc[1] + 1]
        event = make_event(self.identity, seq + 1, prev, hlc, channel, type_, payload)
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
            except ChainError:
                self.stats["events_out_of_chain"] += 1
                continue
            except EventError:
                self.stats["events_invalid"] += 1
                continue
            if not added:
                self.stats["events_duplicate"] += 1
            for event in added:
                self.clock.observe(event["hlc"])
                if event["hlc"][0] < self.reducer.horizon:
                    self.stats["events_below_horizon"] += 1
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
    def ensure_raft(self, seed: int | None = None, learner: bool = False) -> RaftCore | None:
        """This node's Raft, made when it is (or was, at genesis) a validator, or with `learner` when
        a validator replicates to it (a validator to be, catching up). Its base configuration is the
        genesis set: the configuration entries in the Raft log change it from there."""
        history = self.state.get("validator_history") or []
        base = history[0]["validators"] if history else self.state["config"]["validator_set"]
        member = self.node_id in self.state["config"]["validator_set"] or self.node_id in base
        if (
            self.raft is None
            and self.raft_error is None
            and not self.closed
            and (member or (learner and self.state["genesis"] is not None))
        ):
            try:
                hard = self._load_raft()
            except RaftStorageError as exc:  # no Raft rather than one with a hole in its log
                self.raft_error = str(exc)
                return None
            self.raft = RaftCore(
                self.node_id,
                base,
                hard=hard,
                seed=seed,
                election_ticks=self.raft_election_ticks,
                heartbeat_ticks=self.raft_heartbeat_ticks,
            )
        return self.raft

    def validators(self) -> set[str]:
        """The ratified validator set and the voters of this node's Raft configuration (a validator
        added or removed in Raft and not ratified yet): whose Raft messages and attestations count."""
        validators = set(self.state["config"]["validator_set"])
        if self.raft is not None:
            validators.update(self.raft.voters())
        return validators

    def raft_for(self, sender: str) -> RaftCore | None:
        """The Raft that handles a message from `sender`: a validator's messages make a learner's."""
        return self.ensure_raft(learner=sender in self.validators())

    def raft_propose(self, data: dict[str, Any]) -> int:
        """Append the Raft entry that ratifies `data["proposal_id"]` (leader only); its index.

        A validator change becomes a configuration entry, appended only when the Raft configuration
        is the reduced validator set (the previous change is ratified: one at a time) and the change
        is valid against it; Reject 503 while a new validator catches up (retry), 409 otherwise."""
        raft = self.raft
        prop = proposal(self.state, data)
        if raft is None or raft.role != LEADER:
            raise Reject("only the Raft leader appends entries", 503)
        if prop["status"] != "pending_ratification":
            raise Reject(f"proposal is {prop['status']}, not pending_ratification", 409)
        if prop["proposal_type"] != "validator_change":
            return int(raft.propose(data) or 0)
        if sorted(raft.voters()) != sorted(self.state["config"]["validator_set"]):
            raise Reject("a validator change is still being ratified; one change at a time", 409)
        if self._awaiting_ratification(raft.last_index() + 1, changes_only=False):
            raise Reject("earlier Raft entries await their ratification (they may change what is allowed)", 503)
        changed_set(self.state, prop["params"])
        try:
            return raft.propose_change(prop["params"]["action"], prop["params"]["node_id"], data)
        except ChangeRefused as exc:
            raise Reject(exc.message, 503 if exc.retry else 409) from exc

    def _load_raft(self) -> HardState:
        """raft.log over its newest snapshot (raftstore.py); empty without a data folder."""
        if self.data_dir is None:
            return HardState()
        self.raft_store = RaftStore(self.data_dir)
        hard = self.raft_store.load()
        self.stats["raft_snapshots_refused"] = self.raft_store.snapshots_refused
        return hard

    def persist_raft(self) -> None:
        """Append what changed since the last call (term and vote, the log from the first changed
        entry), fsynced; a snapshot installed from the leader first (it replaces the log)."""
        if self.raft is None:
            return
        if self.raft_store is not None:
            self.raft_store.persist(self.raft)
        else:
            self.raft.dirty = self.raft.snapshot_installed = False

    def _compact_raft(self) -> None:
        """Snapshot Raft's applied state once `raft_snapshot_entries` entries were applied past the
        last snapshot, up to the first entry that still awaits its ratification (its data is needed
        until then); the snapshot's data is the ratified index this node had (raftstore.py writes it)."""
        raft = self.raft
        if raft is None or raft.last_applied - raft.snap_index() < max(1, self.raft_snapshot_entries):
            return
        upto = raft.snap_index()
        for index in range(upto + 1, raft.last_applied + 1):
            if self._awaits(index, raft.entry(index)):
                break
            upto = index
        if upto - raft.snap_index() < max(1, self.raft_snapshot_entries):
            return
        data = {"ratified_index": self.state["last_ratified_index"]}
        if self.raft_store is not None:
            self.raft_store.compact(raft, upto, data)
        else:
            raft.compact(upto, data)
        self.stats["raft_snapshots"] = self.stats.get("raft_snapshots", 0) + 1

    def _awaits(self, index: int, entry: LogEntry | None) -> bool:
        """Whether the entry at `index` carries a proposal this node has not seen ratified (or not seen)."""
        pid = entry["data"].get("proposal_id") if entry else None
        if not isinstance(pid, str) or index <= self.state["last_ratified_index"]:
            return False
        if pid not in self.state["proposal_index"]:
            return True
        return proposal(self.state, {"proposal_id": pid})["status"] == "pending_ratification"

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
        self._compact_raft()

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
        return self.merge_attestation(raw) == "ratified"

    def merge_attestation(self, raw: Any) -> str:
        """Merge an attestation: `ratified` (it completed the entry's majority), `held`, `stale` (an
        entry ratified already: not checked), or `invalid`: malformed, without signatures, or one of
        them failing under its node's key (merged not at all; an honest node relays only signatures it
        verified, so this is the sender's doing). A signature by an id this node has not heard of is
        left out, not held against the sender: the join of a new node may not have reached this one yet."""
        try:
            pid, index, term = str(raw["proposal_id"]), int(raw["raft_index"]), int(raw["term"])
            incoming = dict(raw["signatures"])
            channel, by = str(raw.get("channel", DEFAULT_CHANNEL))[:64], str(raw.get("by", ""))[:64]
        except (KeyError, TypeError, ValueError):
            return "invalid"
        if index <= self.state["last_ratified_index"]:
            return "stale"
        if not incoming:
            return "invalid"
        message = ratify_message(pid, index, term)
        nodes = self.state["nodes"]
        key = f"{index}:{term}:{pid}"
        known = self.attestations[key]["signatures"] if key in self.attestations else {}
        verified: dict[str, str] = {}
        for signer, sig in incoming.items():
            record = nodes.get(signer)
            if record is None:
                continue
            if known.get(signer) != sig and not (isinstance(sig, str) and verify(record["public_key"], message, sig)):
                return "invalid"
            verified[signer] = sig
        if not verified or pid not in self.state["proposal_index"]:
            return "held"  # not kept: nothing this node can check yet, or a proposal it has not seen (re-sent)
        held = self.attestations.setdefault(
            key,
            {"proposal_id": pid, "raft_index": index, "term": term, "channel": channel, "by": by, "signatures": {}},
        )
        for signer, sig in verified.items():  # whose signatures count is decided at ratification
            held["signatures"].setdefault(signer, sig)
        if not self._ratify(held):
            return "held"
        self.attestations = {k: a for k, a in self.attestations.items() if a["raft_index"] > index}
        for waiting in sorted(self.attestations.values(), key=lambda a: a["raft_index"]):
            self._ratify(waiting)  # entries that waited for a validator change ratified before them
        return "ratified"

    def _ratify(self, held: Attestation) -> bool:
        """Write the `ratified` event once a majority of the set in force at the entry signed it."""
        index = held["raft_index"]
        if index <= self.state["last_ratified_index"] or self._awaiting_ratification(index, changes_only=True):
            return False
        try:
            prop = proposal(self.state, {"proposal_id": held["proposal_id"]})
            validators = set(ratifying_set(self.state, prop, index))
        except Reject:
            return False
        signatures = {s: sig for s, sig in held["signatures"].items() if s in validators}
        if len(signatures) <= len(validators) // 2:
            return False
        payload = {"proposal_id": held["proposal_id"], "raft_index": index, "term": held["term"]}
        payload["ratified_by"] = held["by"] or self.node_id
        try:
            self.submit("ratified", {**payload, "signatures": signatures}, held["channel"])
        except Reject:
            return False
        return True

    def _awaiting_ratification(self, index: int, changes_only: bool) -> bool:
        """Whether an entry below `index` awaits its ratification. With `changes_only`, a committed
        configuration entry: it goes first, since it decides whose signatures count after it. Without,
        any entry in the log: a validator change is checked against the state they leave."""
        if self.raft is None:
            return False
        end = self.raft.commit_index + 1 if changes_only else self.raft.last_index() + 1
        start, snap = self.state["last_ratified_index"] + 1, self.raft.hard.snapshot
        if snap is not None and start <= snap["index"]:
            # compacted entries were all ratified where the snapshot was taken: wait until they are here
            ratified = snap["data"].get("ratified_index")
            covered = ratified if isinstance(ratified, int) else snap["index"]  # unknown: all of it
            if start <= min(covered, snap["index"], index - 1):
                return True
            start = snap["index"] + 1
        for i in range(start, min(index, end)):
            data = self.raft.hard.log[i - self.raft.snap_index() - 1]["data"]
            pid = data.get("proposal_id")
            if ("conf" in data or not changes_only) and isinstance(pid, str) and pid in self.state["proposal_index"]:
                if proposal(self.state, {"proposal_id": pid})["status"] == "pending_ratification":
                    return True
        return False

    # ----- checkpoints (checkpoint.py): sign the folded state at a horizon, load a certified one
    def _certifiers(self, horizon: int) -> list[str]:
        """Who certifies the checkpoint at `horizon`: the validator set in force in its state (this
        node's own candidate; what cp.verify_checkpoint follows from the genesis), else in the current one."""
        own = self.candidates.get(horizon)
        return sorted((own[0]["state"] if own else self.state)["config"]["validator_set"])

    def _ever_validators(self) -> list[str]:
        """Everyone who has been a validator: whose checkpoint signatures are kept until the set at
        their horizon is known."""
        sets = [e["validators"] for e in self.state.get("validator_history") or []]
        return sorted(set(self.state["config"]["validator_set"]).union(*sets))

    def _genesis(self) -> Event | None:
        if self.genesis_event is None and self.state["genesis"] is not None:
            self.genesis_event = self.log.by_id.get(self.state["genesis"]["id"])
        return self.genesis_event

    def checkpoint_due(self) -> int:
        """The horizon this node should checkpoint at now, 0 when none (taken, or nothing below it)."""
        horizon = cp.due_horizon(self.now_ms(), self.checkpoint_interval_ms, self.checkpoint_settle_ms)
        if horizon <= self.reducer.horizon or horizon in self.candidates or self._genesis() is None:
            return 0
        if not any(e["hlc"][0] < horizon for e in self.log.all_events()):
            return 0
        return horizon

    def checkpoint_inputs(self, horizon: int) -> cp.Inputs:
        """What the checkpoint at `horizon` folds (cheap: the events after the base); `cp.build` folds it."""
        genesis = self._genesis()
        if genesis is None:
            raise Reject("no genesis to checkpoint from", 503)
        heads = dict(self.checkpoint["position"]["heads"]) if self.checkpoint else {}
        for author, chain in self.log.chains.items():
            below = [e for e in chain if e["hlc"][0] < horizon]
            if below:
                heads[author] = [below[-1]["seq"], below[-1]["id"], list(below[-1]["hlc"])]
        anonymous = set(self.log.covered_anonymous)
        anonymous.update(i for i, e in self.log.anonymous.items() if e["hlc"][0] < horizon)
        position: cp.Position = {
            "horizon": horizon,
            "heads": heads,
            "anonymous": sorted(anonymous),
            "cut": dict(self.log.equivocations),
        }
        return cp.Inputs(
            position=position,
            covered=[e for e in self._active_events() if e["hlc"][0] < horizon],
            base_json=self._base_json if self.checkpoint is not None else None,
            base_horizon=self.reducer.horizon,
            genesis_author=self.genesis_author,
            genesis=genesis,
        )

    def checkpoint_at(self, horizon: int) -> tuple[cp.Checkpoint, bytes]:
        """This node's checkpoint at `horizon`: the base folded with the events stamped below it."""
        return cp.build(self.checkpoint_inputs(horizon))

    def maybe_checkpoint(self) -> bool:
        """Take (and, as a validator, sign) the checkpoint now due, once per horizon; True when taken."""
        horizon = self.checkpoint_due()
        if not horizon:
            return False
        inputs = self.checkpoint_inputs(horizon)
        return self.adopt_checkpoint(inputs, cp.build(inputs))

    def adopt_checkpoint(self, inputs: cp.Inputs, built: tuple[cp.Checkpoint, bytes]) -> bool:
        """Keep a checkpoint built from `inputs` as this node's candidate and sign it (validators);
        False when the base moved meanwhile (another checkpoint got installed)."""
        checkpoint, state_json = built
        horizon = checkpoint["certificate"]["horizon"]
        if inputs.base_horizon != self.reducer.horizon or horizon <= self.reducer.horizon:
            return False
        self.candidates = {h: c for h, c in self.candidates.items() if h > self.reducer.horizon}
        while len(self.candidates) >= 3:
            del self.candidates[min(self.candidates)]
        self.candidates[horizon] = (checkpoint, state_json)
        certificate = checkpoint["certificate"]
        if self.node_id in self._certifiers(horizon):
            signature = cp.sign(self.identity, horizon, certificate["position_hash"], certificate["state_hash"])
            mine: cp.Certificate = {**certificate, "signatures": [signature]}
            self.add_checkpoint_signatures(mine)
        else:
            self._settle(certificate)
        return True

    def checkpoint_gossip(self) -> list[cp.Certificate]:
        """What to send every peer: the signatures held for checkpoints not certified yet (re-sent while
        they wait) and the certificate of the base (a node that lacks it then fetches the checkpoint)."""
        out = self.signatures.above(self.reducer.horizon)
        if self.checkpoint is not None:
            out.append(self.checkpoint["certificate"])
        return out

    def add_checkpoint_signatures(self, raw: Any) -> bool:
        """Merge validators' checkpoint signatures (each checked); True when a checkpoint got installed."""
        try:
            incoming = cp.parse_certificate(raw)
        except cp.CheckpointError:
            return False
        horizon = incoming["horizon"]
        if horizon <= self.reducer.horizon or self.state["genesis"] is None:
            return False
        if horizon > self.now_ms() + MAX_CLOCK_SKEW_MS:
            return False  # no honest validator can have taken it yet
        held = self.signatures.add(incoming, self._ever_validators())
        return held is not None and self._settle(held)

    def _settle(self, certificate: cp.Certificate) -> bool:
        """Install the checkpoint `certificate` names once it is certified (this node's own or, later, a peer's)."""
        key = (certificate["horizon"], certificate["position_hash"], certificate["state_hash"])
        held = self.signatures.held.get(key)
        if held is None or not cp.is_certified(held, self._certifiers(held["horizon"])):
            return False
        own = self.candidates.get(held["horizon"])
        if own is not None and own[0]["certificate"]["position_hash"] == held["position_hash"]:
            if own[0]["certificate"]["state_hash"] == held["state_hash"]:
                self._install({**own[0], "certificate": held}, own[1])
                return True
        if self.wanted is None or self.wanted["horizon"] < held["horizon"]:
            self.wanted = held
        return False

    def checkpoint_after(self, horizon: int) -> cp.Checkpoint | None:
        """The certified checkpoint, with its state, when it is newer than `horizon` (for a peer)."""
        if self.checkpoint is None or self.checkpoint["certificate"]["horizon"] <= horizon:
            return None
        return {**self.checkpoint, "state": json.loads(self._base_json)}

    def load_checkpoint(self, raw: Any) -> bool:
        """Install a certified checkpoint a peer sent, after checking it; False when it is refused or not newer."""
        try:
            checkpoint = cp.verify_checkpoint(raw, self.genesis_author)
        except cp.CheckpointError:
            self.stats["checkpoints_refused"] += 1
            return False
        if checkpoint["certificate"]["horizon"] <= self.reducer.horizon:
            return False
        self._install(checkpoint, None)
        return True

    def _install(self, checkpoint: cp.Checkpoint, state_json: bytes | None, persist: bool = True) -> None:
        """Make `checkpoint` the base: drop what it covers from memory and the WAL, refold the rest."""
        position = checkpoint["position"]
        horizon = position["horizon"]
        self._base_json = state_json or json.dumps(checkpoint["state"], separators=(",", ":")).encode()
        self.checkpoint = {k: checkpoint[k] for k in ("certificate", "position", "genesis")}  # type: ignore[assignment]
        self.genesis_event = checkpoint["genesis"]
        for author, seq in position["cut"].items():
            self.log.equivocations[author] = min(seq, self.log.equivocations.get(author, seq))
        before = len(self.log)
        heads = {a: (int(h[0]), str(h[1]), list(h[2])) for a, h in position["heads"].items()}
        self.log.compact(heads, set(position["anonymous"]))
        self.stats["checkpoint_events_dropped"] += before - len(self.log)
        self.reducer.rebase(self._base_json, horizon, checkpoint["state"])
        self.candidates = {h: c for h, c in self.candidates.items() if h > horizon}
        self.signatures.prune(horizon)
        if self.wanted is not None and self.wanted["horizon"] <= horizon:
            self.wanted = None
        self.stats["checkpoints_installed"] += 1
        self.stats["checkpoint_horizon"] = horizon
        if persist and self.data_dir is not None:
            parts = [b'"%s":%s' % (k.encode(), _json(checkpoint[k])) for k in ("certificate", "position", "genesis")]
            parts.append(b'"state":' + self._base_json)
            write_atomic(self.data_dir / "checkpoint.json", b"{" + b",".join(parts) + b"}")
            if self.events_file is not None:
                self.events_file.rewrite(self.log.all_events())
        self._refold()


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()
