"""Anonymous votes enter the network through two relays (4 nodes: each voter has 3 peers). The voter
seals the vote to the exit relay's X25519 key and hands the blob to a first relay, which cannot open
it; the exit opens it and gossips the vote after a random delay. Attacker cases: the first relay
opening the blob, replaying it or a second vote by the same key, a blob for another node, garbage
(over a node actor call, and over HTTP peering, where it costs the peer score). With fewer than 3
peers the vote goes through one relay, and the answer says so; with 3 peers and no relay answering,
the vote is refused (503) rather than sent through one hop, and can be retried."""

from __future__ import annotations

import base64
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from actors.tasknet.anonrelay import MAX_SEALED_CHARS, relay_context
from actors.tasknet.canonical import canonical
from actors.tasknet.events import make_anonymous
from actors.tasknet.node_actor import TaskNode
from actors.tasknet.peering import PENALTY_PER_INVALID, SCORE_START
from actors.tasknet.sealing import seal
from rayfleet.state import call
from tests.deployments.tasknet.conftest import Net, make_config, open_net
from tests.deployments.tasknet.test_app_governance import propose
from tests.deployments.tasknet.test_app_peering import Remote

NODES = ["n1", "n2", "n3", "n4"]


@pytest.fixture
async def net4(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Net]:
    async for n in open_net(monkeypatch, make_config(tmp_path, nodes=NODES)):
        yield n


@pytest.fixture
async def net4_long(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Net]:
    """The 4 nodes with a voting period no loaded machine outlasts (these tests never close)."""
    config = make_config(tmp_path, nodes=NODES, network={"proposal_voting_period": 300})
    async for n in open_net(monkeypatch, config):
        yield n


def handle(net: Net, node: str) -> Any:
    return net.app.state.component.network.handles[node]


def seal_key(net: Net, holder: str, of: str) -> str:
    """`of`'s X25519 seal key, published in its join event, as `holder` reduced it."""
    return str(handle(net, holder)._instance.core.state["nodes"][net.ids[of]]["seal_key"])


async def stats(net: Net, node: str) -> dict[str, Any]:
    return dict(await net.ok(node, "GET", "/network/stats"))


async def ready(net: Net) -> str:
    """A proposal every node knows, and every node's join (so each has the others' seal keys)."""

    async def joined() -> bool:
        states = [await net.ok(n, "GET", "/state") for n in NODES]
        return all(set(net.ids.values()) <= set(s["global"]["nodes"]) for s in states)

    await net.settle(joined, timeout=10)
    pid = await propose(net, {"title": "two relays", "proposal_type": "generic", "tags": []})

    async def known() -> bool:
        codes = [(await net.req(n, "GET", f"/proposals/{pid}/details")).status_code for n in NODES]
        return codes == [200] * len(NODES)

    await net.settle(known)
    return pid


async def sealed_vote(net: Net, voter: str, pid: str, vote: str, to: str, context_of: str | None = None) -> Any:
    """A voter's anonymous vote (its ring proof from the API) sealed to `to`'s published seal key."""
    proof = (await net.ok(voter, "GET", f"/zkp/generate_proof?proposal_id={pid}&vote={vote}"))["proof"]
    details = await net.ok(voter, "GET", f"/proposals/{pid}/details")
    payload = {"proposal_id": pid, "vote": vote, "zkp_proof": proof}
    event = make_anonymous([int(time.time() * 1000), 0], details["channel"], "anon_vote", payload)
    key = seal_key(net, voter, to)
    return event, seal(key, canonical(event), relay_context(net.ids[context_of or to]))


async def anonymous_votes(net: Net, node: str, pid: str) -> list[Any]:
    return list((await net.ok(node, "GET", f"/proposals/{pid}/details"))["anonymous_votes"])


