"""The Ray actor of one network node: owns a NodeCore and moves its messages.

Transport inside a cluster is Ray actor calls: events are pushed to every peer as they
are created (and forwarded once by receivers), anti-entropy pulls whatever a peer has
that this node lacks, and Raft messages travel the same way. Checkpoint signatures are sent
to every peer until the checkpoint is certified; a node that needs a certified checkpoint it
cannot build itself (it missed events, or it is new) fetches it from the peer it pulls from. A test or the benchmark
can cut links with `set_blocked` to partition the network.

A validator of another cluster (joined over HTTP peering) takes part in Raft and ratification over
its peer link: the Raft messages and attestations addressed to it go out as signed envelopes
(`/peer/raft`, `/peer/attest`), and the Raft answers come back in the signed answer.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypedDict, TypeVar, cast

from cryptography.exceptions import InvalidTag

from actors.tasknet import checkpoint
from actors.tasknet.anonrelay import (
    MAX_OWN_BLOBS,
    MAX_SEALED_CHARS,
    MIN_PEERS_TWO_HOPS,
    Relay,
    blob_digest,
    relay_context,
    relay_pairs,
    relay_peers,
)
from actors.tasknet.canonical import canonical
from actors.tasknet.identity import verify
from actors.tasknet.ledger import Reject
from actors.tasknet.node import NodeCore
from actors.tasknet.pacing import EPSILON, Backoff, RaftClock
from actors.tasknet.peering import (
    MAX_PULL_EVENTS,
    MAX_PUSH_CHECKPOINTS,
    MAX_PUSH_EVENTS,
    Opened,
    Peer,
    PeerRegistry,
    check_attestation_batch,
    check_peer_url,
    check_proposal_request,
    check_raft_message,
    envelope,
    open_envelope,
)
from actors.tasknet.peerlink import PeerLink
from actors.tasknet.raft import LEADER, RaftCore, RaftMessage, RaftReply
from actors.tasknet.records import Attestation, Event, Notification, Payload
from actors.tasknet.rules_governance import proposal
from actors.tasknet.sealing import seal
from actors.tasknet.services import Host as ServiceHost
from actors.tasknet.services import NodeServices, Relayed
from actors.tasknet.settings import NodeSettings, election_ticks, heartbeat_ticks
from actors.tasknet.views import VIEWS, Host
from actors.tasknet.wal import write_atomic
from rayfleet.state import NAMESPACE, ActorHandle, call
from rayfleet.tasks import BackgroundTasks, Wake

P = ParamSpec("P")
R = TypeVar("R")

Answer = dict[str, Any]
"""An API call's answer across the actor boundary: `{result}`, or `{error, status}` (see `_error`)."""


class WhoAmI(TypedDict):
    node_id: str
    public_key: str
    name: str


def _error(exc: Reject) -> Answer:
    return {"error": exc.message, "status": exc.status}


