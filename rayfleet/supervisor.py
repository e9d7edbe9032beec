"""Supervised children: one way to keep a data-plane process running.

An actor that starts a process (Squid, dnsmasq, HAProxy, c-icap, pve-sim) hands the
supervisor a ``spawn`` coroutine and, optionally, a health ``probe`` and an ``on_restart``
hook. The supervisor watches the child; when it exits, or fails its probe a number of
times in a row, it is restarted after a backoff that doubles while the child keeps dying
young. Like systemd's start limit, more than ``burst`` restarts within ``window`` seconds
stop the attempts (state ``failed``) rather than spin; :meth:`Supervised.reset` tries again.
After a restart ``on_restart`` runs, so the owner re-applies its current state (rules, lists)
to the new process. :meth:`Supervised.status` gives the restart count, the last exit and
the state, for ``/metrics`` and ``rayfleet status --json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, TypeVar

from rayfleet.logs import get_logger

if TYPE_CHECKING:
    from rayfleet.metrics import Metrics

log = get_logger("supervisor")

T = TypeVar("T")

State = Literal["starting", "running", "backoff", "failed", "stopped"]


def die_with_parent() -> None:
    """A spawn's `preexec_fn`: the child gets SIGTERM when the thread that started it ends, so a
    killed owner never leaves its data plane behind; the signal mask a loop thread blocks is cleared."""
    import ctypes

    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


async def spawn_logged(*args: str, log: Path, new_session: bool = True) -> asyncio.subprocess.Process:
    """Start a supervised data-plane child: no stdin, stdout and stderr appended to `log`, ended with
    its owner (`die_with_parent`); `new_session` puts it in a process group of its own, so the owner
    can end the whole group."""
    with open(log, "ab") as out:
        return await asyncio.create_subprocess_exec(
            *args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,
            start_new_session=new_session,
        )


class Child(Protocol):
    """What the supervisor needs of a process (`asyncio.subprocess.Process` is one)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...

    def send_signal(self, sig: int) -> None: ...

    def kill(self) -> None: ...


@dataclass(frozen=True)
class RestartPolicy:
    """When to restart. The defaults suit a proxy that starts in well under a second."""

    initial_backoff: float = 0.5
    max_backoff: float = 30.0
    burst: int = 5
    window: float = 60.0
    probe_interval: float = 2.0
    probe_failures: int = 3
    stop_timeout: float = 5.0

    def __post_init__(self) -> None:
        if self.initial_backoff <= 0 or self.max_backoff < self.initial_backoff:
            raise ValueError("backoff must be positive and max_backoff at least initial_backoff")
        if self.burst < 1 or self.window <= 0 or self.probe_failures < 1 or self.probe_interval <= 0:
            raise ValueError("burst, window, probe_interval and probe_failures must be positive")


class RestartBudget:
    """The pure part: given the times of past restarts, how long to wait before the next, or give up."""

    def __init__(self, policy: RestartPolicy) -> None:
        self.policy = policy
        self._recent: deque[float] = deque()
        self._backoff = policy.initial_backoff

    def next_delay(self, now: float, ran_for: float) -> float | None:
        """The wait before restarting a child that ran ``ran_for`` seconds, or None once the
        burst is spent. A child that ran a whole window starts the backoff over."""
        window = self.policy.window
        while self._recent and now - self._recent[0] > window:
            self._recent.popleft()
        if len(self._recent) >= self.policy.burst:
            return None
        if ran_for >= window:
            self._backoff = self.policy.initial_backoff
        delay = self._backoff
        self._backoff = min(self._backoff * 2, self.policy.max_backoff)
        self._recent.append(now + delay)
        return delay

    def reset(self) -> None:
        self._recent.clear()
        self._backoff = self.policy.initial_backoff


class Status(TypedDict):
    name: str
    state: State
    pid: int | None
    restarts: int
    last_exit: int | None
    last_exit_reason: str | None
    last_exit_at: float | None
    since: float


