"""Supervised children: restarted when they die or stop answering, within a start limit."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest

from rayfleet.metrics import Metrics
from rayfleet.supervisor import ChildMetrics, RestartBudget, RestartPolicy, Supervised, SupervisorThread
from tests.polling import eventually, eventually_sync

FAST = RestartPolicy(initial_backoff=0.05, max_backoff=0.2, burst=3, window=5.0, probe_interval=0.05, probe_failures=2)


def python_child(code: str):
    async def spawn():
        return await asyncio.create_subprocess_exec(sys.executable, "-c", code)

    return spawn


SLEEPER = python_child("import time; time.sleep(600)")


@pytest.fixture
async def supervised():
    made: list[Supervised] = []

    def make(*args, **kw) -> Supervised:
        made.append(Supervised(*args, **kw))
        return made[-1]

    yield make
    for s in made:
        await s.stop()


async def test_a_killed_child_is_restarted_and_its_owner_told(supervised):
    reapplied = []

    async def on_restart():
        reapplied.append(True)

    s = supervised("proxy", SLEEPER, on_restart=on_restart, policy=FAST)
    await s.start()
    first = s.child.pid
    os.kill(first, signal.SIGKILL)

    await eventually(lambda: s.restarts == 1 and s.state == "running", what="restart")
    status = s.status()
    assert status["pid"] not in (None, first)
    assert status["last_exit"] == -signal.SIGKILL and status["last_exit_reason"] == "killed by SIGKILL"
    assert reapplied == [True]


async def test_a_child_that_fails_its_probe_is_replaced(supervised):
    healthy = {"now": True}

    async def probe():
        return healthy["now"]

    s = supervised("resolver", SLEEPER, probe=probe, policy=FAST)
    await s.start()
    first = s.child.pid
    await asyncio.sleep(FAST.probe_interval * 3)  # healthy probes: nothing happens (the behaviour under test)
    assert s.restarts == 0 and s.child.pid == first

    healthy["now"] = False
    await eventually(lambda: s.restarts >= 1, what="restart after failed probes")
    healthy["now"] = True
    assert s.status()["last_exit_reason"] == "failed 2 health probes"
    assert s.child.pid != first


async def test_a_child_that_keeps_dying_hits_the_start_limit(supervised):
    s = supervised("broken", python_child("raise SystemExit(3)"), policy=FAST)
    await s.start()
    await eventually(lambda: s.state == "failed", what="start limit")
    assert s.restarts == FAST.burst
    assert s.status()["last_exit"] == 3 and s.status()["last_exit_reason"] == "exited with 3"


async def test_reset_after_the_start_limit_starts_again(supervised):
    s = supervised("broken", python_child("raise SystemExit(3)"), policy=FAST)
    await s.start()
    await eventually(lambda: s.state == "failed", what="start limit")
    s._spawn = SLEEPER
    await s.reset()
    assert s.state == "running" and s.child.returncode is None


async def test_stop_ends_the_child_and_restarts_nothing(supervised, tmp_path):
    ready = tmp_path / "ready"
    stubborn = (
        "import pathlib, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "pathlib.Path(sys.argv[1]).touch(); time.sleep(600)"
    )

    async def spawn():
        return await asyncio.create_subprocess_exec(sys.executable, "-c", stubborn, str(ready))

    s = supervised("proxy", spawn, policy=RestartPolicy(stop_timeout=0.2))
    await s.start()
    await eventually(ready.exists, what="child ignoring SIGTERM")
    child = s.child
    await s.stop()
    assert child.returncode == -signal.SIGKILL  # it ignored SIGTERM, so it was killed
    assert s.state == "stopped" and s.restarts == 0 and s.status()["pid"] is None


def test_the_backoff_doubles_up_to_its_cap_and_the_burst_gives_up():
    budget = RestartBudget(RestartPolicy(initial_backoff=1, max_backoff=4, burst=4, window=100))
    delays = [budget.next_delay(now=t, ran_for=0.1) for t in (0, 1, 2, 3)]
    assert delays == [1, 2, 4, 4]
    assert budget.next_delay(now=10, ran_for=0.1) is None
    assert budget.next_delay(now=200, ran_for=0.1) == 4  # the window has passed: the burst is back


def test_a_child_that_ran_a_whole_window_starts_the_backoff_over():
    budget = RestartBudget(RestartPolicy(initial_backoff=1, max_backoff=8, burst=10, window=60))
    assert [budget.next_delay(now=t, ran_for=0.1) for t in (0, 1, 2)] == [1, 2, 4]
    assert budget.next_delay(now=3, ran_for=61) == 1


@pytest.mark.parametrize(
    "bad", [dict(initial_backoff=0), dict(initial_backoff=2, max_backoff=1), dict(burst=0), dict(probe_failures=0)]
)
def test_a_nonsense_policy_is_refused(bad):
    with pytest.raises(ValueError):
        RestartPolicy(**bad)


def test_a_supervisor_thread_restarts_a_child_for_an_owner_without_a_loop():
    """A threaded actor starts its child through SupervisorThread and sees it restarted."""

    async def spawn() -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec("sleep", "60")

    thread = SupervisorThread("test")
    try:
        child = Supervised("sleeper", spawn, policy=RestartPolicy(initial_backoff=0.05, probe_interval=0.05))
        thread.start(child)
        first = thread.statuses()[0]["pid"]
        assert first is not None
        os.kill(first, signal.SIGKILL)
        eventually_sync(lambda: thread.statuses()[0]["restarts"] == 1 and thread.statuses()[0]["state"] == "running")
        status = thread.statuses()[0]
        assert status["pid"] not in (None, first) and status["last_exit"] == -signal.SIGKILL
    finally:
        thread.close()
    assert thread.statuses() == []


def test_child_metrics_show_restarts_up_and_last_exit():
    metrics = Metrics("test-children")
    exported = ChildMetrics(metrics)
    exported.update(
        [
            {
                "name": "squid",
                "state": "running",
                "pid": 1,
                "restarts": 3,
                "last_exit": -9,
                "last_exit_reason": "killed by SIGKILL",
                "last_exit_at": 1.0,
                "since": 1.0,
            },
            {
                "name": "dnsmasq",
                "state": "failed",
                "pid": None,
                "restarts": 5,
                "last_exit": 2,
                "last_exit_reason": "exited with 2",
                "last_exit_at": 1.0,
                "since": 1.0,
            },
        ]
    )
    series = metrics._gauge_sets
    assert series[("rayfleet_child_restarts", ("squid",))] == 3
    assert series[("rayfleet_child_up", ("squid",))] == 1 and series[("rayfleet_child_up", ("dnsmasq",))] == 0
    assert series[("rayfleet_child_last_exit_code", ("dnsmasq",))] == 2