class TaskNode:
    def __init__(self, name: str, data_dir: str | None, settings: NodeSettings) -> None:
        self.settings = settings
        self.core = NodeCore(name, Path(data_dir) if data_dir else None)
        self.core.checkpoint_interval_ms = int(float(settings.get("checkpoint_interval_s", 300.0)) * 1000)
        self.core.checkpoint_settle_ms = int(float(settings.get("checkpoint_settle_s", 120.0)) * 1000)
        self.core.raft_snapshot_entries = int(settings.get("raft_snapshot_entries", self.core.raft_snapshot_entries))
        tick = float(settings.get("raft_tick_s", 0.05))
        election_timeout = settings.get("raft_election_timeout_s")
        if election_timeout:  # in ticks of raft_tick_s, at least 4 (the config checks it)
            self.core.raft_election_ticks = election_ticks(float(election_timeout), tick)
        heartbeat = settings.get("raft_heartbeat_interval_s")
        if heartbeat:  # in ticks of raft_tick_s, at most half the election timeout (the config checks it)
            self.core.raft_heartbeat_ticks = heartbeat_ticks(float(heartbeat), tick)
        self.clock = RaftClock(tick)
        self._raft_wake = Wake()  # set when the Raft timer must wake before the deadline it sleeps to
        self._raft_deadline: float | None = None  # the deadline the Raft timer sleeps to (None: none)
        self.raft_timer_wakes = 0
        base = float(settings.get("anti_entropy_interval_s", 0.5))
        self.backoff = Backoff(base, max(base, float(settings.get("anti_entropy_max_interval_s", 4.0))))
        self._ae_wake = Wake()  # set to run an anti-entropy round now
        self._ae_version = -1  # the log's version after the last round (a change since resets the backoff)
        self._repair_from: str | None = None  # the peer the next round pulls from (it has what this node lacks)
        self.anti_entropy_rounds = 0
        self.anti_entropy_pulls = 0  # rounds whose digests differed, so that they pulled
        self.services = NodeServices(self.core, settings)
        self.peers: dict[str, ActorHandle[TaskNode]] = {}
        self.peer_ids: dict[str, str] = {}
        self.blocked: set[str] = set()
        self.messages_sent = 0
        self.messages_received = 0
        self.anonymous_relayed = 0  # anonymous votes this node entered (one hop, or as the exit relay)
        self.anonymous_forwarded = 0  # sealed votes this node passed on as the first relay
        self.anonymous_refused = 0  # sealed votes that did not open with this node's key
        self._own_blobs: set[str] = set()  # digests of the votes this node sealed (see anonrelay.py)
        self.rng = random.SystemRandom()  # relays and delays nobody can predict from earlier draws
        self._installing: asyncio.Task[int] | None = None
        self._checkpointing: asyncio.Task[bool] | None = None
        self.tasks = BackgroundTasks("tasknet")
        self._raft_waiters: dict[str, float] = {}
        self.registry = PeerRegistry(
            float(settings.get("peer_rate_per_s", 20.0)), float(settings.get("peer_burst", 40.0))
        )
        self.links: dict[str, PeerLink] = {}

    # ----- wiring
    async def connect(
        self,
        peers: dict[str, ActorHandle[TaskNode]],
        peer_ids: dict[str, str],
        genesis_author: str,
        actor_names: dict[str, str] | None = None,
    ) -> WhoAmI:
        """Give the node its peers' handles (name -> handle) and ids; start its loops once.

        With `actor_names` the wiring is saved, so a restarted actor reconnects by itself.
        """
        if actor_names and self.core.data_dir is not None:
            wiring = {"actors": actor_names, "ids": peer_ids, "genesis": genesis_author}
            write_atomic(self.core.data_dir / "wiring.json", json.dumps(wiring).encode())
        self.peers = {n: h for n, h in peers.items() if n != self.core.name}
        self.peer_ids = {n: i for n, i in peer_ids.items() if n != self.core.name}
        self.core.set_genesis_author(genesis_author)
        if not self.tasks.running:
            self.tasks.every(
                lambda: self.backoff.interval, self._anti_entropy_step, name="anti-entropy", wake=self._ae_wake
            )
            self.tasks.every(self._raft_pause, self._raft_step, name="raft-timer", wake=self._raft_wake)
            self._open_links()
        return await self.whoami()

    def _open_links(self) -> None:
        """One link per configured remote node, each with its own loop: join, then pull periodically."""
        interval = float(self.settings.get("anti_entropy_interval_s", 0.5))
        for peer in self.settings.get("peers", []):
            link = PeerLink(peer["url"], peer.get("node_id"), self.core.identity, self.core.now_ms)
            self.links[link.url] = link
            self.tasks.every(interval, functools.partial(self._link_step, link), name="peer-link", first_delay=0)

    async def _rewire(self) -> None:
        """After a restart (Ray restarts a crashed actor): reconnect from the saved wiring."""
        if self.tasks.running or self.core.data_dir is None:
            return
        path = self.core.data_dir / "wiring.json"
        import ray

        if not path.exists() or not ray.is_initialized():
            return

        wiring = json.loads(path.read_text())
        try:
            peers: dict[str, ActorHandle[TaskNode]] = {
                n: cast(ActorHandle[TaskNode], ray.get_actor(a, namespace=NAMESPACE))
                for n, a in wiring["actors"].items()
                if n != self.core.name
            }
        except ValueError:  # a peer is restarting too: the next call retries
            return
        await self.connect(peers, wiring["ids"], wiring["genesis"])

    async def whoami(self) -> WhoAmI:
        await self._rewire()
        return {"node_id": self.core.node_id, "public_key": self.core.identity.public_key, "name": self.core.name}

    async def bootstrap(self, validators: list[str]) -> bool:
        """Write the genesis (bootstrap node only, once)."""
        if self.core.state["genesis"] is not None:
            return False
        overrides = self.settings.get("network", {})
        self.core.submit("genesis", {"validators": sorted(validators), "config": overrides})
        await self._push()
        return True

    async def ensure_joined(self) -> bool:
        if self.core.node_id in self.core.state["nodes"] or self.core.state["genesis"] is None:
            return self.core.node_id in self.core.state["nodes"]
        core = self.core
        core.submit("join", {"name": core.name, "ring_key": core.ring_key.public, "seal_key": core.seal_key.public})
        await self._push()
        return True

    async def set_blocked(self, names: list[str]) -> None:
        """Cut the links to `names` (and heal the others); a change starts an anti-entropy round at once."""
        if set(names) != self.blocked:
            self.backoff.reset()
            self._ae_wake.set()
        self.blocked = set(names)

    # ----- gossip
    def _reachable(self) -> dict[str, ActorHandle[TaskNode]]:
        return {n: h for n, h in self.peers.items() if n not in self.blocked}

    async def _send(
        self,
        name: str,
        handle: ActorHandle[TaskNode],
        method: Callable[Concatenate[TaskNode, P], Awaitable[R]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R | None:
        self.messages_sent += 1
        try:
            return await call(handle, method, *args, **kwargs)
        except Exception:  # a dead or restarting peer: anti-entropy and Raft retries cover it
            return None

    async def _signal_peer(self, name: str, **kwargs: Any) -> Answer | None:
        """A signalling call on the peer `name` (its `call("signal", ...)`); None when it did not answer."""
        return await self._send(name, self.peers[name], TaskNode.call, "signal", **kwargs)

    async def _push(self, events: list[Event] | None = None, skip: str | None = None) -> None:
        if events is None:
            events, self.core.outbox = self.core.outbox, []
        if events and self.backoff.backed_off:  # a change after a quiet spell: anti-entropy rounds at base again
            self.backoff.reset()
            self._ae_wake.set()
        if not events or not self.settings.get("push_gossip", True):
            return
        rtc = self.services.signalling
        targets = []
        for name, handle in self._reachable().items():
            if name == skip:
                continue
            if not rtc.send_events(self.peer_ids.get(name, ""), events):
                targets.append((name, handle))
        for link in self.links.values():
            if link.remote_id and link.name != skip and link.name not in self.blocked:
                for start in range(0, len(events), MAX_PUSH_EVENTS):
                    self.tasks.start(link.push(list(events[start : start + MAX_PUSH_EVENTS])), name="peer-push")
        await asyncio.gather(*(self._send(n, h, TaskNode.receive_events, events, self.core.name) for n, h in targets))

    async def receive_events(self, events: list[Any], sender: str) -> int:
        await self._rewire()
        if sender.startswith("webrtc:"):
            sender = {i: n for n, i in self.peer_ids.items()}.get(sender[7:], sender)
        return len(self._accept(events, sender))

    def _accept(self, events: list[Any], sender: str) -> list[Event]:
        """Take gossiped events from `sender` (a peer name) and forward the new ones once to the others."""
        if sender in self.blocked:
            return []
        self.messages_received += 1
        fresh = self.core.receive(events)
        self.services.observe_propagation(fresh)
        if fresh:
            self.tasks.start(self._push(fresh, skip=sender), name="forward")
        return fresh

    async def pull(
        self,
        vector: dict[str, int],
        anon_ids: list[str],
        sender: str,
        heads: dict[str, str] | None = None,
        limit: int = 2000,
    ) -> list[Event]:
        if sender in self.blocked:
            return []
        self.messages_received += 1
        if self._lacks(vector, anon_ids) and sender in self.peers:  # the puller has more: pull from it now
            self._repair_from = sender
            self.backoff.reset()
            self._ae_wake.set()
        return self.core.log.missing_for(vector, set(anon_ids), limit=limit, heads=heads)

    def _lacks(self, vector: dict[str, int], anon_ids: list[str]) -> bool:
        """Whether the holder of `vector` and `anon_ids` holds an event this node does not."""
        log = self.core.log
        if any(int(seq) > log.top(author)[0] for author, seq in vector.items()):
            return True
        return any(i not in log.anonymous and i not in log.covered_anonymous for i in anon_ids)

    async def log_digest(self, digest: str, sender: str) -> str | None:
        """This node's log digest (`EventLog.digest`), for a peer's anti-entropy round to compare with its
        own; None when the link is cut. A different one makes this node's next round pull from `sender`."""
        if sender in self.blocked:
            return None
        self.messages_received += 1
        mine = self.core.log.digest()
        if digest != mine and sender in self.peers:
            self._repair_from = sender
        return mine

    def _pull_request(self) -> tuple[dict[str, int], list[str], dict[str, str]]:
        """What a pull presents: this node's version vector, its anonymous event ids and its chain heads."""
        return self.core.log.version_vector(), list(self.core.log.anonymous), self.core.log.heads()

    async def _anti_entropy_once(self) -> int:
        """One pull from a peer (the one known to hold more, else a random one); the events it brought.
        The pull is skipped when the peer's log digest equals this node's: nothing to repair."""
        reachable = self._reachable()
        if not reachable:
            return 0
        preferred, self._repair_from = self._repair_from, None
        name = preferred if preferred in reachable else random.choice(sorted(reachable))
        if self._needs_checkpoint():
            offered = await self._send(
                name, reachable[name], TaskNode.checkpoint_after, self.core.reducer.horizon, self.core.name
            )
            if offered:
                self.core.load_checkpoint(offered)
        else:
            mine = self.core.log.digest()
            theirs = await self._send(name, reachable[name], TaskNode.log_digest, mine, self.core.name)
            if theirs is None or theirs == mine:
                return 0
        self.anti_entropy_pulls += 1
        vector, anon_ids, heads = self._pull_request()
        missing = await self._send(name, reachable[name], TaskNode.pull, vector, anon_ids, self.core.name, heads)
        return len(self.core.receive(missing)) if missing else 0

    def _needs_checkpoint(self) -> bool:
        """A certified checkpoint this node cannot build (it missed events), or no genesis yet: ask a peer."""
        return self.core.wanted is not None or self.core.state["genesis"] is None

    async def _anti_entropy_step(self) -> None:
        await self.ensure_joined()
        await self._connect_webrtc()
        while await self._anti_entropy_once() >= 2000:
            pass
        self._send_attestations(self.core.unratified_attestations())
        self._checkpoint()
        self._send_checkpoint_signatures(self.core.checkpoint_gossip())
        await self._push()
        if self._installing is None or self._installing.done():
            self._installing = self.tasks.start(self.services.upgrades.install_ratified(), name="install-upgrades")
        self.anti_entropy_rounds += 1
        self._pace_anti_entropy()

    def _pace_anti_entropy(self) -> None:
        """After a round: back to `anti_entropy_interval_s` when anything changed since the last round or
        work still waits on the next ones (gaps in the log, a checkpoint to fetch, not joined yet,
        attestations or checkpoint signatures not complete yet); otherwise back off (pacing.Backoff)."""
        core = self.core
        busy = (
            core.log.version != self._ae_version
            or bool(core.log.pending)
            or self._needs_checkpoint()
            or core.node_id not in core.state["nodes"]
            or bool(core.unratified_attestations())
            or bool(core.signatures.above(core.reducer.horizon))
        )
        self._ae_version = core.log.version
        if busy:
            self.backoff.reset()
        else:
            self.backoff.quiet()

    async def _connect_webrtc(self) -> None:
        """The node with the smaller id offers a data channel to each reachable peer lacking one."""
        rtc = self.services.signalling
        if not rtc.enabled:
            return
        for name in self._reachable():
            peer_id = self.peer_ids.get(name, "")
            if (
                peer_id
                and self.core.node_id < peer_id
                and peer_id not in rtc.pcs
                and peer_id in self.core.state["nodes"]
            ):
                try:
                    await rtc.connect(self, peer_id)
                except Exception:  # retried next round
                    rtc.pcs.pop(peer_id, None)

    # ----- HTTP peering with nodes of other clusters (actors/tasknet/peering.py)
    async def _link_step(self, link: PeerLink) -> None:
        """Join the remote node if not yet joined, pull what this node lacks and push what the remote lacks
        (push-pull anti-entropy over HTTP); what arrives new is forwarded like a push from that peer."""
        if link.name in self.blocked:
            return
        if link.remote_id is None:
            if not await link.join(self.settings.get("advertise_url"), self.core.genesis_author):
                return
        if self._needs_checkpoint():
            offered = await link.checkpoint_after(self.core.reducer.horizon)
            if offered:
                self.core.load_checkpoint(offered)
        while True:
            vector, anon_ids, heads = self._pull_request()
            pulled = await link.pull(vector, anon_ids, heads)
            if link.name in self.blocked:
                return
            fresh = self._accept(pulled.events, link.name) if pulled.events else []
            if len(pulled.events) < MAX_PULL_EVENTS or not fresh:
                break
        lacking: list[Event] = []
        if pulled.vector is not None:
            lacking = self.core.log.missing_for(pulled.vector, set(pulled.anon_ids), limit=MAX_PULL_EVENTS)
        certificates = self.core.checkpoint_gossip()[:MAX_PUSH_CHECKPOINTS]
        for start in range(0, max(len(lacking), 1), MAX_PUSH_EVENTS):
            batch = lacking[start : start + MAX_PUSH_EVENTS]
            if batch or certificates:
                await link.push(batch, certificates)
                certificates = []

    async def peer_join(self, raw: Any) -> Answer:
        """A node of another cluster presents itself (a signed envelope); the answer is signed by this node."""
        try:
            opened = open_envelope(raw, "join", self.core.node_id, self.core.now_ms())
            url = opened.body.get("url")
            if url is not None:
                try:
                    url = check_peer_url(str(url)) if isinstance(url, str) else None
                except ValueError as exc:
                    raise Reject(f"join url: {exc}") from None
            self.registry.join(opened, url)
        except Reject as exc:
            return _error(exc)
        body = {"genesis_author": self.core.genesis_author, "name": self.core.name}
        return {"result": envelope(self.core.identity, "joined", opened.sender, body, self.core.now_ms())}

    async def peer_events(self, raw: Any) -> Answer:
        """A joined peer pushes a batch; each event is verified by the log, and the peer loses score for
        every forged or broken one (dropped below the floor)."""
        try:
            opened = open_envelope(raw, "events", self.core.node_id, self.core.now_ms())
            events = opened.body.get("events")
            if not isinstance(events, list):
                raise Reject("body.events must be a list of events")
            if len(events) > MAX_PUSH_EVENTS:
                raise Reject(f"a pushed batch holds at most {MAX_PUSH_EVENTS} events", 413)
            certificates = opened.body.get("checkpoints", [])
            if not isinstance(certificates, list) or len(certificates) > MAX_PUSH_CHECKPOINTS:
                raise Reject(f"body.checkpoints is a list of at most {MAX_PUSH_CHECKPOINTS} certificates")
            peer = self.registry.admit(opened)
        except Reject as exc:
            return _error(exc)
        invalid_before = self.core.stats["events_invalid"]
        fresh = self._accept(events, f"peer:{peer.node_id}")
        invalid = self.core.stats["events_invalid"] - invalid_before
        self.registry.penalize(peer, invalid)
        installed = await self.checkpoint_signatures(certificates, f"peer:{peer.node_id}") if certificates else 0
        return {
            "result": {
                "accepted": len(fresh),
                "invalid": invalid,
                "score": peer.score,
                "checkpoints_installed": installed,
            }
        }

    async def peer_checkpoint(self, raw: Any) -> Answer:
        """A joined peer asks for this node's certified checkpoint (with its state) when newer than its own."""
        try:
            opened = open_envelope(raw, "checkpoint", self.core.node_id, self.core.now_ms())
            horizon = opened.body.get("horizon")
            if type(horizon) is not int:
                raise Reject("body is {horizon: integer}")
            peer = self.registry.admit(opened)
        except Reject as exc:
            return _error(exc)
        return {"result": {"checkpoint": await self.checkpoint_after(horizon, f"peer:{peer.node_id}")}}

    async def peer_pull(self, raw: Any) -> Answer:
        """A joined peer presents its version vector; the answer holds what it lacks (at most MAX_PULL_EVENTS)."""
        try:
            opened = open_envelope(raw, "pull", self.core.node_id, self.core.now_ms())
            vector, anon_ids, heads = (opened.body.get(k) for k in ("vector", "anon_ids", "heads"))
            if not (
                isinstance(vector, dict)
                and all(isinstance(k, str) and type(v) is int for k, v in vector.items())
                and isinstance(anon_ids, list)
                and all(isinstance(i, str) for i in anon_ids)
                and isinstance(heads, dict)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in heads.items())
            ):
                raise Reject("body is {vector: {author: seq}, anon_ids: [id], heads: {author: event id}}")
            peer = self.registry.admit(opened)
        except Reject as exc:
            return _error(exc)
        events = await self.pull(vector, anon_ids, f"peer:{peer.node_id}", heads, limit=MAX_PULL_EVENTS)
        mine = {"vector": self.core.log.version_vector(), "anon_ids": sorted(self.core.log.anonymous)}
        return {"result": {"events": events, **(mine if f"peer:{peer.node_id}" not in self.blocked else {})}}

    def _from_validator(
        self, raw: Any, route: str, check: Callable[[dict[str, Any], str], R], not_validator: str
    ) -> tuple[Opened, Peer, R]:
        """Open an envelope for `route` from a joined peer that is a validator here (403 `not_validator`
        otherwise; 503 while the link to it is cut), its body checked by `check(body, signer)`: a
        malformed body (400) costs the peer score, as a forged event does."""
        opened = open_envelope(raw, route, self.core.node_id, self.core.now_ms())
        peer = self.registry.admit(opened)
        try:
            checked = check(opened.body, opened.sender)
        except Reject as exc:
            if exc.status == 400:
                self.registry.penalize(peer, 1)
            raise
        if opened.sender not in self.core.validators():
            raise Reject(not_validator, 403)
        if f"peer:{opened.sender}" in self.blocked:
            raise Reject("the link to this peer is cut", 503)
        return opened, peer, checked

    def _raft_body(self, body: dict[str, Any], sender: str) -> RaftMessage:
        if set(body) != {"message"}:
            raise Reject("body is {message: Raft message}")
        return check_raft_message(body["message"], sender, self.core.node_id)

    async def peer_raft(self, raw: Any) -> Answer:
        """A Raft message (any type) from a joined peer that is a validator here; the answer is an
        envelope signed by this node holding its Raft's answers to that peer (sent once persisted)."""
        try:
            opened, peer, msg = self._from_validator(
                raw, "raft", self._raft_body, "the sender is not a validator in this node's Raft configuration"
            )
            raft = self.core.raft_for(opened.sender)
            if raft is None:
                raise Reject("this node runs no Raft", 503)
            try:
                self._step_raft(raft, msg)
            except (KeyError, TypeError, ValueError, IndexError):
                self.registry.penalize(peer, 1)
                raise Reject("malformed Raft message") from None
        except Reject as exc:
            return _error(exc)
        self.messages_received += 1
        answers = raft.take_messages(to=opened.sender)
        await self._flush_raft()  # persists term, vote and log before the answers leave
        body = {"messages": answers}
        return {"result": envelope(self.core.identity, "raft_answer", opened.sender, body, self.core.now_ms())}

    async def peer_propose(self, raw: Any) -> Answer:
        """A proposal forwarded by a joined peer that is a validator here (its Raft follows this node,
        the leader); the answer is an envelope signed by this node holding what a local proposal
        answers: `{index, leader}` or the refusal `{error, status, retry}`."""
        try:
            opened, _, data = self._from_validator(
                raw, "propose", check_proposal_request, "proposals must be forwarded by a validator"
            )
            if self.core.raft is None or self.core.raft.role != LEADER:
                raise Reject("this node is not the Raft leader; retry shortly", 503)
        except Reject as exc:
            return _error(exc)
        self.messages_received += 1
        answer = await self._propose_as_leader(data)
        body = {"answer": answer}
        return {"result": envelope(self.core.identity, "propose_answer", opened.sender, body, self.core.now_ms())}

    async def peer_attest(self, raw: Any) -> Answer:
        """Attestations from a joined peer that is a validator (ratified, or added in Raft's configuration);
        each invalid one (malformed, a signature failing or by no node of the network) costs it score."""
        try:
            _, peer, attestations = self._from_validator(
                raw, "attest", check_attestation_batch, "attestations must be sent by a validator"
            )
        except Reject as exc:
            return _error(exc)
        self.messages_received += 1
        ratified, invalid = await self._take_attestations(attestations)
        self.registry.penalize(peer, invalid)  # forged or broken attestations cost score, as events do
        return {"result": {"ratified": ratified, "invalid": invalid}}

    async def peers_view(self) -> dict[str, Any]:
        """The remote nodes this node heard from (`inbound`) and the ones it dials (`links`)."""
        return {
            "inbound": [p.public() for p in self.registry.peers.values()],
            "links": [link.public() for link in self.links.values()],
        }

    # ----- anonymous votes enter the network elsewhere, through two relays
    async def relay_anonymous(self, event: Event) -> Relayed:
        """Enter an anonymous vote through two relays: sealed to the exit relay (X25519, an ephemeral
        key per vote, AES-GCM), handed to a first relay drawn from every reachable peer, a node actor
        here or the remote end of a joined peer link (`/peer/forward`), which learns only "a sealed
        blob for the exit" and forwards it; the exit opens it and gossips the vote after a random
        delay, knowing the vote but not the voter. With fewer than `MIN_PEERS_TWO_HOPS` reachable
        peers, one hop (`relay_hops: 1`): the relay knows whose vote it carries. With no peer taking
        it, 503: this node never enters its own vote. The relays' names are for the voter only."""
        peers = self._relay_peers()
        if not peers:
            raise Reject("no peer is reachable to carry the anonymous vote; retry shortly", 503)
        if len(peers) < MIN_PEERS_TWO_HOPS:
            return {"relayed_through": await self._one_hop(event, peers), "exit_relay": None, "relay_hops": 1}
        for first, exit_, seal_key in relay_pairs(self.core.node_id, peers, self._seal_keys(), self.rng):
            blob = self._seal(event, exit_.node_id, seal_key)
            if await self._hand_to_first(first, exit_.node_id, blob):
                return {"relayed_through": first.name, "exit_relay": exit_.name, "relay_hops": 2}
        raise Reject("no pair of relays took the anonymous vote; retry shortly", 503)

    def _relay_peers(self) -> list[Relay]:
        local = {n: self.peer_ids.get(n, "") for n in self._reachable()}
        return relay_peers(self.core.node_id, local, self._validator_links())

    def _seal_keys(self) -> dict[str, str]:
        """The X25519 seal key each joined node published (node id -> key): the nodes a vote can be sealed to."""
        return {i: str(n["seal_key"]) for i, n in self.core.state["nodes"].items() if n.get("seal_key")}

    def _seal(self, event: Event, exit_id: str, seal_key: str) -> str:
        """`event` sealed to `exit_id`; its digest is kept, so the blob bounced back here is refused."""
        blob = seal(seal_key, canonical(event), relay_context(exit_id))
        if len(self._own_blobs) >= MAX_OWN_BLOBS:
            self._own_blobs.clear()
        self._own_blobs.add(blob_digest(blob))
        return blob

    async def _hand_to_first(self, first: Relay, exit_id: str, blob: str) -> bool:
        """Hand a sealed vote to the first relay (a node actor call, or `/peer/forward` over its link)."""
        if first.remote:
            link = self._validator_links().get(first.node_id)
            return link is not None and await link.forward(exit_id, blob)
        handle = self._reachable().get(first.name)
        if handle is None:
            return False
        return await self._send(first.name, handle, TaskNode.forward_sealed, exit_id, blob, self.core.name) is True

    async def _one_hop(self, event: Event, peers: list[Relay]) -> str:
        """Hand the vote to a random reachable peer, which gossips it after a random delay (sealed to
        it when it is the remote end of a link); the name of the peer that took it, 503 if none did."""
        seal_keys = self._seal_keys()
        for relay in self.rng.sample(peers, k=len(peers)):
            if relay.remote:
                link, key = self._validator_links().get(relay.node_id), seal_keys.get(relay.node_id)
                if link is not None and key and await link.anonymous(self._seal(event, relay.node_id, key)):
                    return relay.name
                continue
            handle = self._reachable().get(relay.name)
            if handle is not None and await self._send(relay.name, handle, TaskNode.inject_anonymous, event) is True:
                return relay.name
        raise Reject("no peer took the anonymous vote; retry shortly", 503)

    def _relay_refusal(self, exit_id: Any, blob: Any, sender_id: str) -> Reject | None:
        """Why this node, as a first relay, does not pass `blob` on to `exit_id` for `sender_id`: a
        malformed hand-off, an exit that is this node or the sender (the voter's node is never its
        vote's exit), or a blob this node sealed itself (bounced back: it never carries its own vote)."""
        if not isinstance(exit_id, str) or not isinstance(blob, str) or len(blob) > MAX_SEALED_CHARS:
            return Reject(f"body is {{exit_id: node id, blob: a sealed vote of at most {MAX_SEALED_CHARS} chars}}")
        if exit_id == self.core.node_id:
            return Reject("the exit relay is never the first relay")
        if exit_id == sender_id:
            return Reject("the exit relay is never the voter's node")
        if blob_digest(blob) in self._own_blobs:
            return Reject("this node sealed that vote: it never relays its own", 403)
        return None

    async def forward_sealed(self, exit_id: str, blob: Any, sender: str) -> bool:
        """The first relay (a node actor's call): pass a sealed vote on to the exit relay `exit_id`
        (a node actor here, or the remote end of a peer link); it cannot open it. Whether the exit took it."""
        await self._rewire()
        if sender in self.blocked or self._relay_refusal(exit_id, blob, self.peer_ids.get(sender, "")):
            return False
        self.messages_received += 1
        return await self._forward_to_exit(exit_id, blob)

    async def peer_forward(self, raw: Any) -> Answer:
        """The first relay over HTTP peering: a joined peer hands on a vote sealed to `exit_id`;
        `{forwarded}` says whether the exit took it (false: this node reaches no such exit). A
        malformed or refused hand-off costs the peer score, as a forged event does."""
        try:
            opened = open_envelope(raw, "forward", self.core.node_id, self.core.now_ms())
            peer = self.registry.admit(opened)
            if f"peer:{peer.node_id}" in self.blocked:
                raise Reject("the link to this peer is cut", 503)
            body = opened.body
            refusal = self._relay_refusal(body.get("exit_id"), body.get("blob"), opened.sender)
            if set(body) != {"exit_id", "blob"} or refusal is not None:
                self.registry.penalize(peer, 1)
                raise refusal or Reject("body is {exit_id, blob}")
            self.messages_received += 1
        except Reject as exc:
            return _error(exc)
        return {"result": {"forwarded": await self._forward_to_exit(body["exit_id"], body["blob"])}}

    async def _forward_to_exit(self, exit_id: str, blob: str) -> bool:
        self.anonymous_forwarded += 1
        name = {i: n for n, i in self.peer_ids.items()}.get(exit_id)
        handle = self._reachable().get(name) if name is not None else None
        if name is not None and handle is not None:
            return await self._send(name, handle, TaskNode.open_sealed, blob, self.core.name) is True
        link = self._validator_links().get(exit_id)
        return await link.anonymous(blob) if link is not None else False

    async def open_sealed(self, blob: Any, sender: str) -> bool:
        """The exit relay (a node actor's call): open a sealed vote and enter it after a random delay."""
        await self._rewire()
        if sender in self.blocked:
            return False
        self.messages_received += 1
        return self._open_sealed(blob)

    async def peer_anonymous(self, raw: Any) -> Answer:
        """The exit relay over HTTP peering: a joined peer hands on a sealed vote addressed to this node;
        one that does not open for this node's seal key costs the peer score, as a forged event does."""
        try:
            opened = open_envelope(raw, "anonymous", self.core.node_id, self.core.now_ms())
            peer = self.registry.admit(opened)
            if f"peer:{peer.node_id}" in self.blocked:
                raise Reject("the link to this peer is cut", 503)
            self.messages_received += 1
            if set(opened.body) != {"blob"} or not self._open_sealed(opened.body["blob"]):
                self.registry.penalize(peer, 1)
                raise Reject("body is {blob: a vote sealed to this node}")
        except Reject as exc:
            return _error(exc)
        return {"result": {"accepted": True}}

    def _open_sealed(self, blob: Any) -> bool:
        """Open a vote sealed to this node and enter it after a random delay; False (counted in
        `anonymous_blobs_refused`) for a blob that does not open with this node's key or holds no
        anonymous vote. A blob sent again enters nothing more: its event is already in the log."""
        try:
            if not isinstance(blob, str) or len(blob) > MAX_SEALED_CHARS:
                raise ValueError("not a sealed blob")
            event = json.loads(self.core.seal_key.open(blob, relay_context(self.core.node_id)))
        except (ValueError, TypeError, InvalidTag):
            self.anonymous_refused += 1
            return False
        if not isinstance(event, dict) or event.get("type") != "anon_vote":
            self.anonymous_refused += 1
            return False
        self._enter_after_delay(cast(Event, event))
        return True

    async def inject_anonymous(self, event: Event) -> bool:
        self._enter_after_delay(event)
        return True

    def _enter_after_delay(self, event: Event) -> None:
        self.anonymous_relayed += 1
        delay = self.rng.uniform(0, float(self.settings.get("anonymous_relay_max_delay_s", 2.0)))
        self.tasks.start(self._enter_later(event, delay), name="anonymous-relay")

    async def _enter_later(self, event: Event, delay: float) -> None:
        await asyncio.sleep(delay)
        fresh = self.core.receive([event])
        if fresh:
            await self._push(fresh)

    # ----- Raft
    async def _raft_step(self) -> None:
        """The Raft timer's turn: apply the ticks due (pacing.RaftClock) and send what they produced."""
        self.raft_timer_wakes += 1
        raft = self.core.ensure_raft()
        if raft is not None:
            self.clock.catch_up(raft)
            await self._flush_raft()

    def _raft_pause(self) -> float | None:
        """How long the Raft timer sleeps: until the next tick that does something (None: until woken);
        before this node has a Raft, it looks again every `anti_entropy_interval_s`."""
        raft = self.core.raft
        if raft is None:
            self._raft_deadline = None
            return self.backoff.base
        self._raft_deadline = self.clock.deadline(raft)
        return self.clock.delay(raft)

    def _rearm_raft(self, raft: RaftCore) -> None:
        """Wake the Raft timer when its next deadline came earlier than the one it sleeps to: this node
        now leads (a heartbeat is due), a learner became a voter, or a heartbeat drew a shorter election
        timeout (RaftCore draws one at each). A later deadline needs no wake: the timer wakes at the old
        one, finds nothing due and sleeps again."""
        at = self.clock.deadline(raft)
        if at is not None and (self._raft_deadline is None or at < self._raft_deadline - EPSILON):
            self._raft_wake.set()

    def _step_raft(self, raft: RaftCore, msg: RaftMessage) -> RaftReply | None:
        """Step one message after the ticks due so far (a timer it resets restarts from now)."""
        self.clock.catch_up(raft)
        return raft.step(msg)

    async def _flush_raft(self) -> None:
        raft = self.core.raft
        if raft is None:
            return
        self.core.persist_raft()
        by_id = {i: n for n, i in self.peer_ids.items()}
        links = self._validator_links()
        for msg in raft.take_messages():
            name = by_id.get(msg["to"])
            if name and name not in self.blocked and name in self.peers:
                self.tasks.start(self._raft_call(name, msg), name="raft-send")
            elif msg["to"] in links:
                self.tasks.start(self._raft_over_link(links[msg["to"]], msg), name="raft-link")
        self._rearm_raft(raft)
        committed_before = self.core.state["last_ratified_index"]
        self.core.apply_committed()
        self._send_attestations(self.core.take_attestations())
        if self.core.state["last_ratified_index"] != committed_before or self.core.outbox:
            self.services.observe_commits(self._raft_waiters)
            await self._push()

    async def _raft_call(self, name: str, msg: RaftMessage) -> None:
        """Send `msg` to the node actor `name`; its answers come back as the call's result (one call per
        message: a heartbeat and its acknowledgement are one round trip) and are stepped here."""
        answers = await self._send(name, self.peers[name], TaskNode.raft_step, msg, self.core.name)
        raft = self.core.raft
        if not answers or raft is None or name in self.blocked:
            return
        self.messages_received += 1
        for answer in answers:
            self._step_raft(raft, answer)
        await self._flush_raft()

    def _validator_links(self) -> dict[str, PeerLink]:
        """The joined, unblocked links to nodes of other clusters, by remote node id: the HTTP path of
        Raft messages and attestations to a validator (or a learner) that is not a node actor here."""
        return {
            link.remote_id: link
            for link in self.links.values()
            if link.remote_id and link.name not in self.blocked and link.remote_id not in self.peer_ids.values()
        }

    async def _raft_over_link(self, link: PeerLink, msg: RaftMessage) -> None:
        """Send `msg` over `link`; step the Raft answers the remote signed (the link checked them: from
        that node, for this one, well formed), as the actor path steps the answers that come back as calls."""
        answer = await link.raft(msg)
        raft = self.core.raft
        if not answer or raft is None or link.name in self.blocked:
            return
        stepped = 0
        for reply in answer:
            try:
                self._step_raft(raft, reply)
            except (KeyError, TypeError, ValueError, IndexError):
                link.failed("raft", "answer refused: malformed")
                continue
            stepped += 1
        if stepped:
            self.messages_received += 1
            await self._flush_raft()

    def _send_attestations(self, attestations: list[Attestation]) -> None:
        if not attestations:
            return
        validators = self.core.validators()  # with a validator added in Raft, not ratified yet
        for name, handle in self._reachable().items():
            if self.peer_ids.get(name) in validators:
                self.tasks.start(
                    self._send(name, handle, TaskNode.attest, attestations, self.core.name), name="attest-send"
                )
        for node_id, link in self._validator_links().items():
            if node_id in validators:
                self.tasks.start(link.attest(attestations), name="attest-link")

    def _checkpoint(self) -> None:
        """Start building the checkpoint now due, in a worker thread (folding and hashing a large state
        takes seconds: the event loop keeps serving gossip and Raft meanwhile)."""
        if self._checkpointing is not None and not self._checkpointing.done():
            return
        horizon = self.core.checkpoint_due()
        if horizon:
            inputs = self.core.checkpoint_inputs(horizon)
            self._checkpointing = self.tasks.start(self._build_checkpoint(inputs), name="checkpoint")

    async def _build_checkpoint(self, inputs: checkpoint.Inputs) -> bool:
        built = await asyncio.to_thread(checkpoint.build, inputs)
        return self.core.adopt_checkpoint(inputs, built)

    def _send_checkpoint_signatures(self, certificates: list[Any]) -> None:
        if not certificates:
            return
        for name, handle in self._reachable().items():
            self.tasks.start(
                self._send(name, handle, TaskNode.checkpoint_signatures, certificates, self.core.name),
                name="checkpoint-send",
            )

    async def checkpoint_signatures(self, certificates: list[Any], sender: str) -> int:
        """Validators' checkpoint signatures; a majority on one (position, state hash) installs it."""
        await self._rewire()
        if sender in self.blocked:
            return 0
        self.messages_received += 1
        return sum(1 for c in certificates[:16] if self.core.add_checkpoint_signatures(c))

    async def checkpoint_after(self, horizon: int, sender: str) -> Any:
        """This node's certified checkpoint (with its state) when newer than `horizon`, else None."""
        if sender in self.blocked:
            return None
        self.messages_received += 1
        return self.core.checkpoint_after(int(horizon))

    async def attest(self, attestations: list[Any], sender: str) -> int:
        """Validators' signatures over committed Raft entries; a majority makes the `ratified` event."""
        await self._rewire()
        if sender in self.blocked:
            return 0
        self.messages_received += 1
        ratified, _ = await self._take_attestations(attestations)
        return ratified

    async def _take_attestations(self, attestations: list[Any]) -> tuple[int, int]:
        """Merge up to 64 attestations: how many ratified their entry, and how many were invalid."""
        outcomes = [self.core.merge_attestation(att) for att in attestations[:64]]
        ratified = outcomes.count("ratified")
        if ratified:
            self.services.observe_commits(self._raft_waiters)
            await self._push()
        return ratified, outcomes.count("invalid")

    async def attest_http(self, body: dict[str, Any]) -> dict[str, Any]:
        """Attestations from the HTTP API: the envelope signed by a validator's key (one check before
        the attestations' own signatures, each verified against the set in force at its entry)."""
        sender = str(body.get("sender", ""))
        if not self._signed_by_validator(sender, body):
            return {"error": "attestations must be sent and signed by a validator", "status": 403}
        self.messages_received += 1
        ratified, _ = await self._take_attestations(list(body.get("attestations") or []))
        return {"result": {"ratified": ratified}}

    def _signed_by_validator(self, sender: str, body: dict[str, Any]) -> bool:
        """Whether `sender` is a validator (ratified or in Raft's configuration) and signed `body`."""
        record = self.core.state["nodes"].get(sender)
        if sender not in self.core.validators() or not record:
            return False
        unsigned = {k: v for k, v in body.items() if k != "signature"}
        return verify(record["public_key"], canonical(unsigned), str(body.get("signature", "")))

    async def raft_step(self, msg: RaftMessage, sender: str) -> list[RaftMessage]:
        """A Raft message from the node actor `sender`; the answers to it (sent once persisted)."""
        await self._rewire()
        if sender in self.blocked:
            return []
        origin = str(msg.get("from", ""))
        raft = self.core.raft_for(origin)
        if raft is None:
            return []
        self.messages_received += 1
        self._step_raft(raft, msg)
        answers = raft.take_messages(to=origin)
        await self._flush_raft()  # persists term, vote and log before the answers leave
        return answers

    async def raft_http(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        """A Raft message from the HTTP API: it must be signed by a validator's key."""
        raft = self.core.ensure_raft()
        if raft is None:
            return {"error": "this node is not a validator", "status": 503}
        sender = body.get("candidate_id") if kind == "request_vote" else body.get("leader_id")
        if sender not in self.core.state["config"]["validator_set"]:
            return {"error": "sender is not a validator", "status": 403}
        if not self._signed_by_validator(str(sender), body):
            return {"error": "Raft message signature invalid", "status": 403}
        unsigned = {k: v for k, v in body.items() if k != "signature"}
        try:
            message = cast(RaftMessage, {"type": kind, "from": sender, "to": self.core.node_id, **unsigned})
            reply = self._step_raft(raft, message)
        except (KeyError, TypeError, ValueError, IndexError):
            return {"error": "malformed Raft message", "status": 400}
        await self._flush_raft()
        return {"result": reply}

    async def raft_status(self) -> Mapping[str, object]:
        raft = self.core.ensure_raft()
        if raft is None and self.core.raft_error:
            return {"node_id": self.core.node_id, "role": "stopped", "error": self.core.raft_error}
        return raft.status() if raft else {"node_id": self.core.node_id, "role": "not a validator"}

    async def raft_propose(self, data: dict[str, Any]) -> dict[str, Any]:
        """Propose on the leader (forwarded there when this node is not it)."""
        raft = self.core.ensure_raft()
        if raft is None:
            return {"error": "only validators ratify", "status": 403}
        if raft.role == LEADER:
            return await self._propose_as_leader(data)
        by_id = {i: n for n, i in self.peer_ids.items()}
        leader = by_id.get(raft.leader_id or "")
        links = self._validator_links()
        if raft.leader_id in links:  # a node of another cluster: forwarded over the peer link, signed
            answer = await links[raft.leader_id].propose(data)
            return answer or {"error": "the Raft leader did not answer over the peer link", "status": 503}
        if leader is None or leader in self.blocked:
            return {"error": "no Raft leader reachable; retry shortly", "status": 503}
        result = await self._send(leader, self.peers[leader], TaskNode.raft_propose, data)
        return result or {"error": "the Raft leader did not answer", "status": 503}

    async def _propose_as_leader(self, data: dict[str, Any]) -> dict[str, Any]:
        """Append the proposal's Raft entry on this node, the leader: `{index, leader}`, or the refusal
        `{error, status, retry}` (the same whether it was proposed here, by a node actor or over a link)."""
        unreachable = self._unreachable_addition(data)
        if unreachable:
            return {"error": unreachable, "status": 409, "retry": False}
        if self.core.raft is not None:
            self.clock.catch_up(self.core.raft)  # "heard within an election timeout" counts to now
        try:
            index = self.core.raft_propose(data)
        except Reject as exc:
            return {"error": exc.message, "status": exc.status, "retry": exc.status == 503}
        self._raft_waiters[data["proposal_id"]] = time.perf_counter()
        await self._flush_raft()
        return {"index": index, "leader": self.core.node_id}

    def _unreachable_addition(self, data: dict[str, Any]) -> str | None:
        """Why the validator a `validator_change` adds cannot be replicated to from this leader (it is
        neither a node actor here nor the remote end of a joined peer link), or None."""
        try:
            prop = proposal(self.core.state, data)
        except Reject:
            return None  # core.raft_propose answers it
        params = prop.get("params") or {}
        if prop["proposal_type"] != "validator_change" or params.get("action") != "add":
            return None
        node_id = params.get("node_id")
        if node_id in self.peer_ids.values() or node_id == self.core.node_id or node_id in self._validator_links():
            return None
        return (
            f"validator {node_id} is not reachable from the Raft leader: not a node actor of this cluster "
            "and no joined peer link to it (configure `peers` on the validators)"
        )

    # ----- API surface
    async def submit(self, type_: str, payload: Payload, channel: str) -> Answer:
        await self._rewire()
        try:
            _, result = self.core.submit(type_, payload, channel)
        except Reject as exc:
            return _error(exc)
        await self._push()
        return {"result": result}

    async def call(self, service: str, /, **kwargs: Any) -> Answer:
        """A node-local service (votes, ratify, tools, agent, upgrades, evolution, signalling)."""
        try:
            host: ServiceHost = self
            result = await getattr(self.services, service)(host, **kwargs)
        except Reject as exc:
            return _error(exc)
        await self._push()
        return {"result": result}

    async def view(self, name: str, /, **kwargs: Any) -> Answer:
        try:
            host: Host = self
            return {"result": VIEWS[name](host, **kwargs)}
        except Reject as exc:
            return _error(exc)

    async def wait_notifications(self, cursor: int, timeout: float) -> tuple[int, list[tuple[str, Notification]]]:
        """New notifications after `cursor`, waiting up to `timeout` s for the first one."""
        deadline = time.monotonic() + timeout
        while True:
            current, items = self.core.notifications_since(cursor)
            remaining = deadline - time.monotonic()
            if items or remaining <= 0:
                return current, items
            waiter = asyncio.Event()
            self.core.listeners.add(waiter.set)
            try:
                await asyncio.wait_for(waiter.wait(), remaining)
            except TimeoutError:
                pass
            finally:
                self.core.listeners.discard(waiter.set)

    async def stop(self) -> None:
        """Stop the loops, the peer links and the services, then close events.log and raft.log
        (idempotent: a second stop finds nothing left to close)."""
        await self.tasks.stop()
        for link in self.links.values():
            await link.close()
        await self.services.close()
        self.core.close()
