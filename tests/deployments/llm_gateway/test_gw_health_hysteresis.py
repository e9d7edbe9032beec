"""Prober hysteresis against a flapping upstream on a real socket: ``endpoint_down`` and
``endpoint_up`` fire once per real transition (``health_check.unhealthy_threshold`` /
``healthy_threshold``), an alternating upstream fires nothing, every probe still feeds the
breaker, and bad thresholds stop the config from loading."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from actors.llm_gateway import BreakerBoard, EndpointProber
from deployments.llm_gateway.config import load
from rayfleet import state
from rayfleet.config import ConfigError
from tests.conftest import free_port
from tests.deployments.llm_gateway.conftest import ADMIN_KEY, base_config
from tests.polling import eventually


class Flapper:
    """An upstream whose model listing answers by a schedule the test sets, one status per request."""

    def __init__(self) -> None:
        self.schedule: deque[int] = deque()
        self.steady = 200  # once the schedule is used up
        self.served: list[int] = []
        self.url = ""

    def play(self, *statuses: int) -> None:
        self.schedule.extend(statuses)

    async def models(self, request: web.Request) -> web.Response:
        status = self.schedule.popleft() if self.schedule else self.steady
        self.served.append(status)
        if status >= 500:
            return web.json_response({"error": {"message": "flapping", "type": "server_error"}}, status=status)
        return web.json_response({"object": "list", "data": [{"id": "m", "object": "model"}]})


@pytest.fixture
async def flapper() -> AsyncIterator[Flapper]:
    flap = Flapper()
    app = web.Application()
    app.router.add_get("/v1/models", flap.models)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    flap.url = f"http://127.0.0.1:{port}/v1"
    yield flap
    await runner.cleanup()


def flap_cfg(tmp_path: Path, flap: Flapper, **health: Any) -> dict[str, Any]:
    return base_config(
        tmp_path,
        {"f": {"base_url": flap.url, "models": ["m"]}},
        circuit_breaker={"failure_threshold": 2, "recovery_timeout": 600},
        health_check={"enabled": True, "interval": 600, "jitter": 0.0, "timeout": 5, **health},
    )


async def gateway_with_board(serve, tmp_path: Path, cfg: dict[str, Any], tag: str) -> tuple[Any, Any, Any]:
    breakers = state.actor(BreakerBoard, f"gw-test-hy-breakers-{tag}-{tmp_path.name}", 2, 600.0, 30.0)
    prober = state.actor(EndpointProber, f"gw-test-hy-prober-{tag}-{tmp_path.name}", breakers)
    gw = await serve(cfg, state={"breakers": breakers, "prober": prober})
    return gw, breakers.instance, prober.instance


def health_events(board: BreakerBoard) -> Counter[str]:
    return Counter(e["event"] for e in board.events() if e["event"] in ("endpoint_down", "endpoint_up"))


async def relayed(gw: Any) -> Counter[str]:
    """The health events the replica relayed into its event log (``GET /admin/events``)."""
    await gw.gateway.views.breakers.refresh()
    async with gw.client(ADMIN_KEY) as c:
        events = (await c.get("/admin/events")).json()["events"]
    return Counter(e["type"] for e in events if e["type"] in ("endpoint_down", "endpoint_up"))


async def test_a_flapping_upstream_fires_once_per_real_transition(serve, flapper, tmp_path, auth_env):
    cfg = flap_cfg(tmp_path, flapper, unhealthy_threshold=3, healthy_threshold=2)
    gw, board, prober = await gateway_with_board(serve, tmp_path, cfg, "real")
    await eventually(lambda: prober.status()["rounds"] >= 1, what="the first probe round")
    assert board.peek("f")["health"] == "up" and flapper.served == [200]

    async def rounds(*statuses: int) -> None:
        flapper.play(*statuses)
        for _ in statuses:
            await prober.probe_round()
        assert not flapper.schedule

    await rounds(*(503, 200) * 6)  # alternating: never three failures nor (from up) anything to report
    view = board.peek("f")
    assert view["health"] == "up" and health_events(board) == Counter()
    await rounds(503, 503)  # the breaker is fed by every probe: two failures open it, the mark waits
    assert board.peek("f")["state"] == "OPEN" and board.peek("f")["health"] == "up"
    await rounds(503, 503, 503)  # the third failure in a row is the transition; more failures add nothing
    assert board.peek("f")["health"] == "down" and health_events(board) == Counter({"endpoint_down": 1})
    await rounds(200, 503, 200, 503, 200)  # single successes: still down
    assert board.peek("f")["health"] == "down"
    await rounds(200, 200, 200)  # two in a row: up, once
    assert board.peek("f")["health"] == "up"
    assert health_events(board) == Counter({"endpoint_down": 1, "endpoint_up": 1})
    assert await relayed(gw) == Counter({"endpoint_down": 1, "endpoint_up": 1})
    (down,) = [e for e in board.events() if e["event"] == "endpoint_down"]
    assert down["reason"] == "HTTP 503"

    feed = gw.gateway.views.health
    assert feed is not None
    await feed.push()  # what /health shows is the prober's answer to the replica's last push
    async with gw.client(None) as anon:
        shown = (await anon.get("/health")).json()["health_check"]
    assert shown["unhealthy_threshold"] == 3 and shown["healthy_threshold"] == 2
    assert shown["targets"] == 1 and shown["running"] is True and shown["stale"] == 0
    assert shown["rounds"] == len(flapper.served) and shown["failures"] == flapper.served.count(503)


async def test_thresholds_of_one_report_every_flap(serve, flapper, tmp_path, auth_env):
    cfg = flap_cfg(tmp_path, flapper, unhealthy_threshold=1, healthy_threshold=1)
    gw, board, prober = await gateway_with_board(serve, tmp_path, cfg, "one")
    await eventually(lambda: prober.status()["rounds"] >= 1, what="the first probe round")
    flapper.play(*(503, 200) * 4)
    for _ in range(8):
        await prober.probe_round()
    assert health_events(board) == Counter({"endpoint_down": 4, "endpoint_up": 4})
    assert await relayed(gw) == Counter({"endpoint_down": 4, "endpoint_up": 4})


async def test_the_background_loop_rides_out_flaps(serve, flapper, tmp_path, auth_env):
    flapper.play(503, 200, 503, 200, 503, 503, 200, 503, 503, 503, 503, 200, 503, 200, 200)
    cfg = flap_cfg(tmp_path, flapper, interval=0.1, timeout=0.1, unhealthy_threshold=3, healthy_threshold=2)
    gw, board, _ = await gateway_with_board(serve, tmp_path, cfg, "loop")
    await eventually(lambda: len(flapper.served) >= 17, timeout=30, what="the schedule played by the loop")
    # unknown, up at the first 200 (no event), down at the run of four 503s, up at the closing 200, 200;
    # a probe timing out on a loaded machine (a failure, like a 503) would only move where a run starts
    assert health_events(board) == Counter({"endpoint_down": 1, "endpoint_up": 1})
    assert board.peek("f")["health"] == "up"
    assert await relayed(gw) == Counter({"endpoint_down": 1, "endpoint_up": 1})


@pytest.mark.parametrize(
    ("health", "message"),
    [
        ({"unhealthy_threshold": 0}, "health_check.unhealthy_threshold: Input should be greater than or equal to 1"),
        ({"healthy_threshold": 101}, "health_check.healthy_threshold: Input should be less than or equal to 100"),
        ({"healthy_threshold": 1.5}, "health_check.healthy_threshold: Input should be a valid integer"),
        ({"unhealthy_threshold": True}, "health_check.unhealthy_threshold: Input should be a valid integer"),
        ({"unhealthy_threshold": "3"}, "health_check.unhealthy_threshold: Input should be a valid integer"),
    ],
)
def test_bad_thresholds_stop_the_config_from_loading(tmp_path, health, message):
    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump({"health_check": health}))
    with pytest.raises(ConfigError) as refused:
        load(path)
    assert message in str(refused.value)


def test_thresholds_load_from_the_file_and_the_environment(tmp_path, monkeypatch):
    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump({"health_check": {"unhealthy_threshold": 4}}))
    monkeypatch.setenv("LLM_GATEWAY__HEALTH_CHECK__HEALTHY_THRESHOLD", "3")
    hc = load(path).health_check
    assert (hc.unhealthy_threshold, hc.healthy_threshold) == (4, 3)
