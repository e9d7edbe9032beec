"""The outbound link against a hostile remote node (a real HTTP/1.1 server on loopback answering what
the test chose): an answer signed by another node than the pinned one, a node of another network, an
endless answer, an error: the link does not join, reads no further than its cap, and says why."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from actors.tasknet import peerlink
from actors.tasknet.identity import Identity
from actors.tasknet.peering import envelope
from actors.tasknet.peerlink import PeerLink

Answer = Callable[[dict[str, Any]], tuple[int, bytes]]


class Remote:
    """Answers each POST with `answer(request envelope)`: (status, body bytes)."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.server: asyncio.base_events.Server | None = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
        )
        status, body = self.answer(json.loads(await reader.readexactly(length)))
        writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode())
        writer.write(body)
        await writer.drain()
        writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/tasknet/r1"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()


def _now() -> int:
    import time

    return int(time.time() * 1000)


def joined_by(identity: Identity, genesis: str) -> Answer:
    def answer(request: dict[str, Any]) -> tuple[int, bytes]:
        signed = envelope(identity, "joined", request["from"], {"genesis_author": genesis}, _now())
        return 200, json.dumps(signed).encode()

    return answer


@pytest.fixture
async def me() -> AsyncIterator[Identity]:
    yield Identity.generate()


async def _join(url: str, me: Identity, pinned: str | None, genesis: str) -> PeerLink:
    link = PeerLink(url, pinned, me, _now)
    await link.join("http://127.0.0.1:1/tasknet/n1", genesis)
    await link.close()
    return link


async def test_the_link_joins_a_remote_that_signs_its_answer(me: Identity):
    remote = Identity.generate()
    async with Remote(joined_by(remote, "g")) as url:
        link = await _join(url, me, remote.node_id, "g")
    assert link.remote_id == remote.node_id and link.last_error == ""


async def test_an_answer_signed_by_another_node_than_the_pinned_one_does_not_join(me: Identity):
    pinned, impostor = Identity.generate(), Identity.generate()
    async with Remote(joined_by(impostor, "g")) as url:
        link = await _join(url, me, pinned.node_id, "g")
    assert link.remote_id is None and "pinned" in link.last_error


async def test_a_node_of_another_network_is_not_peered_with(me: Identity):
    async with Remote(joined_by(Identity.generate(), "other-genesis")) as url:
        link = await _join(url, me, None, "g")
    assert link.remote_id is None and "another network" in link.last_error


async def test_a_forged_answer_does_not_join(me: Identity):
    def forged(request: dict[str, Any]) -> tuple[int, bytes]:
        signed = envelope(Identity.generate(), "joined", request["from"], {"genesis_author": "g"}, _now())
        signed["body"] = {"genesis_author": "g", "extra": 1}
        return 200, json.dumps(signed).encode()

    async with Remote(forged) as url:
        link = await _join(url, me, None, "g")
    assert link.remote_id is None and "signature invalid" in link.last_error


async def test_an_answer_over_the_cap_is_not_read_to_its_end(me: Identity, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(peerlink, "MAX_ANSWER_BYTES", 1000)
    async with Remote(lambda request: (200, b"[" + b"0," * 100_000 + b"0]")) as url:
        link = await _join(url, me, None, "g")
    assert link.remote_id is None and "over 1000 bytes" in link.last_error


async def test_an_error_answer_is_recorded_without_joining(me: Identity):
    async with Remote(lambda request: (403, b'{"detail": "peer dropped"}')) as url:
        link = await _join(url, me, None, "g")
    assert link.remote_id is None and link.last_error.startswith("join: 403") and link.failures == 1


async def test_a_raft_answer_signed_by_another_node_is_not_stepped(me: Identity):
    """The remote joined as itself, then a third key signs the Raft answer: the link returns nothing."""
    remote, third = Identity.generate(), Identity.generate()

    def answer(request: dict[str, Any]) -> tuple[int, bytes]:
        if request["route"] == "join":
            return joined_by(remote, "g")(request)
        vote = {"type": "request_vote_response", "from": remote.node_id, "to": me.node_id, "term": 9}
        signed = envelope(third, "raft_answer", me.node_id, {"messages": [{**vote, "vote_granted": True}]}, _now())
        return 200, json.dumps(signed).encode()

    async with Remote(answer) as url:
        link = PeerLink(url, remote.node_id, me, _now)
        assert await link.join("http://127.0.0.1:1/tasknet/n1", "g")
        message = {"type": "request_vote", "from": me.node_id, "to": remote.node_id, "term": 9}
        assert await link.raft(message) is None  # type: ignore[arg-type]
        await link.close()
    assert link.last_error == "raft: answer signed by another node than the joined one" and link.raft_sent == 0


@pytest.mark.parametrize(
    "signer, route, answer, error",
    [
        ("third", "propose_answer", {"index": 7, "leader": "x"}, "answer signed by another node than the joined one"),
        ("remote", "raft_answer", {"index": 7, "leader": "x"}, "answer refused: peer message is for route"),
        ("remote", "propose_answer", {"index": "7", "leader": "x"}, "answer is not a proposal answer"),
        ("remote", "propose_answer", {"error": "no", "status": 200, "retry": True}, "answer is not a proposal answer"),
    ],
)
async def test_a_forwarded_proposals_answer_counts_only_signed_by_the_leader_and_well_formed(
    me: Identity, signer: str, route: str, answer: dict[str, Any], error: str
):
    """The leader's answer to a forwarded proposal is taken only signed by the joined remote, for the
    proposal route, as `{index, leader}` or a 4xx/5xx refusal: otherwise the follower gets nothing."""
    keys = {"remote": Identity.generate(), "third": Identity.generate()}

    def respond(request: dict[str, Any]) -> tuple[int, bytes]:
        if request["route"] == "join":
            return joined_by(keys["remote"], "g")(request)
        signed = envelope(keys[signer], route, me.node_id, {"answer": answer}, _now())
        return 200, json.dumps(signed).encode()

    async with Remote(respond) as url:
        link = PeerLink(url, keys["remote"].node_id, me, _now)
        assert await link.join("http://127.0.0.1:1/tasknet/n1", "g")
        assert await link.propose({"proposal_id": "p", "channel": "general", "by": me.node_id}) is None
        await link.close()
    assert link.last_error.startswith(f"propose: {error}") and link.public()["proposals_forwarded"] == 0


async def test_a_forwarded_proposals_signed_answer_is_returned(me: Identity):
    remote = Identity.generate()
    refusal = {"error": "proposal p not found", "status": 404, "retry": False}

    def respond(request: dict[str, Any]) -> tuple[int, bytes]:
        if request["route"] == "join":
            return joined_by(remote, "g")(request)
        assert request["body"] == {"data": {"proposal_id": "p", "channel": "general", "by": me.node_id}}
        return 200, json.dumps(envelope(remote, "propose_answer", me.node_id, {"answer": refusal}, _now())).encode()

    async with Remote(respond) as url:
        link = PeerLink(url, remote.node_id, me, _now)
        assert await link.join("http://127.0.0.1:1/tasknet/n1", "g")
        assert await link.propose({"proposal_id": "p", "channel": "general", "by": me.node_id}) == refusal
        await link.close()
    assert link.public()["proposals_forwarded"] == 1
