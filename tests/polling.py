"""Wait for what a test asserts, instead of sleeping for a guess.

    await eventually(lambda: receiver.count == 3)                 # async tests
    eventually_sync(lambda: client.get(url).status_code == 200)   # sync tests

The check is called until it returns something truthy (that value is returned) or
the timeout passes; then the test fails with the last value (or the last exception)
the check produced, so the failure says what was seen. A check may be async. The
pause between checks starts at FIRST_INTERVAL and doubles up to `interval`: what holds
almost at once (a server that is starting) costs milliseconds, and a slow condition
is not polled in a tight loop.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT = 10.0
DEFAULT_INTERVAL = 0.05
FIRST_INTERVAL = 0.005


def _pauses(interval: float) -> Iterator[float]:
    pause = min(FIRST_INTERVAL, interval)
    while True:
        yield pause
        pause = min(pause * 2, interval)


class NotYet(AssertionError):
    """The condition did not hold within the timeout."""


def _failure(what: str, timeout: float, last: Any, error: BaseException | None) -> NotYet:
    seen = f"last raised {error!r}" if error is not None else f"last returned {last!r}"
    return NotYet(f"{what} did not hold within {timeout:g}s ({seen})")


async def eventually(
    check: Callable[[], T | Awaitable[T]],
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = DEFAULT_INTERVAL,
    what: str = "condition",
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """Poll ``check`` (sync or async) until it is truthy; return its value. ``interval`` is the
    longest pause between checks. Exceptions in
    ``ignore`` count as "not yet" (e.g. a server that is not listening yet)."""
    deadline = time.monotonic() + timeout
    pauses = _pauses(interval)
    last: Any = None
    error: BaseException | None = None
    while True:
        try:
            value = check()
            if inspect.isawaitable(value):
                value = await value
            last, error = value, None
            if value:
                return value  # type: ignore[return-value]
        except ignore as exc:
            error = exc
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, last, error)
        await asyncio.sleep(next(pauses))


def eventually_sync(
    check: Callable[[], T],
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = DEFAULT_INTERVAL,
    what: str = "condition",
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """:func:`eventually` for synchronous tests (tier 3 uses blocking clients)."""
    deadline = time.monotonic() + timeout
    pauses = _pauses(interval)
    last: Any = None
    error: BaseException | None = None
    while True:
        try:
            last, error = check(), None
            if last:
                return last
        except ignore as exc:
            error = exc
        if time.monotonic() >= deadline:
            raise _failure(what, timeout, last, error)
        time.sleep(next(pauses))
