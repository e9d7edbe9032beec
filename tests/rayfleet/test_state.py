import asyncio
import threading

from rayfleet import state
from tests.polling import eventually_sync


class Counter:
    def __init__(self, start: int = 0) -> None:
        self.value = start

    async def add_slowly(self, n: int) -> int:
        current = self.value
        await asyncio.sleep(0.001)  # the behaviour: a yield between read and write (calls must not interleave)
        self.value = current + n
        return self.value

    def get(self) -> int:
        return self.value


async def test_local_handle_has_the_actor_call_surface():
    h = state.actor(Counter, "c1", 5)
    assert state.is_local(h)
    assert await h.add_slowly.remote(2) == 7
    assert await h.get.remote() == 7


async def test_same_name_same_instance_first_creator_wins():
    a = state.actor(Counter, "shared", 1)
    b = state.actor(Counter, "shared", 100)
    await a.add_slowly.remote(1)
    assert await b.get.remote() == 2


async def test_calls_are_serialised_like_an_actor_mailbox():
    h = state.actor(Counter, "race")
    await asyncio.gather(*(h.add_slowly.remote(1) for _ in range(50)))
    assert await h.get.remote() == 50


async def test_unknown_method_is_an_attribute_error():
    h = state.actor(Counter, "c2")
    try:
        h.nope
    except AttributeError as exc:
        assert "nope" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


class Turnstile:
    """An actor that holds an asyncio lock across calls, as a tail loop does."""

    def __init__(self) -> None:
        self.turn = asyncio.Lock()
        self.loops: set[asyncio.AbstractEventLoop] = set()  # kept alive: ids of closed loops are reused

    async def enter(self, hold: float) -> int:
        self.loops.add(asyncio.get_running_loop())
        async with self.turn:
            await asyncio.sleep(hold)
        return len(self.loops)


def test_calls_from_another_loop_run_on_the_stand_ins_loop():
    # a second test client (or a fuzzer's) calls from its own loop while the first loop still runs
    h = state.actor(Turnstile, "turnstile")
    home = asyncio.new_event_loop()
    runner = threading.Thread(target=home.run_forever, daemon=True)
    runner.start()
    try:

        async def hold() -> int:
            return int(await h.enter.remote(0.2))

        held = asyncio.run_coroutine_threadsafe(hold(), home)
        eventually_sync(lambda: h.instance.turn.locked(), what="the home loop holds the lock")

        async def contend() -> list[int]:
            return list(await asyncio.wait_for(asyncio.gather(*(h.enter.remote(0.01) for _ in range(3))), 10))

        assert asyncio.run(contend()) == [1, 1, 1]  # no "bound to a different event loop", one loop seen
        assert held.result(timeout=10) == 1
    finally:
        home.call_soon_threadsafe(home.stop)
        runner.join(timeout=10)
        home.close()

    # the home loop has ended: the next caller's loop becomes home
    async def enter_later() -> int:
        return int(await h.enter.remote(0))

    assert asyncio.run(enter_later()) == 2


def test_reset_drops_instances():
    a = state.actor(Counter, "r", 1)
    state.reset_local_state()
    b = state.actor(Counter, "r", 9)
    assert a.instance is not b.instance and b.instance.value == 9


async def test_call_and_submit_reach_the_method_named_through_the_class():
    h = state.actor(Counter, "typed", 1)
    assert await state.call(h, Counter.add_slowly, 2) == 3
    assert await state.submit(h, Counter.add_slowly, 4) == 7
    assert await state.call(h, Counter.get) == 7


TYPED_CALLS = """
from rayfleet.state import ActorHandle, call

class Budget:
    def charge(self, amount: float) -> int:
        return 1

    async def spent(self) -> float:
        return 1.0

class Other:
    def charge(self, amount: float) -> int:
        return 1

async def use(h: ActorHandle[Budget], o: ActorHandle[Other]) -> None:
    ok: int = await call(h, Budget.charge, 1.5)
    fine: float = await call(h, Budget.spent)
    await call(h, Budget.charge, "not a number")   # line 18: wrong argument
    await call(h, Budget.chrage, 1.0)              # line 19: renamed method
    wrong: str = await call(h, Budget.spent)       # line 20: misused result
    await call(o, Budget.charge, 1.0)              # line 21: another actor's method
"""


def test_mypy_rejects_mistyped_actor_calls(tmp_path):
    """The reason `call` exists: a renamed or misused actor method fails type checking."""
    from mypy import api

    source = tmp_path / "typed_calls.py"
    source.write_text(TYPED_CALLS)
    out, _, status = api.run(["--strict", "--no-incremental", "--hide-error-context", str(source)])
    errors = {int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line}
    assert status == 1
    assert errors == {18, 19, 20, 21}, out
