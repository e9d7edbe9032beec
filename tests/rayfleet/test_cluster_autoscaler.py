"""`rayfleet up --autoscale`: the cluster config it accepts, the head it declares, the demand it shapes."""

from __future__ import annotations

import pytest
import yaml

from rayfleet.cli import _start_cluster, main
from rayfleet.cluster_autoscaler import (
    DEFAULT_CONFIG,
    SLOT,
    WORKER_MARK,
    demo_serve_config,
    head_resources,
    load_config,
    monitor_env,
    needs_slots,
)
from tests.conftest import ROOT


def test_the_shipped_variant_runs_the_fake_provider_with_a_worker_type_the_head_lacks():
    config = load_config(ROOT / DEFAULT_CONFIG)
    assert config["provider"]["type"] == "fake_multinode"
    cpus, resources = head_resources(config)
    assert cpus == 2 and resources == {SLOT: 2.0}
    workers = [t for n, t in config["available_node_types"].items() if n != config["head_node_type"]]
    assert [t["resources"][WORKER_MARK] for t in workers] == [1]
    assert workers[0]["resources"][SLOT] >= 1 and workers[0]["max_workers"] >= 1
    assert 0 < config["idle_timeout_minutes"] < 5


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"provider": {"type": "local", "head_ip": "192.0.2.10"}}, "fake_multinode"),
        ({"head_node_type": "ray.head.missing"}, "not among available_node_types"),
    ],
)
def test_a_config_it_cannot_run_here_is_refused_with_the_reason(tmp_path, change, message):
    config = {**yaml.safe_load((ROOT / DEFAULT_CONFIG).read_text()), **change}
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ValueError, match=message):
        load_config(path)


def test_real_machines_config_is_not_taken_for_the_fake_provider():
    with pytest.raises(ValueError, match="ray up cluster.yaml"):
        load_config(ROOT / "cluster.yaml")


def test_every_replica_of_the_app_asks_for_a_slot_and_keeps_its_cpu():
    serve = yaml.safe_load((ROOT / "serve.yaml").read_text())
    out = needs_slots(serve, "ignore_gen")
    options = next(a for a in out["applications"] if a["name"] == "ignore_gen")["deployments"][0]["ray_actor_options"]
    assert options["resources"] == {SLOT: 1.0} and options["num_cpus"] == 0.05
    assert "resources" not in next(a for a in serve["applications"] if a["name"] == "ignore_gen")["deployments"][0].get(
        "ray_actor_options", {}
    ), "the input is not changed"
    with pytest.raises(ValueError, match="no application"):
        needs_slots(serve, "nope")


def test_the_demo_wants_more_replicas_than_the_head_has_slots():
    serve = yaml.safe_load((ROOT / "serve.yaml").read_text())
    demo = demo_serve_config(serve)
    assert {a["name"] for a in demo["applications"]} == {"console", "ignore_gen"}
    app = next(a for a in demo["applications"] if a["name"] == "ignore_gen")
    assert app["args"]["direct"]["host"] == "node"
    scaling = app["deployments"][0]["autoscaling_config"]
    _, head = head_resources(load_config(ROOT / DEFAULT_CONFIG))
    assert scaling["min_replicas"] <= head[SLOT] < scaling["max_replicas"]


def test_autoscale_and_joining_a_cluster_do_not_mix(monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    state: dict = {}
    with pytest.raises(SystemExit, match="unset RAY_ADDRESS"):
        _start_cluster(state, DEFAULT_CONFIG)
    assert state == {}


def test_autoscale_takes_the_shipped_variant_by_default_or_a_path(monkeypatch):
    monkeypatch.delenv("RAYFLEET_AUTOSCALE", raising=False)
    seen = []
    monkeypatch.setattr("rayfleet.cli.cmd_up", lambda args: seen.append(args.autoscale) or 0)
    for argv in (["up"], ["up", "--autoscale"], ["up", "--autoscale", "my.yaml"]):
        main(argv)
    assert seen == [None, DEFAULT_CONFIG, "my.yaml"]


def test_the_monitor_gets_the_fake_provider_and_a_metrics_port_of_its_own():
    env = monitor_env()
    assert env["RAY_FAKE_CLUSTER"] == "1" and float(env["AUTOSCALER_UPDATE_INTERVAL_S"]) <= 5
    assert int(env["AUTOSCALER_METRIC_PORT"]) != 44217


def test_the_variant_is_what_rays_autoscaler_accepts():
    """Ray's own checks, as its monitor applies them to the file it reads: the schema shipped in ray
    and validate_config (`ray up`'s prepare_config is not run: the monitor reads the file as is)."""
    import json
    from pathlib import Path

    import jsonschema
    import ray
    from ray.autoscaler._private.util import validate_config

    config = load_config(ROOT / DEFAULT_CONFIG)
    jsonschema.validate(config, json.loads((Path(ray.__file__).parent / "autoscaler" / "ray-schema.json").read_text()))
    validate_config(config)
