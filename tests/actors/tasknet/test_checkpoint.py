"""Checkpoints: a node signs its folded state at a horizon; a checkpoint that a majority of the
genesis validators signed (same position, same state hash) becomes the base: the events it covers
are dropped from memory and from events.log, a late event refolds only what follows it, and a
restarted or new node loads it and replays the tail, reaching the state of a node that folded
everything. Anything less than a majority of distinct validators, or a state that is not the one
they signed, is never loaded."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest

from actors.tasknet import checkpoint as cp
from actors.tasknet.canonical import canonical
from actors.tasknet.events import make_event
from actors.tasknet.identity import Identity
from actors.tasknet.node import NodeCore
from actors.tasknet.wal import RecordLog
from tests.actors.tasknet.netsim import ManualClock, checkpoint_round, comparable, make_network, sync


@pytest.fixture()
def clock():
    return ManualClock()


def observer(boot: NodeCore, clock: ManualClock, data_dir=None) -> NodeCore:
    """A node that folds everything from genesis and never checkpoints (the reference)."""
    node = NodeCore("observer", data_dir, now_ms=clock)
    node.set_genesis_author(boot.node_id)
    return node


def busy(nodes: list[NodeCore], rounds: int, clock: ManualClock) -> None:
    for i in range(rounds):
        for node in nodes:
            node.submit("task_create", {"title": f"{node.name}-{i}", "reward": 3})
            clock.advance(0.05)
        sync(nodes)


def certified_network(clock: ManualClock, size: int = 3, data_dirs=None) -> tuple[list[NodeCore], int]:
    """A network whose nodes installed a certified checkpoint; its horizon."""
    nodes = make_network(size, clock=clock, data_dirs=data_dirs)
    busy(nodes, 5, clock)
    clock.advance(2)
    checkpoint_round(nodes)
    horizon = nodes[0].reducer.horizon
    assert horizon > 0 and all(n.reducer.horizon == horizon for n in nodes)
    return nodes, horizon


def own_certificate(node: NodeCore) -> cp.Certificate:
    """The node's own signed certificate for the checkpoint due now (not delivered anywhere)."""
    node.checkpoint_interval_ms, node.checkpoint_settle_ms = 1000, 500
    assert node.maybe_checkpoint()
    (certificate,) = node.checkpoint_gossip()
    return certificate


def test_a_majority_certified_checkpoint_is_the_base_and_equals_the_full_fold(clock):
    nodes = make_network(3, clock=clock)
    busy(nodes, 5, clock)
    reference = observer(nodes[0], clock)
    sync([*nodes, reference])
    held = len(nodes[0].log)
    clock.advance(2)
    checkpoint_round(nodes)
    for node in nodes:
        assert node.stats["checkpoints_installed"] == 1
        assert len(node.log) == 0 and node.stats["checkpoint_events_dropped"] == held
        assert comparable(node.state) == comparable(reference.state)
    busy(nodes, 2, clock)
    sync([*nodes, reference])
    assert {comparable(n.state) for n in [*nodes, reference]} == {comparable(reference.state)}


def signed_by_two(size: int, clock: ManualClock) -> tuple[list[NodeCore], list[cp.Certificate]]:
    """A network of `size` validators where the first two signed the checkpoint due (and sent nothing)."""
    nodes = make_network(size, clock=clock)
    busy(nodes, 2, clock)
    clock.advance(2)
    return nodes, [own_certificate(n) for n in nodes[:2]]


def test_one_validator_alone_or_exactly_half_does_not_certify(clock):
    nodes, certificates = signed_by_two(4, clock)
    target = nodes[3]
    target.add_checkpoint_signatures(certificates[0])
    assert target.reducer.horizon == 0 and target.wanted is None
    target.add_checkpoint_signatures(certificates[1])  # 2 of 4: half is not a majority
    assert target.reducer.horizon == 0 and target.wanted is None
    assert target.stats["checkpoints_installed"] == 0 and len(target.log) > 0
    own_certificate(target)  # its own signature makes 3 of 4
    assert target.reducer.horizon == certificates[0]["horizon"] and len(target.log) == 0


def test_the_same_signature_repeated_or_a_forged_signer_does_not_count(clock):
    nodes = make_network(3, clock=clock)
    busy(nodes, 2, clock)
    clock.advance(2)
    certificate = own_certificate(nodes[0])
    signature = certificate["signatures"][0]
    stranger = Identity.generate()
    strange = cp.sign(stranger, certificate["horizon"], certificate["position_hash"], certificate["state_hash"])
    claimed = {**strange, "by": nodes[1].node_id}  # a non-validator's key claiming a validator's id
    stolen = {**signature, "by": nodes[2].node_id}  # a validator's signature relabelled
    forged = {**certificate, "signatures": [signature, dict(signature), strange, claimed, stolen]}
    validators = nodes[0].state["config"]["validator_set"]
    assert cp.signers(forged, validators) == {nodes[0].node_id}
    assert not cp.is_certified(forged, validators)
    nodes[1].add_checkpoint_signatures(forged)
    assert nodes[1].reducer.horizon == 0


