"""The replica side of the actors' long-polls (``actors/llm_gateway/changes.py``): one loop per
followed actor keeps this replica's copy in step, with no timer while nothing changes.

``follow`` calls ``wait(hold)`` (the actor's long-poll, with the version the replica holds), applies
the answer and calls again at once. What keeps a change from being missed is the version, not the
timing: every call carries the version the replica holds, so a change made while no call was held
(between two calls, during a failure) is answered by the next call at once. The cases:

- the actor restarted under a held call: Ray retries the call on the new instance (the actors are
  created with ``max_task_retries=-1``), whose versions start elsewhere, so it answers at once with
  its whole state;
- the call failed (the actor is restarting and Ray gave up, its store is down, or it is an actor of
  an earlier release without the long-poll): after ``RETRY_SECONDS`` a plain read (``read``) takes a
  fresh copy, then the long-poll is re-armed;
- the answer was lost (no answer ``GRACE_SECONDS`` after the actor should have given up holding
  it): the call is dropped and re-armed, with the same version.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from actors.llm_gateway.changes import HOLD_SECONDS
from rayfleet.logs import get_logger

log = get_logger("llm_gateway")

GRACE_SECONDS = 5.0
RETRY_SECONDS = 1.0

T = TypeVar("T")


async def follow(
    name: str,
    version: Callable[[], int],
    wait: Callable[[int, float], Awaitable[T]],
    apply: Callable[[T], Awaitable[Any] | Any],
    read: Callable[[], Awaitable[Any]],
    *,
    hold: float = HOLD_SECONDS,
    retry: float = RETRY_SECONDS,
    grace: float = GRACE_SECONDS,
) -> None:
    """Forever: ``apply(await wait(version(), hold))``; after a failure, ``read()`` once ``retry`` s later;
    a call not answered ``hold + grace`` s after it was made is dropped and made again.

    An answer that changed nothing (``version()`` as before) although it came before half the hold is
    not what a working long-poll does (it holds while nothing changed): the next call waits ``retry``
    s, so such an actor is read at that pace, never in a tight loop."""
    loop = asyncio.get_running_loop()
    while True:
        known, asked = version(), loop.time()
        try:  # asyncio.timeout, not wait_for: a cancel that meets the answer is never swallowed (3.11)
            async with asyncio.timeout(hold + grace):
                answer = await wait(known, hold)
        except Exception as exc:
            if isinstance(exc, TimeoutError) and loop.time() - asked >= hold:
                log.info("long-poll answer lost; re-armed", extra={"follow": name})
                continue
            log.warning("long-poll failed; reading afresh", extra={"follow": name, "error": type(exc).__name__})
            await asyncio.sleep(retry)
            await _read(name, read)
            continue
        try:
            result = apply(answer)
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            log.warning("long-poll answer not applied", extra={"follow": name, "error": type(exc).__name__})
            await asyncio.sleep(retry)
            continue
        if version() == known and loop.time() - asked < hold / 2:
            await asyncio.sleep(retry)


async def _read(name: str, read: Callable[[], Awaitable[Any]]) -> None:
    try:
        await read()
    except Exception as exc:
        log.warning("fresh read failed", extra={"follow": name, "error": type(exc).__name__})
