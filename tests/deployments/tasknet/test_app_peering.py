"""HTTP peering routes through the app: a node of another cluster joins, pulls and pushes with
signed envelopes, and every way it could cheat (forged batches, another's id, replays, forged
events, floods, oversize batches) is refused in the `{detail}` shape. A peer relays events; it
never writes as a node of this network, and neither does one node's token as another node."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from actors.tasknet import node_actor
from actors.tasknet.canonical import canonical
from actors.tasknet.events import make_event
from actors.tasknet.identity import Identity
from actors.tasknet.node import NodeCore
from actors.tasknet.peering import (
    MAX_PUSH_EVENTS,
    PENALTY_PER_INVALID,
    REPLAY_WINDOW_MS,
    SCORE_START,
    envelope,
    open_envelope,
)
from deployments.tasknet.config import TasknetConfig
from tests.deployments.tasknet.conftest import Net, headers, make_config, open_net


class Remote:
    """A node of another cluster, speaking to the app's peer routes."""

    def __init__(self, net: Net, genesis_author: str) -> None:
        self.net = net
        self.core = NodeCore("r1", None, genesis_author=genesis_author)
        self.identity = self.core.identity

    def signed(self, node: str, route: str, body: dict[str, Any], **over: Any) -> dict[str, Any]:
        identity = over.pop("identity", self.identity)
        to = over.pop("to", self.net.ids[node])
        return envelope(identity, route, to, body, over.pop("ts", self.core.now_ms()))

    def submit_join(self) -> tuple[Any, Any]:
        core = self.core
        return core.submit("join", {"name": "r1", "ring_key": core.ring_key.public, "seal_key": core.seal_key.public})

    async def post(self, node: str, route: str, raw: dict[str, Any], **kw: Any) -> Any:
        return await self.net.req(node, "POST", f"/peer/{route}", auth=False, json=raw, **kw)

    async def send(self, node: str, route: str, body: dict[str, Any], **over: Any) -> Any:
        return await self.post(node, route, self.signed(node, route, body, **over))

    async def join(self, node: str = "n1") -> dict[str, Any]:
        response = await self.send(node, "join", {"url": "http://127.0.0.1:9/tasknet/r1"})
        assert response.status_code == 200, response.text
        return response.json()

    async def pull(self, node: str = "n1") -> list[Any]:
        log = self.core.log
        body = {"vector": log.version_vector(), "anon_ids": list(log.anonymous), "heads": log.heads()}
        response = await self.send(node, "pull", body)
        assert response.status_code == 200, response.text
        return response.json()["events"]

    async def push(self, events: list[Any], node: str = "n1") -> Any:
        return await self.send(node, "events", {"events": events})


@pytest.fixture
async def remote(net: Net) -> Remote:
    return Remote(net, net.ids["n1"])


async def _state(net: Net, node: str) -> Any:
    return await net.ok(node, "GET", "/state")


async def test_a_remote_node_joins_pulls_the_network_and_its_join_spreads_to_every_node(net: Net, remote: Remote):
    answer = await remote.join()
    opened = open_envelope(answer, "joined", remote.identity.node_id, remote.core.now_ms())
    assert opened.sender == net.ids["n1"] and opened.body["genesis_author"] == net.ids["n1"]

    assert remote.core.receive(await remote.pull())
    assert set(remote.core.state["nodes"]) == set(net.ids.values())
    join, _ = remote.submit_join()
    response = await remote.push([join])
    assert response.status_code == 200 and response.json()["accepted"] == 1

    async def everywhere() -> bool:
        states = [await _state(net, n) for n in ("n1", "n2", "n3")]
        return all(remote.identity.node_id in s["global"]["nodes"] for s in states)

    await net.settle(everywhere)
    peers = await net.ok("n1", "GET", "/peers")
    (record,) = peers["inbound"]
    assert record == {
        "node_id": remote.identity.node_id,
        "url": "http://127.0.0.1:9/tasknet/r1",
        "confirmed": True,
        "score": SCORE_START,
        "dropped": False,
        "events_invalid": 0,
    }
    assert await remote.pull() == []  # it lacks nothing now: the pull answers the version vector
    log = remote.core.log
    raw = await remote.send("n1", "pull", {"vector": log.version_vector(), "anon_ids": [], "heads": log.heads()})
    assert raw.json()["vector"][remote.identity.node_id] == 1  # n1's own vector, for push-pull


