"""cluster.yaml is a valid Ray cluster-launcher config that installs and starts rayfleet."""

import json
from pathlib import Path

import jsonschema
import ray
import yaml

from tests.conftest import ROOT


def load() -> dict:
    return yaml.safe_load((ROOT / "cluster.yaml").read_text())


def test_validates_against_the_schema_shipped_in_ray():
    schema = json.loads((Path(ray.__file__).parent / "autoscaler" / "ray-schema.json").read_text())
    jsonschema.validate(load(), schema)


def test_ray_launcher_prepares_and_accepts_it():
    """What `ray up` does first: fill the provider's defaults, then validate."""
    from ray.autoscaler._private.util import prepare_config, validate_config

    prepared = prepare_config(load())
    validate_config(prepared)
    assert prepared["head_node_type"] in prepared["available_node_types"]


def test_on_premise_nodes_install_the_project_and_avoid_the_redis_port():
    config = load()
    assert config["provider"]["type"] == "local"
    assert config["provider"]["head_ip"] and len(config["provider"]["worker_ips"]) == config["max_workers"]
    setup = " ".join(config["setup_commands"])
    assert "pip install" in setup and "-e ." in setup and "system-deps.sh" in setup
    head = " ".join(config["head_start_ray_commands"])
    assert "--head" in head and "--port=6379" not in head and "--port=6380" in head
    assert all("6380" in c for c in config["worker_start_ray_commands"] if "ray start" in c)