async def test_a_vote_goes_through_two_relays_and_neither_holds_both_voter_and_vote(net4: Net):
    pid = await ready(net4)
    anon = await net4.ok("n4", "POST", f"/proposals/{pid}/vote", json={"vote": "yes", "anonymous": True})
    first, exit_ = anon["relayed_through"], anon["exit_relay"]
    assert anon["relay_hops"] == 2 and anon["voter"] == "anonymous"
    assert {first, exit_} <= {"n1", "n2", "n3"} and first != exit_

    async def everywhere() -> bool:
        return [len(await anonymous_votes(net4, n, pid)) for n in NODES] == [1] * len(NODES)

    await net4.settle(everywhere)
    relay1, relay2 = await stats(net4, first), await stats(net4, exit_)
    # the first relay only passed a blob on (it entered no vote); the exit entered it, from the first relay
    assert (relay1["anonymous_blobs_forwarded"], relay1["anonymous_votes_relayed"]) == (1, 0)
    assert (relay2["anonymous_blobs_forwarded"], relay2["anonymous_votes_relayed"]) == (0, 1)
    assert (await stats(net4, "n4"))["anonymous_votes_relayed"] == 0  # the voter's node never gossips it first


async def test_the_first_relay_cannot_open_the_blob_and_a_replay_or_second_vote_enters_once(net4: Net):
    pid = await ready(net4)
    event, blob = await sealed_vote(net4, "n4", pid, "yes", to="n2")
    # relay 1 (n1) holding the blob: it does not open with its key
    assert await call(handle(net4, "n1"), TaskNode.open_sealed, blob, "n4") is False
    assert (await stats(net4, "n1"))["anonymous_blobs_refused"] == 1
    # relay 1 passes it to the exit (n2), then replays it twice: the exit enters the one vote once
    for _ in range(3):
        assert await call(handle(net4, "n1"), TaskNode.forward_sealed, net4.ids["n2"], blob, "n4") is True

    async def entered() -> bool:
        return [len(await anonymous_votes(net4, n, pid)) for n in NODES] == [1] * len(NODES)

    await net4.settle(entered)
    # a second vote by the same key (another event, "no"), sealed to the exit: its key image refuses it
    second, blob2 = await sealed_vote(net4, "n4", pid, "no", to="n2")
    assert second["id"] != event["id"]
    assert await call(handle(net4, "n1"), TaskNode.forward_sealed, net4.ids["n2"], blob2, "n4") is True

    exit_core = handle(net4, "n2")._instance.core

    async def refused() -> bool:
        return isinstance(exit_core.reducer.outcomes.get(second["id"]), str)

    await net4.settle(refused)
    assert "already voted" in exit_core.reducer.outcomes[second["id"]]
    for node in NODES:
        (only,) = await anonymous_votes(net4, node, pid)
        assert only["vote"] == "yes"
    assert (await stats(net4, "n2"))["anonymous_votes_relayed"] == 4  # 3 copies and the second vote, opened


async def test_a_blob_for_another_node_or_garbage_is_refused_and_the_exit_keeps_serving(net4: Net):
    pid = await ready(net4)
    n2 = handle(net4, "n2")
    _, for_n3 = await sealed_vote(net4, "n4", pid, "yes", to="n3")
    _, bound_to_n3 = await sealed_vote(net4, "n4", pid, "yes", to="n2", context_of="n3")
    assert await call(handle(net4, "n1"), TaskNode.forward_sealed, net4.ids["n2"], for_n3, "n4") is False
    assert await call(n2, TaskNode.open_sealed, bound_to_n3, "n1") is False
    not_a_vote = seal(
        seal_key(net4, "n4", "n2"),
        b'{"type": "task_create"}',
        relay_context(net4.ids["n2"]),
    )
    garbage: list[Any] = [
        "",
        "garbage",
        "é" * 10,
        base64.b64encode(os.urandom(20)).decode(),
        base64.b64encode(bytes(32) + os.urandom(40)).decode(),  # a low-order ephemeral key
        base64.b64encode(os.urandom(200)).decode(),
        "A" * (MAX_SEALED_CHARS + 4),
        not_a_vote,
        123,
        None,
        {"blob": "x"},
    ]
    for blob in garbage:
        assert await call(n2, TaskNode.open_sealed, blob, "n1") is False, blob
    after = await stats(net4, "n2")
    assert after["anonymous_blobs_refused"] == len(garbage) + 2 and after["anonymous_votes_relayed"] == 0
    assert await anonymous_votes(net4, "n2", pid) == []
    # still serving: a real vote through it is entered
    _, good = await sealed_vote(net4, "n4", pid, "yes", to="n2")
    assert await call(handle(net4, "n1"), TaskNode.forward_sealed, net4.ids["n2"], good, "n4") is True

    async def entered() -> bool:
        return len(await anonymous_votes(net4, "n3", pid)) == 1

    await net4.settle(entered)