def test_a_checkpoint_whose_state_does_not_match_its_signed_hash_is_refused(clock):
    nodes, horizon = certified_network(clock)
    good = nodes[0].checkpoint_after(0)
    assert good is not None
    newcomer = observer(nodes[0], clock)
    tampered = copy.deepcopy(good)
    tampered["state"]["nodes"][nodes[1].node_id]["balance"] += 500
    assert not newcomer.load_checkpoint(tampered)
    moved = copy.deepcopy(good)
    moved["position"]["heads"][nodes[1].node_id][0] -= 1  # claims to cover one event fewer
    assert not newcomer.load_checkpoint(moved)
    minority = copy.deepcopy(good)
    minority["certificate"]["signatures"] = minority["certificate"]["signatures"][:1]
    assert not newcomer.load_checkpoint(minority)
    assert newcomer.reducer.horizon == 0 and newcomer.stats["checkpoints_refused"] == 3
    assert newcomer.load_checkpoint(good)
    assert newcomer.reducer.horizon == horizon


def test_a_checkpoint_from_another_genesis_is_refused_even_fully_signed(clock):
    nodes, _ = certified_network(clock)
    rogue, _ = certified_network(ManualClock())  # its own bootstrap node, validators and signatures
    foreign = rogue[0].checkpoint_after(0)
    newcomer = observer(nodes[0], clock)
    assert not newcomer.load_checkpoint(foreign)
    assert newcomer.reducer.horizon == 0


def test_a_late_event_newer_than_the_horizon_refolds_only_from_the_checkpoint(clock):
    nodes, _ = certified_network(clock)
    a, b, c = nodes
    busy(nodes, 3, clock)  # the tail: 9 events after the checkpoint
    tail = len(c.log)
    assert tail == 9
    chain = b.log.chains[b.node_id]
    late = make_event(
        b.identity,
        chain[-1]["seq"] + 1,
        chain[-1]["id"],
        [chain[-1]["hlc"][0], 99],
        "general",
        "skills_set",
        {"skills": ["late"]},
    )
    clock.advance(1)
    a.submit("task_create", {"title": "after the late one", "reward": 1})
    c.receive([a.outbox[-1]])
    folded, refolds = c.reducer.folded, c.stats["refolds"]
    c.receive([late])
    assert c.stats["refolds"] == refolds + 1
    assert c.reducer.folded - folded == tail + 2  # the tail and the two new ones, not the whole history
    assert c.state["skills"][b.node_id]["skills"] == ["late"]


def test_a_late_event_older_than_the_horizon_is_folded_after_the_checkpoint(clock):
    nodes = make_network(3, clock=clock)
    a, b, c = nodes
    busy(nodes, 3, clock)
    _, task = a.submit("task_create", {"title": "contested", "reward": 10})
    sync(nodes)
    # b signs a claim stamped before c's, but keeps it to itself until the checkpoint is certified
    chain = b.log.chains[b.node_id]
    hlc = [chain[-1]["hlc"][0] + 1, 0]
    backdated = make_event(
        b.identity, chain[-1]["seq"] + 1, chain[-1]["id"], hlc, "general", "task_claim", {"task_id": task["id"]}
    )
    clock.advance(0.5)
    c.submit("task_claim", {"task_id": task["id"]})
    sync([a, c])
    clock.advance(2)
    checkpoint_round([a, c])  # two of three validators: a majority
    horizon = a.reducer.horizon
    assert horizon > hlc[0] and a.reducer.horizon == c.reducer.horizon
    folded = a.reducer.folded
    tail = len(a.log)
    a.receive([backdated])
    assert a.stats["events_below_horizon"] == 1
    assert a.reducer.folded - folded == tail + 1
    # the certified history stands: c's claim, not the backdated one, holds the task
    assert a.state["channels"]["general"]["tasks"][task["id"]]["assignee"] == c.node_id
    assert a.reducer.outcomes[backdated["id"]] == "task is claimed, not open"
    # every node that holds the checkpoint and the late event agrees, whatever the delivery order
    c.receive([backdated])
    b.load_checkpoint(a.checkpoint_after(0))
    sync(nodes)
    assert len({comparable(n.state) for n in nodes}) == 1


