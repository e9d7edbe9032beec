import os
import stat

import pytest
from pydantic import BaseModel, SecretStr

from rayfleet.config import ConfigError, apply_env_overrides, load_yaml, masked
from rayfleet.secrets import SECRET_NAMES, ensure_secrets, read_secrets


class Server(BaseModel):
    host: str = "0.0.0.0"
    port: int = 8090
    api_key: SecretStr = SecretStr("")


class Root(BaseModel):
    server: Server = Server()
    models: list[str] = []


def test_yaml_defaults_and_values(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("server:\n  port: 9000\nmodels: [a, b]\n")
    cfg = load_yaml(path, Root)
    assert cfg.server.port == 9000 and cfg.server.host == "0.0.0.0"
    assert cfg.models == ["a", "b"]


def test_env_overrides_are_json_decoded(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("server:\n  port: 9000\n")
    env = {
        "APP__SERVER__PORT": "9100",
        "APP__MODELS": '["x"]',
        "APP__SERVER__HOST": "127.0.0.1",
        "OTHER__SERVER__PORT": "1",
    }
    cfg = load_yaml(path, Root, env_prefix="APP", environ=env)
    assert (cfg.server.port, cfg.server.host, cfg.models) == (9100, "127.0.0.1", ["x"])


def test_overrides_do_not_mutate_input():
    data = {"a": {"b": 1}}
    out = apply_env_overrides(data, "P", {"P__A__B": "2"})
    assert data == {"a": {"b": 1}} and out == {"a": {"b": 2}}


def test_invalid_config_names_the_field(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("server:\n  port: many\n")
    with pytest.raises(ConfigError, match=r"server\.port"):
        load_yaml(path, Root)


def test_missing_file_and_non_mapping(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_yaml(tmp_path / "nope.yaml", Root)
    bad = tmp_path / "list.yaml"
    bad.write_text("- 1\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_yaml(bad, Root)


def test_masked_hides_secrets_but_not_their_locations():
    cfg = Root(server=Server(api_key=SecretStr("s3cret-value")))
    shown = masked(cfg)
    assert shown["server"]["api_key"] == "********"
    assert "s3cret-value" not in repr(shown)
    raw = masked(
        {
            "api_key_env": "LLM_KEYS",
            "password": "hunter2",
            "dsn": "postgres://u:p@h/db",
            "nested": [{"token": "abc"}],
            "port": 1,
        }
    )
    assert raw == {
        "api_key_env": "LLM_KEYS",
        "password": "********",
        "dsn": "********",
        "nested": [{"token": "********"}],
        "port": 1,
    }


def test_secrets_generated_once_with_mode_0600(tmp_path):
    path = tmp_path / "var" / "secrets.env"
    old = os.umask(0o022)
    try:
        first = ensure_secrets(path)
    finally:
        os.umask(old)
    assert set(SECRET_NAMES) <= set(first)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first["API_SECRET_KEY"]) >= 32
    assert ensure_secrets(path) == first == read_secrets(path)


def test_secrets_keep_existing_values(tmp_path):
    path = tmp_path / "secrets.env"
    path.write_text("# comment\nAPI_SECRET_KEY=mine-0123456789abcdef0123456789abcdef\nEXTRA=1\n")
    values = ensure_secrets(path)
    assert values["API_SECRET_KEY"] == "mine-0123456789abcdef0123456789abcdef"
    assert values["EXTRA"] == "1" and values["LXC_API_KEY"]