class Supervised:
    """One supervised child: started by :meth:`start`, watched until :meth:`stop`."""

    def __init__(
        self,
        name: str,
        spawn: Callable[[], Awaitable[Child]],
        *,
        probe: Callable[[], Awaitable[bool]] | None = None,
        on_restart: Callable[[], Awaitable[None]] | None = None,
        policy: RestartPolicy | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self._spawn = spawn
        self._probe = probe
        self._on_restart = on_restart
        self.policy = policy or RestartPolicy()
        self._budget = RestartBudget(self.policy)
        self._clock = clock
        self.child: Child | None = None
        self.state: State = "stopped"
        self.restarts = 0
        self.last_exit: int | None = None
        self.last_exit_reason: str | None = None
        self.last_exit_at: float | None = None
        self.since = clock()
        self._started_at = time.monotonic()
        self._watcher: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> None:
        """Spawn the child and begin watching it (the first spawn's failure is raised)."""
        self._stopping = False
        self._set("starting")
        self.child = await self._spawn()
        self._started_at = time.monotonic()
        self._set("running")
        self._watcher = asyncio.create_task(self._watch(), name=f"supervise-{self.name}")

    async def stop(self) -> None:
        """Stop watching, then end the child: SIGTERM, and SIGKILL after ``stop_timeout``."""
        await self.detach()
        await self._end_child()
        self._set("stopped")

    async def detach(self) -> None:
        """Stop watching and leave the child running (its owner ends it another way)."""
        self._stopping = True
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None

    async def reset(self) -> None:
        """After ``failed``: forget the spent burst and start again."""
        self._budget.reset()
        if self.state == "failed":
            await self.start()

    def status(self) -> Status:
        return Status(
            name=self.name,
            state=self.state,
            pid=self.child.pid if self.child is not None and self.child.returncode is None else None,
            restarts=self.restarts,
            last_exit=self.last_exit,
            last_exit_reason=self.last_exit_reason,
            last_exit_at=self.last_exit_at,
            since=self.since,
        )

    def _set(self, state: State) -> None:
        if state != self.state:
            self.state = state
            self.since = self._clock()

    async def _watch(self) -> None:
        while not self._stopping:
            reason = await self._until_unhealthy()
            if self._stopping:
                return
            await self._end_child()
            assert self.child is not None
            self.last_exit = self.child.returncode
            self.last_exit_reason = reason
            self.last_exit_at = self._clock()
            delay = self._budget.next_delay(time.monotonic(), time.monotonic() - self._started_at)
            log.warning(
                "supervised child ended",
                extra={"child": self.name, "reason": reason, "exit": self.last_exit, "restart_in": delay},
            )
            if delay is None:
                self._set("failed")
                return
            self._set("backoff")
            await asyncio.sleep(delay)
            if not await self._respawn():
                continue

    async def _respawn(self) -> bool:
        self._set("starting")
        try:
            self.child = await self._spawn()
        except Exception as exc:
            log.error("supervised child failed to start", extra={"child": self.name, "error": repr(exc)})
            return False
        self._started_at = time.monotonic()
        self.restarts += 1
        self._set("running")
        if self._on_restart is not None:
            try:
                await self._on_restart()
            except Exception as exc:
                log.error("re-applying state after a restart failed", extra={"child": self.name, "error": repr(exc)})
        return True

    async def _until_unhealthy(self) -> str:
        """Wait until the child exits (``exited``) or fails its probe often enough (``unhealthy``)."""
        assert self.child is not None
        exited = asyncio.ensure_future(self.child.wait())
        failures = 0
        try:
            while not self._stopping:  # a detach whose cancellation was lost still ends the watch
                done, _ = await asyncio.wait({exited}, timeout=self.policy.probe_interval)
                if done:
                    return _exit_reason(exited.result())
                if self._probe is None:
                    continue
                healthy = False
                with contextlib.suppress(Exception):
                    # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation that races
                    # the probe's answer, and `detach` then waited for this loop forever
                    async with asyncio.timeout(self.policy.probe_interval):
                        healthy = await self._probe()
                failures = 0 if healthy else failures + 1
                if failures >= self.policy.probe_failures:
                    return f"failed {failures} health probes"
            return "stopping"
        finally:
            if not exited.done():
                exited.cancel()

    async def _end_child(self) -> None:
        child = self.child
        if child is None or child.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(child.wait(), timeout=self.policy.stop_timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.wait()


class SupervisedProcess:
    """What an owner of one supervised data-plane process shows of it (HAProxy, nginx, ...):
    the owner sets `supervised`; `process_ids` lists the main process and its direct children."""

    supervised: Supervised

    @property
    def pid(self) -> int | None:
        child = self.supervised.child
        return child.pid if child is not None and child.returncode is None else None

    @property
    def running(self) -> bool:
        return self.supervised.state == "running" and self.pid is not None

    def status(self) -> Status:
        return self.supervised.status()

    def process_ids(self) -> list[int]:
        """The main process and its workers (for CPU and memory figures)."""
        main = self.pid
        return [] if main is None else [main, *children_of(main)]


def children_of(pid: int) -> list[int]:
    """The direct children of `pid`, forked by any of its threads (from /proc; empty once it is gone)."""
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError, ValueError):
            children.extend(int(p) for p in task.read_text().split())
    return children


def cpu_seconds(pid: int) -> float:
    """User + system CPU time process `pid` (all its threads) used so far, from /proc; OSError once it is gone."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _exit_reason(code: int) -> str:
    if code >= 0:
        return f"exited with {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


class SupervisorThread:
    """Supervised children for an owner without an event loop (a threaded actor, a CLI):
    the supervisors run on a loop in a daemon thread, and the owner calls in from its own.
    :meth:`run` runs any coroutine there, so a ``spawn`` or ``on_restart`` coroutine and the
    owner's calls never share state across loops."""

    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"supervisor-{name}", daemon=True)
        self._thread.start()
        self.children: dict[str, Supervised] = {}

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=timeout)

    def start(self, child: Supervised) -> None:
        """Start ``child`` on this thread's loop (the first spawn's failure is raised here)."""
        self.children[child.name] = child
        self.run(child.start())

    def stop(self, name: str) -> None:
        child = self.children.pop(name, None)
        if child is not None:
            self.run(child.stop())

    def statuses(self) -> list[Status]:
        return [child.status() for child in self.children.values()]

    def close(self) -> None:
        """Stop every child, then the loop."""
        for name in list(self.children):
            with contextlib.suppress(Exception):
                self.stop(name)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


class ChildMetrics:
    """The supervised children of a component in its ``/metrics``: one series per child.

    A component's health body lists the same :class:`Status` dicts under ``children``, which
    ``rayfleet status --json`` passes through."""

    def __init__(self, metrics: Metrics) -> None:
        self.restarts = metrics.gauge(
            "rayfleet_child_restarts", "Times the supervisor restarted this child process", ("child",)
        )
        self.up = metrics.gauge("rayfleet_child_up", "1 while the child process runs", ("child",))
        self.last_exit = metrics.gauge(
            "rayfleet_child_last_exit_code", "Exit code of the child's last exit (negative: signal)", ("child",)
        )

    def update(self, statuses: Iterable[Status]) -> None:
        for status in statuses:
            name = status["name"]
            self.restarts.labels(name).set(status["restarts"])
            self.up.labels(name).set(1 if status["state"] == "running" else 0)
            if status["last_exit"] is not None:
                self.last_exit.labels(name).set(status["last_exit"])
