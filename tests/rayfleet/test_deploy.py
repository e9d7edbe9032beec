import os

import yaml

from rayfleet import cli, deploy
from rayfleet.catalog import COMPONENTS, PLATFORM, application
from tests.conftest import ROOT
from tests.polling import eventually_sync


def test_serve_yaml_is_a_valid_serve_config_with_fractional_cpus():
    from ray.serve.schema import ServeDeploySchema

    config = deploy.read_serve_config(ROOT / "serve.yaml")
    schema = ServeDeploySchema.model_validate(config)
    for app in schema.applications:
        assert app.name in COMPONENTS or app.name in PLATFORM, f"{app.name} missing from rayfleet.catalog"
        assert app.route_prefix == application(app.name).route_prefix
        for dep in app.deployments:
            assert 0 < dep.ray_actor_options.num_cpus <= 0.25, f"{app.name}: CPU fraction"


def test_select_keeps_built_and_requested_apps():
    config = {
        "applications": [
            {"name": "ignore_gen", "import_path": "deployments.ignore_gen.deployment:build"},
            {"name": "ghost", "import_path": "deployments.not_built_yet.deployment:build"},
        ]
    }
    assert [a["name"] for a in deploy.select_applications(config)["applications"]] == ["ignore_gen"]
    assert deploy.select_applications(config, ["asn"])["applications"] == []


def test_prepare_resolves_paths_and_passes_secrets(tmp_path):
    config = {
        "applications": [
            {
                "name": "x",
                "import_path": "m:b",
                "args": {"config": "config/x.yaml", "mode": "fast", "data_dir": "/abs"},
                "runtime_env": {"env_vars": {"OWN": "1"}},
            }
        ]
    }
    out = deploy.prepare(config, {"API_SECRET_KEY": "s"}, tmp_path, "127.0.0.1", 9999)
    app = out["applications"][0]
    assert app["args"] == {"config": str(tmp_path / "config/x.yaml"), "mode": "fast", "data_dir": "/abs"}
    assert app["runtime_env"]["env_vars"] == {"RAYFLEET_HOME": str(tmp_path), "API_SECRET_KEY": "s", "OWN": "1"}
    assert out["http_options"] == {"host": "127.0.0.1", "port": 9999}
    assert config["applications"][0]["args"]["config"] == "config/x.yaml"


def test_the_console_is_platform_at_the_root_and_every_other_app_a_component():
    names = [a["name"] for a in deploy.read_serve_config(ROOT / "serve.yaml")["applications"]]
    assert set(PLATFORM) == {"console"} and "console" in names
    assert set(names) - set(PLATFORM) <= set(COMPONENTS)
    assert deploy.app_urls("http://h:1", ["console"])["console"] == {
        "url": "http://h:1/",
        "health": "http://h:1/api/health",
        "docs": None,
    }


def test_app_urls_follow_the_catalog():
    urls = deploy.app_urls("http://h:1", ["asn", "ignore_gen"])
    assert urls["asn"] == {
        "url": "http://h:1/asn/",
        "health": "http://h:1/asn/api/health",
        "docs": "http://h:1/asn/api/docs",
    }
    assert urls["ignore_gen"]["health"] == "http://h:1/ignore/healthz"


def test_status_and_down_when_nothing_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAYFLEET_STATE_DIR", str(tmp_path))
    assert cli.main(["status"]) == 3
    assert cli.main(["down"]) == 0
    assert "not running" in capsys.readouterr().out


def test_status_ignores_a_stale_state_file(tmp_path, monkeypatch):
    monkeypatch.setenv("RAYFLEET_STATE_DIR", str(tmp_path))
    (tmp_path / "rayfleet.json").write_text('{"pid": 999999, "base_url": "http://x", "apps": []}')
    assert cli.main(["status"]) == 3
    assert cli.main(["down"]) == 0
    assert not (tmp_path / "rayfleet.json").exists()


def test_cluster_yaml_and_serve_yaml_parse():
    assert yaml.safe_load((ROOT / "serve.yaml").read_text())["applications"]


def test_direct_ports_come_from_serve_yaml_or_the_component_config(monkeypatch):
    config = deploy.select_applications(deploy.read_serve_config(ROOT / "serve.yaml"), ["asn", "ignore_gen"])
    assert deploy.direct_urls(config) == {"asn": "http://127.0.0.1:8091", "ignore_gen": "http://127.0.0.1:8092"}
    monkeypatch.setenv("RAYFLEET_ASN_DIRECT_PORT", "9191")
    prepared = deploy.prepare(config, {}, ROOT)
    assert deploy.direct_urls(prepared)["asn"] == "http://127.0.0.1:9191"
    gateway = deploy.select_applications(deploy.read_serve_config(ROOT / "serve.yaml"), ["llm_gateway"])
    monkeypatch.setenv("LLM_GATEWAY__SERVER__PORT", "9090")
    assert deploy.direct_urls(gateway) == {"llm_gateway": "http://127.0.0.1:9090"}


def test_a_node_bound_direct_port_gets_one_url_per_node():
    app = {
        "name": "x",
        "import_path": "deployments.asn.deployment:build",
        "args": {"direct": {"port": 9, "host": "node"}},
    }
    assert deploy.direct_urls({"applications": [app]}) == {"x": "http://{node}:9"}


def test_an_exited_but_unreaped_up_counts_as_stopped():
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    eventually_sync(
        lambda: not cli._alive(child.pid), what="the exited child counts as stopped"
    )  # a zombie until reaped
    child.wait()
    assert cli._alive(os.getpid())


def test_status_json_when_nothing_runs(tmp_path, monkeypatch, capsys):
    import json

    monkeypatch.setenv("RAYFLEET_STATE_DIR", str(tmp_path))
    assert cli.main(["status", "--json"]) == 3
    assert json.loads(capsys.readouterr().out) == {"running": False}
