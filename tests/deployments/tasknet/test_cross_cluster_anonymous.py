"""Anonymous votes across two clusters (the fleet of test_cross_cluster.py: a1, a2, a3 on one server,
b1, b2 on the other, a1 and b1 linked over HTTP). a1's reachable peers are a2, a3 (node actors) and
b1 (the remote end of its link): the first relay of a vote is drawn from all three, never a1; with
b1 first, the sealed hand-off goes over the signed link (`/peer/forward`) and b1 passes it to the
exit b2 (the one node it reaches that is neither the voter nor itself). The vote is counted once."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

from actors.tasknet.events import make_anonymous
from actors.tasknet.node_actor import TaskNode
from rayfleet.state import call
from tests.deployments.tasknet.test_cross_cluster import SIDE_A, SIDE_B, TOKENS, Fleet, open_fleet
from tests.polling import eventually

NODES = SIDE_A + SIDE_B


@pytest.fixture
async def fleet(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Fleet]:
    monkeypatch.setenv("TASKNET_NODE_TOKENS", ",".join(f"{n}:{t}" for n, t in TOKENS.items()))
    # a voting period long enough for a loaded machine (the conftest's 4 s is for tests that close)
    network = {"proposal_voting_period": 300}
    async with open_fleet(tmp_path, b_dials_a=True, anonymous_relay_max_delay_s=0.3, network=network) as fleet:
        await eventually(fleet.five_members, timeout=30, what="the two clusters forming one network")

        async def linked() -> bool:
            links = [(await fleet.get(n, "/peers"))["links"] for n in ("a1", "b1")]
            return all(link and link[0]["joined"] for link in links)

        await eventually(linked, timeout=15, what="a1 and b1 joined over their links")
        yield fleet


async def proposal(fleet: Fleet, title: str) -> str:
    """A proposal made on a1, once all five nodes know it (so every exit can enter a vote on it)."""
    response = await fleet.post("a1", "/proposals", {"title": title, "proposal_type": "generic", "tags": []})
    assert response.status_code == 200, response.text
    pid = str(response.json()["id"])

    async def known() -> bool:
        codes = [(await fleet.client.get(fleet.url(n, f"/proposals/{pid}/details"))).status_code for n in NODES]
        return codes == [200] * len(NODES)

    await eventually(known, timeout=15, what=f"{pid} on all five nodes")
    return pid


async def counted_once_everywhere(fleet: Fleet, pid: str) -> None:
    async def once() -> bool:
        votes = [(await fleet.get(n, f"/proposals/{pid}/details"))["anonymous_votes"] for n in NODES]
        return all(len(v) == 1 for v in votes)

    await eventually(once, timeout=15, what="the anonymous vote on all five nodes")
    for node in NODES:
        details = await fleet.get(node, f"/proposals/{pid}/details")
        assert len(details["anonymous_votes"]) == 1 and details["yes_votes"] > 0, (node, details)


async def test_the_first_relay_is_drawn_from_every_reachable_peer_local_and_remote_never_the_voter(fleet: Fleet):
    pid = await proposal(fleet, "first relays")
    b1, b2 = [f"peer:{(await fleet.get(n, '/whoami'))['node_id']}" for n in ("b1", "b2")]
    core = fleet.handle("a1")._instance.core
    proof = await asyncio.to_thread(core.anonymous_proof, pid, "yes")
    channel = (await fleet.get("a1", f"/proposals/{pid}/details"))["channel"]
    payload = {"proposal_id": pid, "vote": "yes", "zkp_proof": proof}
    event = make_anonymous([core.now_ms(), 0], channel, "anon_vote", payload)
    firsts: Counter[str] = Counter()
    for _ in range(30):  # one vote handed on 30 times: the exits enter it once
        relayed = await call(fleet.handle("a1"), TaskNode.relay_anonymous, event)
        first, exit_ = relayed["relayed_through"], relayed["exit_relay"]
        assert relayed["relay_hops"] == 2 and exit_ not in ("a1", first), relayed
        if first == b1:  # b1 reaches b2 (its cluster) and a1 (the voter): b2 is the only exit it can take
            assert exit_ == b2, relayed
        firsts[first] += 1
    assert set(firsts) == {"a2", "a3", b1}, firsts  # each 1/3: all three in 30 draws but with p < 2e-5
    forwarded = (await fleet.get("b1", "/network/stats"))["anonymous_blobs_forwarded"]
    assert forwarded >= firsts[b1]
    assert (await fleet.get("a1", "/network/stats"))["anonymous_votes_relayed"] == 0
    await counted_once_everywhere(fleet, pid)


async def test_a_vote_through_the_api_whose_first_relay_is_the_remote_node_is_counted_once(fleet: Fleet):
    b1 = f"peer:{(await fleet.get('b1', '/whoami'))['node_id']}"
    for attempt in range(20):  # the first relay is b1 with p = 1/3 a vote: 20 misses have p < 4e-4
        pid = await proposal(fleet, f"remote first relay {attempt}")
        response = await fleet.post("a1", f"/proposals/{pid}/vote", {"vote": "yes", "anonymous": True})
        assert response.status_code == 200, response.text
        relayed = response.json()
        assert relayed["voter"] == "anonymous" and relayed["relayed_through"] != "a1"
        if relayed["relayed_through"] == b1:
            break
    else:
        pytest.fail("b1 never drawn as the first relay in 20 votes")
    assert relayed["relay_hops"] == 2 and relayed["exit_relay"] not in ("a1", b1)
    await counted_once_everywhere(fleet, pid)
    stats = {n: await fleet.get(n, "/network/stats") for n in NODES}
    assert stats["b1"]["anonymous_blobs_forwarded"] >= 1
    assert stats["a1"]["anonymous_votes_relayed"] == 0  # the voter's node never entered it
    again = await fleet.post("a1", f"/proposals/{pid}/vote", {"vote": "yes", "anonymous": True})
    assert again.status_code == 403  # its nullifier is spent
