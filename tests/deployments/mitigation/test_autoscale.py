"""Autoscaling over real HAProxy nodes: sustained served load adds a node that serves, an idle fleet
shrinks after the longer window, the bounds hold, and a flood the node refuses is not load."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from actors.mitigation.fleet import MitigationFleet
from actors.mitigation.settings import AutoscaleSettings
from tests.polling import eventually

API = "/api/v1"
AUTOSCALE = AutoscaleSettings(
    enabled=True,
    min_nodes=1,
    max_nodes=2,
    target_rps_per_node=5.0,
    scale_down_ratio=0.5,
    scale_up_after_s=1.5,
    scale_down_after_s=3.0,
    cooldown_s=0.5,
)


@contextlib.asynccontextmanager
async def load(client: httpx.AsyncClient, url: str) -> AsyncIterator[dict[str, int]]:
    """Requests back to back (one at a time) to `url` until the block ends; counts the answers."""
    counts: dict[str, int] = {"ok": 0, "refused": 0}

    async def send() -> None:
        while True:
            try:
                response = await client.get(f"{url}/")
                counts["ok" if response.status_code == 200 else "refused"] += 1
            except httpx.TransportError:
                counts["refused"] += 1

    task = asyncio.create_task(send())
    try:
        yield counts
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def healthy(fleet: Any) -> list[str]:
    listed = (await fleet.client.get(f"{API}/nodes")).json()["nodes"]
    return [n["id"] for n in listed if n["status"] == "healthy"]


async def test_sustained_load_adds_a_node_that_serves_and_idleness_removes_it(make_fleet, data_plane):
    fleet = await make_fleet(autoscale=AUTOSCALE, flood_rps=100000)
    async with load(data_plane, fleet.node_url()) as counts:
        assert await eventually(lambda: counts["ok"] > 0, what="the load is served")

        async def two() -> bool:
            return await healthy(fleet) == ["node-1", "node-2"]

        await eventually(two, timeout=30, what="a node added under load")
        served = await data_plane.get(f"{fleet.node_url('node-2')}/")
        assert served.status_code == 200
        view = (await fleet.client.get(f"{API}/autoscale")).json()
        up = view["decisions"][0]
        assert up["change"] == 1 and up["applied"] is True and up["nodes_changed"] == ["node-2"]
        assert "above target 5" in up["reason"]
        # still loaded (all of it on node-1: per node above target), but max_nodes is 2
        held = await eventually(
            lambda: _current(fleet, "at max_nodes"), timeout=30, what="the autoscaler holds at max_nodes"
        )
        assert held["change"] == 0
        assert len(fleet.fleet.nodes) == 2
    await eventually(lambda: len(fleet.fleet.nodes) == 1, timeout=30, what="the idle node removed")
    view = (await fleet.client.get(f"{API}/autoscale")).json()
    down = view["decisions"][0]
    assert down["change"] == -1 and down["applied"] is True and "below 2.5" in down["reason"]
    assert view["settings"]["max_nodes"] == 2
    # idle at min_nodes: it stays there
    await eventually(lambda: _current(fleet, "rps/node, target 5"), timeout=30, what="an evaluation at min_nodes")
    assert len(fleet.fleet.nodes) == 1


async def test_a_flood_the_node_refuses_is_not_load_to_scale_for(make_fleet, data_plane):
    # refused request by request (429 from the rate limit, HAProxy's `dreq`), not at connection time:
    # the frontend's request counter sees every one of them, the served counter does not
    fleet = await make_fleet(autoscale=AUTOSCALE, flood_rps=100000, rate_limit_rps=2)
    async with load(data_plane, fleet.node_url()) as counts:
        await eventually(lambda: counts["refused"] > 200, timeout=30, what="the flood refused")
        node = fleet.node()
        start = node.counters["served"].total
        # many evaluations over several up windows, every one under target while the flood goes on
        seen: list[dict[str, Any]] = []

        def evaluations() -> bool:
            current = fleet.fleet.autoscale_current
            if current is not None and (not seen or current["at"] != seen[-1]["at"]):
                seen.append(current)
            return len(seen) >= 8

        await eventually(evaluations, timeout=30, what="eight evaluations under the flood")
        assert counts["refused"] > 10 * max(1, node.counters["served"].total - start)
    assert len(fleet.fleet.nodes) == 1
    assert all(e["change"] == 0 for e in seen), seen
    # one heartbeat interval can hold a burst of the 2-3 requests/s let through, never a whole window
    loads = [e["load_per_node"] for e in seen if e["load_per_node"] is not None]
    assert loads and sum(loads) / len(loads) < 5, seen


async def test_manual_scale_stays_within_the_bounds_and_sets_the_cooldown(make_fleet):
    fleet = await make_fleet(autoscale=AUTOSCALE.model_copy(update={"cooldown_s": 3600.0}))
    beyond = await fleet.client.post(f"{API}/scale", json={"action": "scale_up", "count": 2})
    assert beyond.status_code == 409
    assert "[1, 2]" in beyond.json()["error"]["message"]
    up = await fleet.client.post(f"{API}/scale", json={"action": "scale_up", "count": 1})
    assert up.status_code == 200
    view = (await fleet.client.get(f"{API}/autoscale")).json()
    assert view["decisions"][0]["reason"] == "manual /scale"
    current = await eventually(lambda: _current(fleet, "cooldown"), what="the cooldown after /scale")
    assert current["change"] == 0
    assert len(fleet.fleet.nodes) == 2  # idle, but not scaled down during the cooldown


def _current(fleet: Any, text: str) -> dict[str, Any] | None:
    current = fleet.fleet.autoscale_current
    return current if current is not None and text in current["reason"] else None


@pytest.mark.parametrize(
    "change,problem",
    [
        ({"enabled": "true"}, "enabled"),
        ({"min_nodes": 0}, "min_nodes"),
        ({"min_nodes": 3, "max_nodes": 2}, "min_nodes must not exceed"),
        ({"max_nodes": 9}, "fleet's max_nodes"),  # the fleet's max_nodes is 8
        ({"target_rps_per_node": -1.0}, "target_rps_per_node"),
        ({"scale_down_after_s": 1.0}, "scale_down_after_s must be at least"),
        ({"step": 1.5}, "step"),
        ({"flap": True}, "flap"),
    ],
)
async def test_bad_autoscale_settings_are_422_and_change_nothing(make_fleet, change, problem):
    fleet = await make_fleet()
    body = {**AUTOSCALE.model_dump(), **change}
    refused = await fleet.client.put(f"{API}/autoscale", json=body)
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "validation_error"
    assert problem in refused.text
    assert (await fleet.client.get(f"{API}/autoscale")).json()["settings"]["enabled"] is False


async def test_autoscale_settings_put_are_in_force_and_kept_for_a_restarted_fleet(make_fleet):
    fleet = await make_fleet()
    put = await fleet.client.put(f"{API}/autoscale", json={**AUTOSCALE.model_dump(), "max_nodes": 3})
    assert put.status_code == 200
    assert put.json()["settings"]["enabled"] is True and put.json()["settings"]["max_nodes"] == 3
    await eventually(lambda: fleet.fleet.autoscale_current, what="an evaluation with the new settings")
    again = MitigationFleet(
        fleet.fleet.settings.model_copy(update={"autoscale": AutoscaleSettings()}), fleet.fleet.name
    )
    assert again.settings.autoscale.enabled is True and again.settings.autoscale.max_nodes == 3
    await again.webhooks.close()
