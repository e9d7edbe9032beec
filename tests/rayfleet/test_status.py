"""The fleet report (`rayfleet.status`): one function behind `rayfleet status --json` and the console."""

from __future__ import annotations

import json
import os

from rayfleet import cli, deploy, upstate
from rayfleet.status import Fleet, Probe, children, data_planes, direct_urls, fleet_report, hand_to_platform
from tests.conftest import ROOT
from tests.rayfleet.fleet_fakes import BASE, FLEET, FakeHealth, placed


async def test_the_report_lists_urls_health_placement_and_data_planes():
    health = FakeHealth()
    report = await fleet_report(FLEET, placed(), health, placement_at=12.5)
    assert list(report) == ["ingress", "base_url", "console_url", "placement_at", "components"]
    assert report["console_url"] == BASE + "/" and report["placement_at"] == 12.5
    assert list(report["components"]) == ["asn", "lxc", "mitigation", "webfilter"]
    asn = report["components"]["asn"]
    assert asn == {
        "serve_url": BASE + "/asn/",
        "direct_url": "http://127.0.0.2:8091/",
        "direct_urls": ["http://127.0.0.2:8091/", "http://127.0.0.3:8091/"],
        "docs": BASE + "/asn/api/docs",
        "ui": None,
        "health": "ok",
        "health_status": {"serve": 200, "direct": 200},
        "serve_status": "RUNNING",
        "replicas": 2,
        "nodes": ["127.0.0.2", "127.0.0.3"],
        "data_planes": [],
        "children": [],
    }
    lxc = report["components"]["lxc"]
    assert lxc["ui"] == BASE + "/lxc/" and lxc["docs"] == BASE + "/lxc/api/v1/docs"
    assert lxc["direct_url"] is None and lxc["health_status"] == {"serve": 200, "direct": None}
    assert report["components"]["mitigation"]["data_planes"] == [
        {"kind": "haproxy", "address": "127.0.0.1:41001"},
        {"kind": "haproxy", "address": "127.0.0.1:41002"},
    ]
    assert report["components"]["webfilter"]["ui"] == BASE + "/webfilter/"
    assert report["components"]["webfilter"]["data_planes"] == [
        {"kind": "squid", "address": "127.0.0.1:3128"},
        {"kind": "dnsmasq", "address": "127.53.0.1:53"},
    ]
    assert sorted(health.asked) == sorted([*health.answers])  # each health route once, the first direct one


async def test_a_health_route_that_fails_or_does_not_answer_makes_the_component_unhealthy():
    health = FakeHealth()
    health.answers[BASE + "/lxc/api/v1/health"] = Probe(503, {"status": "degraded"})
    del health.answers["http://127.0.0.2:8091/api/health"]
    components = (await fleet_report(FLEET, placed(), health))["components"]
    assert components["lxc"]["health"] == "unhealthy"
    assert components["lxc"]["health_status"] == {"serve": 503, "direct": None}
    assert components["asn"]["health"] == "unhealthy"
    assert components["asn"]["health_status"] == {"serve": 200, "direct": 0}
    assert components["webfilter"]["health"] == "ok"


async def test_without_a_placement_the_direct_url_is_on_loopback_and_replicas_unknown():
    components = (await fleet_report(FLEET, {}, FakeHealth()))["components"]
    assert components["asn"]["direct_urls"] == ["http://127.0.0.1:8091/"]
    assert components["asn"]["replicas"] is None and components["asn"]["serve_status"] is None
    assert components["asn"]["nodes"] == []


def test_direct_urls_per_node():
    assert direct_urls("http://{node}:9", ["127.0.0.2", "127.0.0.3"]) == ["http://127.0.0.2:9", "http://127.0.0.3:9"]
    assert direct_urls("http://{node}:9", []) == ["http://127.0.0.1:9"]
    assert direct_urls("https://127.0.0.9:9", ["127.0.0.2"]) == ["https://127.0.0.9:9"]
    assert direct_urls(None, ["127.0.0.2"]) == []


def test_data_planes_take_only_addresses_the_catalog_names():
    assert data_planes("webfilter", {"data_plane": [], "dns": ""}) == []
    assert data_planes("webfilter", {"data_plane": ["a:1", 7, None], "dns": ["b:53"]}) == [
        {"kind": "squid", "address": "a:1"},
        {"kind": "dnsmasq", "address": "b:53"},
    ]
    assert data_planes("asn", {"data_plane": ["a:1"]}) == []
    assert data_planes("mitigation", None) == [] and data_planes("mitigation", ["x"]) == []