async def test_a_pull_answers_a_bounded_batch(net: Net, remote: Remote, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(node_actor, "MAX_PULL_EVENTS", 2)
    await remote.join()
    first = await remote.pull()
    assert len(first) == 2
    remote.core.receive(first)
    assert len(await remote.pull()) == 2  # the next batch starts where its version vector ends


async def test_a_push_or_pull_before_joining_is_403(net: Net, remote: Remote):
    for route, body in (("events", {"events": []}), ("pull", {"vector": {}, "anon_ids": [], "heads": {}})):
        response = await remote.send("n1", route, body)
        assert response.status_code == 403 and "join first" in response.json()["detail"]


async def test_a_forged_batch_signature_is_403_and_nothing_from_it_is_kept(net: Net, remote: Remote):
    await remote.join()
    remote.core.receive(await remote.pull())
    join, _ = remote.submit_join()
    raw = remote.signed("n1", "events", {"events": []})
    raw["body"] = {"events": [join]}  # the batch was signed empty
    response = await remote.post("n1", "events", raw)
    assert response.status_code == 403 and response.json() == {"detail": "peer message signature invalid"}
    assert remote.identity.node_id not in (await _state(net, "n1"))["global"]["nodes"]


async def test_a_peer_claiming_another_peers_id_is_403(net: Net, remote: Remote):
    await remote.join()
    impostor = Identity.generate()
    raw = remote.signed("n1", "events", {"events": []}, identity=impostor)
    raw["from"] = remote.identity.node_id
    response = await remote.post("n1", "events", raw)
    assert response.status_code == 403 and "does not derive" in response.json()["detail"]
    unsigned = {k: v for k, v in raw.items() if k != "sig"} | {"key": remote.identity.public_key}
    response = await remote.post("n1", "events", {**unsigned, "sig": impostor.sign(canonical(unsigned))})
    assert response.status_code == 403 and "signature invalid" in response.json()["detail"]


async def test_a_replayed_stale_or_misrouted_envelope_is_403(net: Net, remote: Remote):
    await remote.join()
    raw = remote.signed("n1", "pull", {"vector": {}, "anon_ids": [], "heads": {}})
    assert (await remote.post("n1", "pull", raw)).status_code == 200
    replayed = await remote.post("n1", "pull", raw)
    assert replayed.status_code == 403 and "replayed" in replayed.json()["detail"]
    stale = remote.signed("n1", "pull", {"vector": {}, "anon_ids": [], "heads": {}}, ts=1)
    assert "replay window" in (await remote.post("n1", "pull", stale)).json()["detail"]
    to_n2 = remote.signed("n2", "pull", {"vector": {}, "anon_ids": [], "heads": {}})
    misrouted = await remote.post("n1", "pull", to_n2)
    assert misrouted.status_code == 403 and "another node" in misrouted.json()["detail"]
    as_push = await remote.post("n1", "events", remote.signed("n1", "pull", {"events": []}))
    assert as_push.status_code == 403 and "for route" in as_push.json()["detail"]
    assert REPLAY_WINDOW_MS <= 60_000


async def test_forged_events_cost_the_relaying_peer_its_score_until_it_is_dropped(net: Net, remote: Remote):
    await remote.join()
    remote.core.receive(await remote.pull())
    join, _ = remote.submit_join()
    task, _ = remote.core.submit("task_create", {"title": "forged reward", "reward": 5})
    forged = copy.deepcopy(task)
    forged["payload"]["reward"] = 500  # the signature no longer covers it
    answer = (await remote.push([forged])).json()
    assert answer == {
        "accepted": 0,
        "invalid": 1,
        "score": SCORE_START - PENALTY_PER_INVALID,
        "checkpoints_installed": 0,
    }

    while (response := await remote.push([forged])).status_code == 200:
        pass
    assert response.status_code == 403 and response.json() == {"detail": "peer dropped for relaying invalid events"}
    refused = await remote.push([join])  # even good events: a dropped peer is refused
    assert refused.status_code == 403
    assert (await remote.send("n1", "join", {})).status_code == 403
    (record,) = (await net.ok("n1", "GET", "/peers"))["inbound"]
    assert record["dropped"] and record["events_invalid"] == SCORE_START // PENALTY_PER_INVALID
    state = await _state(net, "n1")
    assert remote.identity.node_id not in state["global"]["nodes"]
    assert all(t["title"] != "forged reward" for t in state["general"]["tasks"].values())


async def test_a_peer_never_writes_as_a_node_of_this_network(net: Net, remote: Remote):
    """Events are authored by the key that signs them: a peer can relay n2's events, never make one."""
    await remote.join()
    remote.core.receive(await remote.pull())
    n1 = net.ids["n1"]
    before = (await net.ok("n1", "GET", "/state/digest"))["digest"]
    seq = remote.core.log.version_vector()[n1]
    prev = remote.core.log.heads()[n1]
    as_n1 = make_event(remote.identity, seq + 1, prev, [remote.core.now_ms(), 0], "general", "task_create", {})
    as_n1 = {**as_n1, "author": n1}  # claims n1, signed with the remote's key
    with_n1_key = {**as_n1, "key": remote.core.state["nodes"][n1]["public_key"]}  # n1's key, the remote's signature
    answer = (await remote.push([as_n1, with_n1_key])).json()
    assert answer["accepted"] == 0 and answer["invalid"] == 2
    assert (await net.ok("n1", "GET", "/state/digest"))["digest"] == before

    # a node token does not cross nodes either: n1's token acting on n2 is refused
    wrong = await net.req("n2", "POST", "/tasks", auth=False, headers=headers("n1"), json={"title": "x", "reward": 1})
    assert wrong.status_code == 403
    # and the peer routes ignore tokens: a token does not make a forged envelope good
    forged = remote.signed("n1", "events", {"events": []})
    forged["sig"] = forged["sig"][::-1]
    response = await remote.post("n1", "events", forged, headers=headers("n1"))
    assert response.status_code == 403


async def test_oversize_batches_and_bodies_are_413(net: Net, remote: Remote):
    await remote.join()
    response = await remote.push([{}] * (MAX_PUSH_EVENTS + 1))
    assert response.status_code == 413 and str(MAX_PUSH_EVENTS) in response.json()["detail"]
    huge = remote.signed("n1", "events", {"events": [{"pad": "x" * 300_000}]})
    response = await remote.post("n1", "events", huge)
    assert response.status_code == 413 and "detail" in response.json()


@pytest.mark.parametrize(
    "body, status",
    [
        ({"events": "nope"}, 400),
        ({"vector": {"a": "1"}, "anon_ids": [], "heads": {}}, 400),
    ],
)
async def test_malformed_bodies_are_400(net: Net, remote: Remote, body: dict[str, Any], status: int):
    await remote.join()
    route = "events" if "events" in body else "pull"
    response = await remote.send("n1", route, body)
    assert response.status_code == status and "detail" in response.json()


async def test_a_join_with_credentials_in_its_url_is_400(net: Net, remote: Remote):
    response = await remote.send("n1", "join", {"url": "http://u:p@10.0.0.1/tasknet/r1"})
    assert response.status_code == 400 and "credentials" in response.json()["detail"]
    assert "u:p" not in response.text


@pytest.fixture
async def slow_net(tmp_path: Any, monkeypatch: pytest.MonkeyPatch):
    async for n in open_net(monkeypatch, make_config(tmp_path, peer_rate_per_s=0.01, peer_burst=3)):
        yield n


async def test_a_flooding_peer_gets_429_in_the_error_shape(slow_net: Net):
    remote = Remote(slow_net, slow_net.ids["n1"])
    await remote.join()
    body = {"vector": {}, "anon_ids": [], "heads": {}}
    assert [(await remote.send("n1", "pull", body)).status_code for _ in range(2)] == [200, 200]
    response = await remote.send("n1", "pull", body)
    assert response.status_code == 429 and response.json() == {"detail": "peer rate limit exceeded; retry shortly"}


@pytest.mark.parametrize(
    "peers",
    [
        [{"url": "http://user:secret@10.0.0.2/tasknet/n1"}],
        [{"url": "file:///etc/passwd"}],
        [{"url": "http:///tasknet"}],
        [{"url": "http://10.0.0.2/tasknet/n1", "node": "n9"}],
    ],
)
def test_peer_settings_are_validated(peers: list[dict[str, Any]]):
    with pytest.raises(ValidationError):
        TasknetConfig.model_validate({"peers": peers})


def test_each_peer_is_dialled_by_its_node_only():
    config = TasknetConfig.model_validate(
        {
            "peers": [{"url": "http://10.0.0.2/tasknet/n1/"}, {"url": "http://10.0.0.3/tasknet/x", "node": "n2"}],
            "advertise_url": "http://10.0.0.1:8000/tasknet",
        }
    )
    assert config.actor_settings("n1")["peers"] == [{"url": "http://10.0.0.2/tasknet/n1", "node_id": None}]
    assert config.actor_settings("n2")["peers"] == [{"url": "http://10.0.0.3/tasknet/x", "node_id": None}]
    assert config.actor_settings("n3")["peers"] == []
    assert config.actor_settings("n2")["advertise_url"] == "http://10.0.0.1:8000/tasknet/n2"


async def test_the_checkpoint_route_needs_a_join_and_an_integer_horizon(net: Net, remote: Remote):
    assert (await remote.send("n1", "checkpoint", {"horizon": 0})).status_code == 403
    await remote.join()
    assert (await remote.send("n1", "checkpoint", {"horizon": "0"})).status_code == 400
    answer = await remote.send("n1", "checkpoint", {"horizon": 0})
    assert answer.status_code == 200 and answer.json() == {"checkpoint": None}  # none certified yet


async def test_forged_checkpoint_signatures_from_a_peer_install_nothing(net: Net, remote: Remote):
    await remote.join()
    horizon = remote.core.now_ms() // 1000 * 1000
    forged = {
        "horizon": horizon,
        "position_hash": "0" * 64,
        "state_hash": "1" * 64,
        "signatures": {net.ids["n2"]: {"key": remote.identity.public_key, "sig": "AAAA"}},
    }
    response = await remote.send("n1", "events", {"events": [], "checkpoints": [forged] * 3})
    assert response.status_code == 200 and response.json()["checkpoints_installed"] == 0
    assert (await net.ok("n1", "GET", "/network/stats"))["checkpoints_installed"] == 0
    too_many = await remote.send("n1", "events", {"events": [], "checkpoints": [forged] * 17})
    assert too_many.status_code == 400


async def test_relaying_a_forking_authors_events_costs_the_relay_nothing(net: Net, remote: Remote):
    """An author who signs two versions of one position makes its other branch not fit the chain a node
    holds: that is the author's doing (cut as an equivocation), not the honest relay's."""
    await remote.join()
    remote.core.receive(await remote.pull())
    join, _ = remote.submit_join()
    author, now = Identity.generate(), remote.core.now_ms()
    first = make_event(author, 1, "", [now, 0], "general", "skills_update", {"skills": ["a"]})
    second = make_event(author, 2, first["id"], [now, 1], "general", "skills_update", {"skills": ["b"]})
    fork = make_event(author, 2, first["id"], [now, 2], "general", "skills_update", {"skills": ["c"]})
    after_fork = make_event(author, 3, fork["id"], [now, 3], "general", "skills_update", {"skills": ["d"]})
    assert (await remote.push([join, first, second])).json()["invalid"] == 0
    answer = (await remote.push([fork, after_fork])).json()
    assert answer["invalid"] == 0 and answer["score"] == SCORE_START
    stats = await net.ok("n1", "GET", "/network/stats")
    assert stats["events_out_of_chain"] == 1 and stats["events_invalid"] == 0
