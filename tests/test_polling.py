"""The polling helper: returns as soon as the check holds, fails with what it last saw."""

from __future__ import annotations

import pytest

from tests.polling import NotYet, eventually, eventually_sync


async def test_eventually_returns_the_first_truthy_value():
    seen = iter([0, 0, 5])
    assert await eventually(lambda: next(seen), interval=0) == 5


async def test_eventually_awaits_async_checks():
    calls = []

    async def check():
        calls.append(1)
        return len(calls) >= 2

    assert await eventually(check, interval=0) is True


async def test_eventually_fails_with_the_last_value():
    count = {"n": 3}
    with pytest.raises(NotYet, match=r"count == 4 did not hold within 0.05s \(last returned False\)"):
        await eventually(lambda: count["n"] == 4, timeout=0.05, what="count == 4")


async def test_ignored_exceptions_are_not_yet_and_reported():
    def refuse():
        raise ConnectionRefusedError("not listening")

    with pytest.raises(NotYet, match="last raised ConnectionRefusedError"):
        await eventually(refuse, timeout=0.05, ignore=(ConnectionRefusedError,))


async def test_other_exceptions_fail_at_once():
    def broken():
        raise KeyError("boom")

    with pytest.raises(KeyError):
        await eventually(broken, timeout=5)


def test_eventually_sync():
    seen = iter([None, "", "ready"])
    assert eventually_sync(lambda: next(seen), interval=0) == "ready"
    with pytest.raises(NotYet, match="last returned 0"):
        eventually_sync(lambda: 0, timeout=0.05)


def test_the_pauses_start_short_and_grow_to_the_interval():
    from itertools import islice

    from tests.polling import _pauses

    assert list(islice(_pauses(0.05), 6)) == [0.005, 0.01, 0.02, 0.04, 0.05, 0.05]
    assert list(islice(_pauses(0), 2)) == [0, 0]
