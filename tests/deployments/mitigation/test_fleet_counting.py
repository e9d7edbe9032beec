"""Fleet-wide counting (`fleet_flood_rps`): a flood spread over three nodes, below each node's own
threshold, is caught by the fleet summing every node's per-source rates, and banned on every node;
a source one node flags is refused by the others too. Three real HAProxy nodes."""

from __future__ import annotations

import asyncio

from tests.deployments.mitigation.conftest import Fleet
from tests.deployments.mitigation.test_kept_state import get
from tests.deployments.mitigation.test_kept_stick_tables import flood
from tests.polling import eventually

NODES = ("node-1", "node-2", "node-3")


async def refused_everywhere(fleet: Fleet, source: str) -> bool:
    return all([await get(fleet.node_url(n) + "/", source) == 0 for n in NODES])


async def test_a_flood_spread_over_three_nodes_below_each_nodes_threshold_is_banned_fleet_wide(make_fleet):
    fleet = await make_fleet(initial_nodes=3, flood_rps=10, fleet_flood_rps=10)
    # 6 requests/s on each node at once: under 10 on each, 18 across the fleet within one second (one
    # node after the other, a loaded machine let the first node's 1 s rate fall before the last one's)
    await asyncio.gather(*(flood(fleet.node_url(n) + "/", "127.0.0.66", requests=6) for n in NODES))
    await asyncio.gather(*(flood(fleet.node_url(n) + "/", "127.0.0.67", requests=2) for n in NODES))  # 6 in all
    assert all(fleet.node(n).threats.sources.get("127.0.0.66") is None for n in NODES)  # no node saw a flood

    await eventually(lambda: refused_everywhere(fleet, "127.0.0.66"), timeout=5, what="refused by every node")
    ban = fleet.fleet.blacklist["127.0.0.66"]
    assert ban["source"] == "fleet" and ban["reason"].startswith("fleet-wide flood")
    assert "127.0.0.67" not in fleet.fleet.blacklist
    assert all([await get(fleet.node_url(n) + "/", "127.0.0.67") == 200 for n in NODES])


async def test_without_fleet_counting_the_spread_flood_passes(make_fleet):
    fleet = await make_fleet(initial_nodes=3, flood_rps=10)
    for node_id in NODES:
        await flood(fleet.node_url(node_id) + "/", "127.0.0.68", requests=6)
    assert all([await get(fleet.node_url(n) + "/", "127.0.0.68") == 200 for n in NODES])


async def test_a_flooder_one_node_flags_is_refused_by_the_others(make_fleet):
    fleet = await make_fleet(initial_nodes=3, flood_rps=5, fleet_flood_rps=1000)
    await flood(fleet.node_url("node-1") + "/", "127.0.0.69", requests=20)
    assert await get(fleet.node_url("node-1") + "/", "127.0.0.69") == 0
    await eventually(lambda: refused_everywhere(fleet, "127.0.0.69"), timeout=5, what="refused by every node")
    assert fleet.fleet.blacklist["127.0.0.69"]["reason"].startswith("flagged by node-1")


async def test_many_sources_caught_at_once_are_banned_in_one_batch_on_every_node(make_fleet):
    """A 1,000-source flood puts hundreds of sources over the fleet threshold in one count: they are
    recorded in one transaction and reach each node in one call (runtime API lines of 100 commands)."""
    fleet = await make_fleet(initial_nodes=3)
    sources = [f"127.0.{3 + i // 250}.{1 + i % 250}" for i in range(300)]
    banned = await fleet.fleet.add_blacklist_many([(s, "fleet-wide flood: test") for s in sources], 600)
    assert banned == sources
    for node_id in NODES:
        node = fleet.node(node_id)
        shown = await node.proc.command(f"show map {node.paths.blacklist}")
        assert {line.split()[1] for line in shown.splitlines() if line.strip()} >= set(sources)
        assert len(node.state.bans) == 300 and node.blacklist["127.0.3.7"]["source"] == "fleet"
    assert await refused_everywhere(fleet, sources[0]) and await refused_everywhere(fleet, sources[-1])
    assert all([await get(fleet.node_url(n) + "/", "127.0.9.9") == 200 for n in NODES])  # only those
    listed = (await fleet.client.get("/api/v1/blacklist")).json()
    assert listed["total"] == 300