def test_compaction_rewrites_events_log_and_a_restarted_node_replays_only_the_tail(clock, tmp_path):
    dirs = [tmp_path / f"n{i}" for i in range(3)]
    nodes, horizon = certified_network(clock, data_dirs=dirs)
    busy(nodes, 2, clock)
    a = nodes[0]
    stored = RecordLog(dirs[0] / "events.log")
    assert len(stored.records) == len(a.log) == 6
    stored.close()
    saved = json.loads((dirs[0] / "checkpoint.json").read_bytes())
    assert saved["certificate"]["horizon"] == horizon
    expected = comparable(a.state)
    a.close()
    restarted = NodeCore("n1", dirs[0], now_ms=clock)
    assert restarted.node_id == a.node_id and restarted.reducer.horizon == horizon
    assert restarted.reducer.folded == 6
    assert comparable(restarted.state) == expected
    _, task = restarted.submit("task_create", {"title": "after restart", "reward": 1})
    nodes[1].receive([restarted.outbox[-1]])
    assert task["id"] in nodes[1].state["task_index"]
    for node in [restarted, *nodes[1:]]:
        node.close()


def test_a_tampered_checkpoint_file_is_not_loaded_and_a_peer_s_replaces_it(clock, tmp_path):
    dirs = [tmp_path / f"n{i}" for i in range(3)]
    nodes, _ = certified_network(clock, data_dirs=dirs)
    a = nodes[0]
    a.close()
    path = dirs[0] / "checkpoint.json"
    saved = json.loads(path.read_bytes())
    saved["state"]["nodes"][a.node_id]["balance"] += 1000
    path.write_text(json.dumps(saved))
    restarted = NodeCore("n1", dirs[0], now_ms=clock)
    assert restarted.stats["checkpoints_refused"] == 1 and restarted.reducer.horizon == 0
    assert restarted.state["nodes"].get(a.node_id) is None  # nothing of the forged balance
    assert restarted.load_checkpoint(nodes[1].checkpoint_after(0))
    assert comparable(restarted.state) == comparable(nodes[1].state)
    for node in [restarted, *nodes[1:]]:
        node.close()


def test_a_new_node_loads_the_certified_checkpoint_and_the_tail_from_its_peers(clock):
    nodes, _ = certified_network(clock)
    busy(nodes, 2, clock)
    newcomer = observer(nodes[0], clock)
    sync([*nodes, newcomer])
    assert newcomer.state["genesis"] is None  # the history below the checkpoint is gone everywhere
    assert newcomer.load_checkpoint(nodes[2].checkpoint_after(0))
    sync([*nodes, newcomer])
    assert comparable(newcomer.state) == comparable(nodes[0].state)


def test_signatures_that_arrive_before_the_own_checkpoint_make_the_node_fetch_it(clock):
    nodes, certificates = signed_by_two(3, clock)
    late = nodes[2]
    for certificate in certificates:
        late.add_checkpoint_signatures(certificate)
    assert late.wanted is not None and late.reducer.horizon == 0
    for node, certificate in zip(nodes[:2], reversed(certificates), strict=True):
        node.add_checkpoint_signatures(certificate)
    assert late.load_checkpoint(nodes[0].checkpoint_after(0))
    assert late.wanted is None and comparable(late.state) == comparable(nodes[0].state)


def test_the_state_hash_is_sha256_of_the_canonical_json_of_the_state(clock):
    nodes, _ = certified_network(clock)
    held = nodes[0].checkpoint_after(0)
    assert held is not None
    expected = hashlib.sha256(canonical(held["state"])).hexdigest()  # hashed whole, not streamed
    assert held["certificate"]["state_hash"] == expected


def test_a_validator_counts_once_for_its_latest_horizon_and_never_for_the_future(clock):
    nodes = make_network(3, clock=clock)
    busy(nodes, 2, clock)
    clock.advance(2)
    rogue, target = nodes[0], nodes[1]

    def signed(horizon: int, state_hash: str) -> cp.Certificate:
        signature = cp.sign(rogue.identity, horizon, "p" * 64, state_hash)
        return {"horizon": horizon, "position_hash": "p" * 64, "state_hash": state_hash, "signatures": [signature]}

    past = clock.ms - 10_000
    for i in range(50):  # one validator spraying signatures over many horizons
        target.add_checkpoint_signatures(signed(past + i, "a" * 64))
    assert len(target.signatures.held) == 1 and next(iter(target.signatures.held))[0] == past + 49
    target.add_checkpoint_signatures(signed(past + 49, "b" * 64))  # contradicting itself at one horizon
    assert len(target.signatures.held) == 1 and next(iter(target.signatures.held))[2] == "a" * 64
    target.add_checkpoint_signatures(signed(clock.ms + 3_600_000, "c" * 64))  # an hour ahead
    assert len(target.signatures.held) == 1
    junk = {**signed(past + 60, "d" * 64), "extra": "x" * 1000}
    target.add_checkpoint_signatures(junk)
    (held,) = target.signatures.held.values()
    assert "extra" not in held and held["horizon"] == past + 60