async def test_over_http_peering_a_garbage_blob_costs_the_peer_and_a_sealed_vote_enters(net4: Net):
    pid = await ready(net4)
    remote = Remote(net4, net4.ids["n1"])
    await remote.join("n1")
    for body in ({"blob": "garbage"}, {"blob": 5}, {"other": "x"}):
        response = await remote.send("n1", "anonymous", body)
        assert response.status_code == 400 and "sealed to this node" in response.json()["detail"]
    (record,) = (await net4.ok("n1", "GET", "/peers"))["inbound"]
    assert record["score"] == SCORE_START - 3 * PENALTY_PER_INVALID
    _, for_n2 = await sealed_vote(net4, "n4", pid, "yes", to="n2")
    response = await remote.send("n1", "anonymous", {"blob": for_n2})  # sealed to another node: refused
    assert response.status_code == 400
    _, for_n1 = await sealed_vote(net4, "n4", pid, "yes", to="n1")
    response = await remote.send("n1", "anonymous", {"blob": for_n1}, to=net4.ids["n2"])  # envelope for n2
    assert response.status_code in (400, 403) and "detail" in response.json()
    response = await remote.send("n1", "anonymous", {"blob": for_n1})
    assert response.status_code == 200 and response.json() == {"accepted": True}

    async def entered() -> bool:
        return [len(await anonymous_votes(net4, n, pid)) for n in NODES] == [1] * len(NODES)

    await net4.settle(entered)


async def test_with_three_peers_and_no_relay_answering_the_vote_is_refused_not_sent_one_hop(net4: Net):
    pid = await ready(net4)
    for node in ("n1", "n2", "n3"):
        await call(handle(net4, node), TaskNode.set_blocked, ["n4"])
    refused = await net4.req("n4", "POST", f"/proposals/{pid}/vote", json={"vote": "yes", "anonymous": True})
    assert refused.status_code == 503 and "relays" in refused.json()["detail"]
    for node in ("n1", "n2", "n3"):
        await call(handle(net4, node), TaskNode.set_blocked, [])
    anon = await net4.ok("n4", "POST", f"/proposals/{pid}/vote", json={"vote": "yes", "anonymous": True})
    assert anon["relay_hops"] == 2  # the same key votes again: the refused attempt used nothing up


async def test_a_voter_with_no_reachable_peer_is_refused_and_never_enters_its_own_vote(net4_long: Net):
    pid = await ready(net4_long)
    await call(handle(net4_long, "n4"), TaskNode.set_blocked, ["n1", "n2", "n3"])
    refused = await net4_long.req("n4", "POST", f"/proposals/{pid}/vote", json={"vote": "yes", "anonymous": True})
    assert refused.status_code == 503 and "no peer" in refused.json()["detail"], refused.text
    assert (await stats(net4_long, "n4"))["anonymous_votes_relayed"] == 0
    await call(handle(net4_long, "n4"), TaskNode.set_blocked, [])
    anon = await net4_long.ok("n4", "POST", f"/proposals/{pid}/vote", json={"vote": "yes", "anonymous": True})
    assert anon["relay_hops"] == 2 and "n4" not in (anon["relayed_through"], anon["exit_relay"])

    async def entered() -> bool:
        return [len(await anonymous_votes(net4_long, n, pid)) for n in NODES] == [1] * len(NODES)

    await net4_long.settle(entered)
    assert (await stats(net4_long, "n4"))["anonymous_votes_relayed"] == 0


