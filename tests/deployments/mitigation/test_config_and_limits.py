"""Start-up refusals (MANAGEMENT_API_KEY), environment resolution, and the body size cap."""

from __future__ import annotations

import pytest

from deployments.mitigation.app import create_app
from deployments.mitigation.config import load
from deployments.mitigation.state import MitigationState
from rayfleet.config import ConfigError
from rayfleet.state import LocalActorHandle
from tests.conftest import ROOT
from tests.deployments.mitigation.conftest import API_KEY

CONFIG = ROOT / "config" / "mitigation.yaml"


@pytest.mark.parametrize(
    "key,problem",
    [
        (None, "not set"),
        ("short-key", "too short"),
        ("your-api-key", "example"),
        ("changeme", "example"),
        ("${MANAGEMENT_API_KEY}", "example"),
    ],
)
def test_the_app_refuses_to_start_without_a_real_key(key, problem):
    environ = {} if key is None else {"MANAGEMENT_API_KEY": key}
    config = load(CONFIG, environ)
    with pytest.raises(ConfigError, match=problem):
        create_app(config, MitigationState(config, LocalActorHandle(object())))


def test_serve_origin_and_asn_url_resolve_to_this_machines_serve_address():
    config = load(CONFIG, {"MANAGEMENT_API_KEY": API_KEY, "RAYFLEET_PORT": "18123", "API_SECRET_KEY": "k" * 40})
    assert config.fleet.node.origin == "127.0.0.1:18123"
    assert config.fleet.asn_api_url == "http://127.0.0.1:18123/asn"
    assert config.fleet.asn_api_key == "k" * 40
    assert config.api_key is not None and config.api_key.get_secret_value() == API_KEY


def test_environment_overrides_any_field():
    config = load(CONFIG, {"MANAGEMENT_API_KEY": API_KEY, "MITIGATION__FLEET__NODE__ORIGIN": "10.0.0.5:8080"})
    assert config.fleet.node.origin == "10.0.0.5:8080"


def test_webhooks_do_not_start_without_their_signing_secret():
    hooks = {
        "MANAGEMENT_API_KEY": API_KEY,
        "MITIGATION__FLEET__WEBHOOKS__ENABLED": "true",
        "MITIGATION__FLEET__WEBHOOKS__ENDPOINTS": '["http://127.0.0.1:9/hook"]',
    }
    with pytest.raises(ConfigError, match="MITIGATION_WEBHOOK_SECRET"):
        load(CONFIG, hooks)
    assert load(CONFIG, {**hooks, "MITIGATION_WEBHOOK_SECRET": "s" * 64}).fleet.webhooks.enabled


def test_the_key_cannot_live_in_the_yaml(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(f"api_key: {API_KEY}\n")
    with pytest.raises(ConfigError):
        load(path, {})


async def test_oversized_bodies_are_refused_before_parsing(fleet):
    response = await fleet.client.post(
        "/nodes/node-1/api/v1/rules", content=b"{" + b" " * 100_000 + b"}", headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


@pytest.mark.parametrize(
    "environ,problem",
    [
        ({"MITIGATION__FLEET__NODE__TRUSTED_PROXIES": '["10.0.0.0/33"]'}, "not an IP address or CIDR"),
        ({"MITIGATION__FLEET__NODE__ACCEPT_PROXY": "yes please"}, "accept_proxy"),
        (
            {"MITIGATION__FLEET__NODE__MODE": "syn", "MITIGATION__FLEET__NODE__TRUSTED_PROXIES": '["10.0.0.1"]'},
            "X-Forwarded-For is an HTTP header",
        ),
        ({"MITIGATION__FLEET__AUTOSCALE__MIN_NODES": "0"}, "autoscale.min_nodes"),
        ({"MITIGATION__FLEET__AUTOSCALE__COOLDOWN_S": "soon"}, "autoscale.cooldown_s"),
        (
            {"MITIGATION__FLEET__AUTOSCALE__ENABLED": "true", "MITIGATION__FLEET__AUTOSCALE__MAX_NODES": "9"},
            "fleet's max_nodes",
        ),
    ],
)
def test_client_address_and_autoscale_settings_in_the_configuration_are_checked_at_start(environ, problem):
    with pytest.raises(ConfigError, match=problem):
        load(CONFIG, {"MANAGEMENT_API_KEY": API_KEY, **environ})


def test_client_address_settings_from_the_environment_reach_the_node_settings():
    environ = {"MITIGATION__FLEET__NODE__TRUSTED_PROXIES": '["10.0.0.7", "10.1.0.0/16"]'}
    node = load(CONFIG, {"MANAGEMENT_API_KEY": API_KEY, "MITIGATION__FLEET__NODE__ACCEPT_PROXY": "true", **environ})
    assert node.fleet.node.accept_proxy is True
    assert node.fleet.node.trusted_proxies == ["10.0.0.7/32", "10.1.0.0/16"]
