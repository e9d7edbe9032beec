"""The actor-backed limiter: coalesced calls stay exact, failures reach every waiting request."""

import asyncio

import pytest

from actors.rate_limit import RateLimitWindow
from deployments.asn.limiter import ActorLimiter
from rayfleet import state


class CountingHandle:
    """Wraps the local stand-in to count how many actor calls were made."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls = 0
        outer = self

        class Method:
            def remote(self, *args):
                outer.calls += 1
                return outer.inner.hit_many.remote(*args)

        self.hit_many = Method()


async def test_concurrent_hits_are_coalesced_and_exact():
    handle = CountingHandle(state.actor(RateLimitWindow, "rate_limit_coalesce_test"))
    limiter = ActorLimiter(handle, limit=50, window_seconds=60)
    decisions = await asyncio.gather(*(limiter.hit("198.51.100.1") for _ in range(200)))
    assert sum(d.allowed for d in decisions) == 50
    assert [d.allowed for d in decisions] == [True] * 50 + [False] * 150  # arrival order is kept
    assert handle.calls < 20  # one call in flight at a time; the rest ride along


async def test_actor_failure_reaches_every_waiter():
    class Broken:
        class hit_many:
            @staticmethod
            def remote(*args):
                async def fail():
                    raise RuntimeError("actor died")

                return asyncio.ensure_future(fail())

    limiter = ActorLimiter(Broken(), limit=5, window_seconds=60)
    results = await asyncio.gather(*(limiter.hit("x") for _ in range(5)), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    with pytest.raises(RuntimeError):
        await limiter.hit("x")  # a later call is not stuck behind the failed batch
