"""The proxy actor's background task that refreshes list subscriptions when they are due.

A thread of the (synchronous) proxy actor: it waits until the next subscription is due (or is woken by a
new one or a "refresh now"), downloads each due list without holding the actor's lock (a slow list server
never delays an API call), then hands the outcome to the owner, which applies a changed copy and records
it under its lock.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from actors.webfilter.subscriptions import Outcome, Subscriptions, download
from rayfleet.logs import get_logger

log = get_logger("webfilter.subscriptions")
MAX_SLEEP = 60.0


class Refresher:
    def __init__(self, subs: Subscriptions, lock: threading.RLock, record: Callable[[str, Outcome], None]) -> None:
        self.subs = subs
        self.lock = lock
        self.record = record
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="webfilter-subscriptions", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            with self.lock:
                due = self.subs.due(time.time())
            for key, meta in due:
                if self._stop.is_set():
                    return
                try:
                    self.record(key, asyncio.run(download(meta, self.subs.settings)))
                except Exception as exc:  # one list's trouble must not end the task for the others
                    log.error("subscription refresh failed", extra={"subscription": key, "error": repr(exc)})
                    with self.lock:
                        self.subs.postpone(key, time.time())
            self._wake.wait(self._sleep())
            self._wake.clear()

    def _sleep(self) -> float:
        with self.lock:
            if self.subs.forced:
                return 0.0
            next_at = self.subs.next_at()
        return MAX_SLEEP if next_at is None else min(MAX_SLEEP, max(0.0, next_at - time.time()))
