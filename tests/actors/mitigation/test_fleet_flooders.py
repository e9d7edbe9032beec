"""Which sources the fleet bans from its nodes' reports: summed rates above the threshold, and any
source one node flagged; never a source under the threshold everywhere and in sum."""

from __future__ import annotations

from actors.mitigation.fleet_counting import fleet_flooders


def row(ip: str, rate: int, flagged: bool = False) -> dict[str, object]:
    return {"ip": ip, "rate": rate, "flagged": flagged}


def test_rates_under_the_threshold_on_each_node_are_summed_across_the_fleet():
    reports = {n: [row("10.0.0.1", 6), row("10.0.0.2", 2)] for n in ("node-1", "node-2", "node-3")}
    flooders = fleet_flooders(reports, threshold=10)
    assert [(f.ip, f.rate) for f in flooders] == [("10.0.0.1", 18)]
    assert flooders[0].reason == "fleet-wide flood: 18 requests/s over 3 nodes"


def test_the_threshold_itself_is_not_a_flood():
    assert fleet_flooders({"node-1": [row("::1", 5)], "node-2": [row("::1", 5)]}, threshold=10) == []


def test_a_source_one_node_flagged_is_banned_whatever_its_rate():
    reports = {"node-1": [row("10.0.0.3", 0)], "node-2": [row("10.0.0.3", 1, flagged=True)]}
    [flooder] = fleet_flooders(reports, threshold=1000)
    assert flooder.ip == "10.0.0.3" and flooder.reason == "flagged by node-2 as a flood"


def test_no_reports_no_bans():
    assert fleet_flooders({}, threshold=1) == []
    assert fleet_flooders({"node-1": []}, threshold=1) == []
