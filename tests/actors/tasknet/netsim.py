"""A small in-memory network of NodeCores for tier-1 tests."""

from __future__ import annotations

import time
from typing import Any

from actors.tasknet.canonical import digest
from actors.tasknet.events import make_event
from actors.tasknet.node import NodeCore
from actors.tasknet.records import Event


def comparable(state: dict[str, Any]) -> str:
    """The replicated part of a state (what every node must agree on)."""
    return digest({k: v for k, v in state.items() if k not in ("applied", "rejected")})


class ManualClock:
    """A wall clock (ms) the test moves forward; every node of a network reads the same one."""

    def __init__(self) -> None:
        self.ms = int(time.time() * 1000)

    def __call__(self) -> int:
        return self.ms

    def advance(self, seconds: float) -> None:
        self.ms += int(seconds * 1000)


def make_network(
    size: int,
    faucet: int = 1000,
    data_dirs: list | None = None,
    clock: ManualClock | None = None,
    config: dict[str, Any] | None = None,
    validators: int | None = None,
) -> list[NodeCore]:
    """`size` nodes, the first `validators` of them (all by default) the genesis validators."""
    nodes = [NodeCore(f"n{i + 1}", data_dirs[i] if data_dirs else None, now_ms=clock) for i in range(size)]
    boot = nodes[0]
    for node in nodes:
        node.set_genesis_author(boot.node_id)
    genesis_config = {"faucet_sp": faucet, **(config or {})}
    boot.submit("genesis", {"validators": [n.node_id for n in nodes[:validators]], "config": genesis_config})
    for node in nodes[1:]:
        node.receive(boot.outbox)
    for node in nodes:
        node.submit("join", {"name": node.name, "ring_key": node.ring_key.public, "seal_key": node.seal_key.public})
    sync(nodes)
    return nodes


def sync(nodes: list[NodeCore]) -> None:
    """Deliver every event to every node (anti-entropy to a fixed point)."""
    for _ in range(3):
        for a in nodes:
            for b in nodes:
                if a is not b:
                    vector, anon, heads = b.log.version_vector(), set(b.log.anonymous), b.log.heads()
                    b.receive(a.log.missing_for(vector, anon, limit=10**9, heads=heads))


def apply_and_attest(node: NodeCore, nodes: list[NodeCore]) -> None:
    """`node` applies what its Raft committed and hands its attestations to every other node."""
    node.apply_committed()
    for attestation in node.take_attestations():
        for other in nodes:
            if other is not node:
                other.add_attestation(attestation)


def forge(node: NodeCore, type_: str, payload: dict[str, Any]) -> Event:
    """An event signed by `node` that skips its own validation (what a dishonest node gossips)."""
    chain = node.log.chains[node.node_id]
    hlc = [max(chain[-1]["hlc"][0] + 1, node.clock.tick()[0]), 0]
    return make_event(node.identity, len(chain) + 1, chain[-1]["id"], hlc, "general", type_, payload)


def schedules(ops: list[str], actors: int, max_size: int) -> Any:
    """A hypothesis strategy of random schedules: (op, actor, target, amount) tuples."""
    from hypothesis import strategies as st

    step = st.tuples(st.sampled_from(ops), st.integers(0, actors - 1), st.integers(0, 50), st.integers(0, 300))
    return st.lists(step, min_size=5, max_size=max_size)


def checkpoint_round(nodes: list[NodeCore], interval_ms: int = 1000, settle_ms: int = 500) -> None:
    """Every node takes the checkpoint now due and the validators' signatures reach every node."""
    for node in nodes:
        node.checkpoint_interval_ms, node.checkpoint_settle_ms = interval_ms, settle_ms
        node.maybe_checkpoint()
    signatures = [(node, node.checkpoint_gossip()) for node in nodes]
    for sender, certificates in signatures:
        for node in nodes:
            if node is not sender:
                for certificate in certificates:
                    node.add_checkpoint_signatures(certificate)