async def test_a_hand_off_over_http_forged_replayed_or_misdirected_is_refused_and_a_good_one_is_forwarded(
    net4_long: Net,
):
    """A remote voter's node hands n1 (its first relay) a vote sealed to n2 over `/peer/forward`."""
    pid = await ready(net4_long)
    remote = Remote(net4_long, net4_long.ids["n1"])
    await remote.join("n1")
    _, for_n2 = await sealed_vote(net4_long, "n4", pid, "yes", to="n2")
    good = {"exit_id": net4_long.ids["n2"], "blob": for_n2}
    forged = {**remote.signed("n1", "forward", good), "sig": remote.signed("n1", "forward", {})["sig"]}
    response = await remote.post("n1", "forward", forged)
    assert response.status_code == 403 and "signature" in response.json()["detail"]
    envelope = remote.signed("n1", "forward", good)
    wrong_route = await remote.post("n1", "anonymous", envelope)  # a hand-off is good for /peer/forward only
    assert wrong_route.status_code == 403
    assert (await stats(net4_long, "n1"))["anonymous_blobs_forwarded"] == 0
    response = await remote.post("n1", "forward", envelope)
    assert response.status_code == 200 and response.json() == {"forwarded": True}
    replayed = await remote.post("n1", "forward", envelope)
    assert replayed.status_code == 403 and "replayed" in replayed.json()["detail"]
    for body in (
        {"exit_id": net4_long.ids["n1"], "blob": for_n2},  # the first relay as its own exit
        {"exit_id": remote.identity.node_id, "blob": for_n2},  # the voter's node as the exit
        {"blob": for_n2},
        {"exit_id": net4_long.ids["n2"], "blob": 5},
        {"exit_id": net4_long.ids["n2"], "blob": "A" * (MAX_SEALED_CHARS + 4)},
    ):
        response = await remote.send("n1", "forward", body)
        assert response.status_code == 400 and "detail" in response.json(), body
    (record,) = (await net4_long.ok("n1", "GET", "/peers"))["inbound"]
    assert record["score"] == SCORE_START - 5 * PENALTY_PER_INVALID
    unknown = await remote.send("n1", "forward", {"exit_id": "f" * 64, "blob": for_n2})
    assert unknown.status_code == 200 and unknown.json() == {"forwarded": False}  # an exit it cannot reach

    async def entered() -> bool:
        return [len(await anonymous_votes(net4_long, n, pid)) for n in NODES] == [1] * len(NODES)

    await net4_long.settle(entered)
    assert (await stats(net4_long, "n2"))["anonymous_votes_relayed"] == 1


async def test_a_vote_bounced_back_to_its_voters_node_is_not_relayed_by_it(net4_long: Net):
    """A first relay (here a remote peer, then a node actor) hands the voter's own blob back to the
    voter's node: it refuses to carry its own vote, so no exit sees it come from there."""
    pid = await ready(net4_long)
    voter = handle(net4_long, "n4")
    event, _ = await sealed_vote(net4_long, "n4", pid, "yes", to="n2")
    own = voter._instance._seal(event, net4_long.ids["n2"], seal_key(net4_long, "n4", "n2"))
    remote = Remote(net4_long, net4_long.ids["n1"])
    await remote.join("n4")
    response = await remote.send("n4", "forward", {"exit_id": net4_long.ids["n2"], "blob": own})
    assert response.status_code == 403 and "its own" in response.json()["detail"]
    assert await call(voter, TaskNode.forward_sealed, net4_long.ids["n2"], own, "n1") is False
    assert (await stats(net4_long, "n4"))["anonymous_blobs_forwarded"] == 0
    assert (await stats(net4_long, "n2"))["anonymous_votes_relayed"] == 0
