"""An idle replica makes no call: its copies of the shared actors follow them with long-polls, and its
batches are flushed when a producer wrote something, within the flush's bound.

- a change made while a replica holds a long-poll reaches it (one call, no timer);
- an actor restarted under a held long-poll is read afresh, whether Ray re-sends the held call to the
  new instance or the call fails;
- a flush whose producer wrote nothing sends nothing, while one whose producer wrote is flushed (and a
  lease given back) without anyone calling it.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from actors.llm_gateway import BreakerBoard, KeyBoard, LatencyBoard, RateLimiter, ThreatLedger
from actors.llm_gateway.changes import HOLD_SECONDS, Changes
from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.follow import follow
from deployments.llm_gateway.shared_state import BreakerClient
from deployments.llm_gateway.state import durable_store
from deployments.llm_gateway.virtual_keys import VirtualKeys, hash_key
from rayfleet import state as state_mod
from rayfleet.state import LocalActorHandle, call
from rayfleet.tasks import BackgroundTasks, Wake
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, base_config, chat
from tests.polling import eventually


def _record(key_id: str, secret: str) -> dict[str, Any]:
    return {
        "id": key_id,
        "hash": hash_key(secret),
        "prefix": secret[:10],
        "name": key_id,
        "models": [],
        "expires_at": None,
        "team": None,
        "metadata": {},
    }


class Counted:
    """A state handle that counts the calls made through it (by method) and those still held."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()
        self.held: Counter[str] = Counter()
        self.args: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        method = getattr(self.inner, name)
        counted = self

        class Remote:
            def remote(self, *args: Any, **kwargs: Any) -> Any:
                return counted._call(name, method, args, kwargs)

        return Remote()

    async def _call(self, name: str, method: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.calls[name] += 1
        self.args.append((name, args))
        self.held[name] += 1
        try:
            return await method.remote(*args, **kwargs)
        finally:
            self.held[name] -= 1


class Restartable:
    """An actor handle whose actor can be restarted under a held call, the two ways Ray may go on: the held
    call is sent again to the new instance (``max_task_retries=-1``), or it fails (retries exhausted)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make
        self.actor = LocalActorHandle(make())
        self.mode = "resend"
        self._restarted = asyncio.Event()
        self.calls: Counter[str] = Counter()

    def restart(self) -> None:
        self.actor = LocalActorHandle(self.make())
        self._restarted.set()
        self._restarted = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        owner = self

        class Remote:
            def remote(self, *args: Any, **kwargs: Any) -> Any:
                return owner._call(name, args, kwargs)

        return Remote()

    async def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.calls[name] += 1
        restarted = asyncio.ensure_future(self._restarted.wait())
        answer = asyncio.ensure_future(getattr(self.actor, name).remote(*args, **kwargs))
        try:
            done, _ = await asyncio.wait({answer, restarted}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # cancelled with the follower: nothing left pending
            answer.cancel()
            raise
        finally:
            if not restarted.done():
                restarted.cancel()
        if answer in done:
            restarted.cancel()
            return answer.result()
        answer.cancel()
        restarted.cancel()
        if self.mode == "fail":
            raise ConnectionError("the actor died under the call")
        return await getattr(self.actor, name).remote(*args, **kwargs)


async def test_a_key_made_while_a_replica_long_polls_reaches_it_in_one_call(serve, up1, tmp_path, auth_env):
    config = base_config(tmp_path, {"a": {"provider": "openai_compat", "base_url": up1.base_url}})
    first = await serve(config)
    board = state_mod.actor(KeyBoard, "llm_gateway.keys", durable_store(GatewayConfig.model_validate(config)))
    counted = Counted(board)
    second = await serve(config, state={"keys": counted})
    await eventually(lambda: counted.held["wait_snapshot"] == 1, what="the second replica holding a long-poll")
    async with first.client(key=ADMIN_KEY) as admin, second.client(key=None) as other:
        made = await admin.post("/api/v1/keys", json={"name": "pushed"})
        assert made.status_code == 201
        key = made.json()["key"]

        async def answers(status: int) -> bool:
            r = await other.get("/v1/models", headers={"Authorization": f"Bearer {key}"})
            return r.status_code == status

        await eventually(lambda: answers(200), what="the new key accepted by the other replica")
        assert counted.calls["snapshot"] == 1  # its startup read; the change came with the held long-poll
        calls = counted.calls["wait_snapshot"]
        assert (await admin.delete(f"/api/v1/keys/{made.json()['id']}")).status_code == 200
        await eventually(lambda: answers(401), what="the revoked key refused by the other replica")
        assert counted.calls["snapshot"] == 1 and counted.calls["wait_snapshot"] <= calls + 2
    await eventually(lambda: counted.held["wait_snapshot"] == 1, what="the long-poll re-armed")


@pytest.mark.parametrize("mode", ["resend", "fail"])
async def test_a_key_board_restarted_under_a_long_poll_is_read_afresh(tmp_path, mode):
    store = {"type": "sqlite", "sqlite_path": str(tmp_path / "gw.db"), "dsn_env": "", "dsn": ""}
    handle = Restartable(lambda: KeyBoard(store))
    handle.mode = mode
    assert (await call(handle, KeyBoard.create, _record("key_old", "sk-rf-old")))["ok"]
    keys = VirtualKeys(handle)
    tasks = BackgroundTasks("llm_gateway")
    tasks.start(keys.run(), name="keys")
    try:
        await eventually(lambda: keys.lookup("sk-rf-old") is not None, what="the first key read")
        held = keys.version
        handle.restart()  # the new instance replays the record: a new epoch, versions above the old ones
        assert (await call(handle, KeyBoard.create, _record("key_new", "sk-rf-new")))["ok"]
        await eventually(lambda: keys.lookup("sk-rf-new") is not None, what="the restarted board read afresh")
        assert keys.version > held and keys.lookup("sk-rf-old") is not None
        if mode == "fail":
            assert handle.calls["snapshot"] >= 1  # the fallback read after the failed call
    finally:
        await tasks.stop()


async def test_a_restarted_breaker_boards_events_are_relayed():
    """Its event numbers start again at 1: the replica reads them all, not only those above the old ones."""
    handle = Restartable(lambda: BreakerBoard(failure_threshold=1))
    relayed: list[str] = []
    breakers = BreakerClient(handle, on_event=lambda event: relayed.append(event["event"]))
    tasks = BackgroundTasks("llm_gateway")
    tasks.start(breakers.run(), name="breakers")
    try:
        await eventually(lambda: handle.calls["wait_snapshot"] == 2, what="the replica holding its long-poll")
        for _ in range(3):  # events 1..3 of the first board: open, then two resets
            await call(handle, BreakerBoard.record, "a", False)
            await call(handle, BreakerBoard.reset, "a")
        await eventually(lambda: relayed.count("circuit_open") == 3, what="the first board's events")
        handle.restart()
        await call(handle, BreakerBoard.record, "b", False)  # event 1 of the new board
        await eventually(lambda: relayed.count("circuit_open") == 4, what="the restarted board's first event")
        assert breakers.states["b"]["state"] == "OPEN"
    finally:
        await tasks.stop()


async def test_a_change_between_two_long_polls_is_answered_at_once():
    """Versions, not timing: a call carrying an old version is answered without waiting."""
    changes, version = Changes(), [1]
    waiting = asyncio.ensure_future(changes.wait(lambda: version[0] == 1, timeout=60.0))
    await asyncio.sleep(0)
    version[0] = 2  # changed, and nobody notified yet: the next check sees it
    changes.notify()
    await asyncio.wait_for(waiting, 10)
    await asyncio.wait_for(changes.wait(lambda: version[0] == 1, timeout=60.0), 10)


async def test_a_lost_long_poll_is_re_armed_with_the_version_held():
    asked: list[int] = []
    applied: list[Any] = []
    version = [7]
    never = asyncio.Event()

    async def wait(known: int, hold: float) -> int:
        asked.append(known)
        if len(asked) != 2:
            await never.wait()  # the first answer is lost (nothing within hold + grace); later ones hold
        return known + 1

    def apply(answer: int) -> None:
        applied.append(answer)
        version[0] = answer

    task = asyncio.ensure_future(
        follow("test", lambda: version[0], wait, apply, lambda: asyncio.sleep(0), hold=0.01, grace=0.01)
    )
    try:
        await eventually(lambda: applied, what="the re-armed call answered")
        assert asked[:2] == [7, 7] and applied[0] == 8
    finally:
        task.cancel()


async def test_an_early_answer_that_changes_nothing_is_not_asked_again_at_once():
    """A broken long-poll (answering at once, with nothing new) is read at the retry pace, not in a loop."""
    asked: list[int] = []
    task = asyncio.ensure_future(
        follow("test", lambda: 1, lambda known, hold: _count(asked), lambda _: None, lambda: asyncio.sleep(0), retry=60)
    )
    try:
        await eventually(lambda: asked, what="the first call")
        for _ in range(200):  # turns of the event loop, in which a tight loop would call again and again
            await asyncio.sleep(0)
        assert len(asked) == 1
    finally:
        task.cancel()


async def _count(asked: list[int]) -> None:
    asked.append(1)


async def test_an_idle_flush_sends_nothing_and_a_written_one_is_flushed_within_its_bound():
    tasks = BackgroundTasks("llm_gateway")
    idle, busy = Wake(), Wake()
    steps: Counter[str] = Counter()

    async def step(name: str) -> None:
        steps[name] += 1

    tasks.when(idle, 0.01, lambda: step("idle"), name="idle")
    tasks.when(busy, 0.05, lambda: step("busy"), name="busy")
    try:
        busy.set()
        await eventually(lambda: steps["busy"] == 1, what="the woken flush")
        assert steps["idle"] == 0  # a shorter bound, never woken: never called
        threading.Thread(target=idle.set).start()  # a producer on another thread
        await eventually(lambda: steps["idle"] == 1, what="the flush woken from another thread")
        assert steps["busy"] == 1
    finally:
        await tasks.stop()


async def test_a_replica_flushes_what_a_request_wrote_and_nothing_else(serve, up1, tmp_path, auth_env):
    config = base_config(tmp_path, {"a": {"provider": "openai_compat", "base_url": up1.base_url}})
    p = "llm_gateway"
    counted = {
        name: Counted(state_mod.actor(cls, f"{p}.{name}"))
        for name, cls in (("threats", ThreatLedger), ("latency", LatencyBoard), ("ratelimit", RateLimiter))
    }
    gw = await serve(config, state=counted)
    threats, latency, ratelimit = counted["threats"], counted["latency"], counted["ratelimit"]
    async with gw.client() as c:
        assert (await c.post("/v1/chat/completions", json=chat("m"))).status_code == 200
    # nobody calls a flush: what the request wrote is flushed within each flush's bound
    await eventually(lambda: latency.calls["add"] == 1, what="the request's trace sent to the latency board")
    await eventually(lambda: not gw.gateway.stores.records.queue, what="the request's record written")
    await eventually(lambda: ratelimit.calls["release"] >= 1, what="the rate-limit lease given back once idle")
    await eventually(lambda: gw.gateway.views.budget.allowance == 0, what="the budget allowance given back")
    # the threat ledger's flush (bound 0.2 s, shorter than the latency's 0.5 s) had nothing: no call
    assert threats.calls["record"] == 0
    assert all(args[1] == HOLD_SECONDS for name, args in threats.args if name == "wait_blocked"), threats.args