def test_the_fleet_travels_through_the_state_file_and_the_console_args():
    assert Fleet.from_args(json.loads(json.dumps(FLEET.to_args()))) == FLEET
    state = {"pid": 1, "base_url": BASE, "apps": ["asn"], "direct": None, "ingress": "proxy"}
    assert Fleet.from_state(state) == Fleet(BASE, ("asn",), {}, "proxy", ())


def test_up_deploys_the_console_with_the_fleet_whatever_only_says():
    config = deploy.select_applications(deploy.read_serve_config(ROOT / "serve.yaml"), ["asn", "ignore_gen"])
    assert [a["name"] for a in config["applications"]] == ["ignore_gen", "asn", "console"]
    fleet = Fleet.from_config(config, BASE, "proxy")
    assert fleet.apps == ("ignore_gen", "asn") and fleet.platform == ("console",)
    assert fleet.direct == {"asn": "http://127.0.0.1:8091", "ignore_gen": "http://127.0.0.1:8092"}
    hand_to_platform(config, fleet)
    console = next(a for a in config["applications"] if a["name"] == "console")
    assert console["route_prefix"] == "/" and console["args"]["fleet"] == fleet.to_args()
    assert all("fleet" not in a.get("args", {}) for a in config["applications"] if a["name"] != "console")


def test_status_json_is_the_report_with_ups_pid_and_phase(tmp_path, monkeypatch, capsys):
    from tests.conftest import free_port

    monkeypatch.setenv("RAYFLEET_STATE_DIR", str(tmp_path))
    # no `up` loop answers the refresh `status` asks for: the file's own snapshot is reported
    monkeypatch.setattr(upstate, "FRESH_TIMEOUT_S", 0.05)
    nothing = f"http://127.0.0.1:{free_port()}"  # refuses: every component reads unhealthy
    state = {
        "pid": os.getpid(),
        "phase": "up",
        "base_url": nothing,
        "apps": ["asn", "webfilter"],
        "platform": ["console"],
        "ingress": "proxy",
        "direct": {"asn": "http://{node}:1"},
        "serve": placed(),
        "serve_at": 99.0,
    }
    (tmp_path / "rayfleet.json").write_text(json.dumps(state))
    assert cli.main(["status", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert list(out) == [
        "running",
        "pid",
        "phase",
        "head",
        "nodes",
        "front",
        "ingress",
        "base_url",
        "console_url",
        "placement_at",
        "components",
    ]
    assert out["head"] is None  # the GCS in memory: no RAYFLEET_GCS_REDIS
    assert out["nodes"] is None  # no cluster autoscaler
    assert out["front"] is None  # no front recorded: Serve's proxy on the public port
    assert out["running"] is True and out["pid"] == os.getpid() and out["console_url"] == nothing + "/"
    assert out["components"]["asn"]["health_status"] == {"serve": 0, "direct": 0}
    assert out["components"]["asn"]["direct_urls"] == ["http://127.0.0.2:1/", "http://127.0.0.3:1/"]
    assert out["components"]["webfilter"]["replicas"] == 2 and out["placement_at"] == 99.0
    assert cli.main(["status"]) == 1
    text = capsys.readouterr().out
    assert "webfilter    unhealthy" in text and f"console: {nothing}/" in text
    assert "cluster autoscaler" not in text
    state["nodes"] = [
        {"node_id": "h", "ip": "127.0.0.2", "worker": False},
        {"node_id": "w", "ip": "192.0.2.2", "worker": True},
    ]
    (tmp_path / "rayfleet.json").write_text(json.dumps(state))
    cli.main(["status", "--json"])
    assert [n["ip"] for n in json.loads(capsys.readouterr().out)["nodes"]] == ["127.0.0.2", "192.0.2.2"]
    cli.main(["status"])
    assert "nodes under the cluster autoscaler: 127.0.0.2 (head), 192.0.2.2 (worker)" in capsys.readouterr().out


def test_children_pass_through_only_named_entries():
    squid = {"name": "squid", "state": "running", "pid": 7, "restarts": 2, "last_exit": -9}
    assert children({"children": [squid, {"state": "x"}, "squid", None]}) == [squid]
    assert children({"children": "squid"}) == [] and children(None) == [] and children({}) == []


def test_the_text_status_names_each_child_its_state_and_restarts(capsys):
    from rayfleet.cli import _print_data_planes

    row = {
        "data_planes": [{"kind": "squid", "address": "127.0.0.1:3128"}],
        "children": [{"name": "squid", "state": "running", "restarts": 2, "last_exit_reason": "killed by SIGKILL"}],
    }
    _print_data_planes({"components": {"webfilter": row}})  # type: ignore[typeddict-item]
    assert capsys.readouterr().out.splitlines() == [
        "webfilter data plane: squid 127.0.0.1:3128",
        "webfilter child squid: running, 2 restarts, last exit killed by SIGKILL",
    ]
