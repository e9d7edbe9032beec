from pathlib import Path

import pytest

from deployments.asn.config import load, parse_rate
from rayfleet.config import ConfigError
from tests.conftest import ROOT


@pytest.mark.parametrize(
    "text, expected",
    [
        ("100", (100, 60.0)),
        ("100/minute", (100, 60.0)),
        ("100/min", (100, 60.0)),
        ("10/second", (10, 1.0)),
        ("5000/hour", (5000, 3600.0)),
        ("7/5m", (7, 300.0)),
        (" 3 / day ", (3, 86400.0)),
    ],
)
def test_parse_rate(text, expected):
    assert parse_rate(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "0", "100/fortnight", "-5", "10/0s", "1.5/min"])
def test_parse_rate_rejects(text):
    with pytest.raises(ConfigError):
        parse_rate(text)


def test_demo_config_and_spec_environment_variables():
    env = {
        "API_SECRET_KEY": "s" * 48,
        "API_RATE_LIMIT": "20/minute",
        "REDIS_URL": "redis://127.0.0.1:6379/3",
        "ASN__RATE_LIMIT__ON_STORE_ERROR": "closed",
        "ASN__SEARCH_MAX_RESULTS": "50",
    }
    config = load(ROOT / "config" / "asn.yaml", environ=env)
    assert config.api_key.get_secret_value() == "s" * 48
    assert (config.rate_limit.limit, config.rate_limit.window_seconds) == (20, 60.0)
    assert config.rate_limit.redis_url == "redis://127.0.0.1:6379/3"
    assert config.rate_limit.on_store_error == "closed" and config.search_max_results == 50
    assert "s" * 48 not in repr(config) and "s" * 48 not in config.model_dump_json()


def test_defaults_match_the_spec():
    config = load(ROOT / "config" / "asn.yaml", environ={})
    assert config.api_key is None
    assert (config.rate_limit.limit, config.rate_limit.window_seconds) == (100, 60.0)
    assert config.rate_limit.redis_url is None
    assert config.db_path.name == "asn.duckdb" and config.package_dir.name == "pkg"


def test_key_in_a_file_is_refused(tmp_path: Path):
    path = tmp_path / "asn.yaml"
    path.write_text("api_key: abcdefabcdefabcdefabcdefabcdefabcdef\n")
    with pytest.raises(ConfigError, match="API_SECRET_KEY"):
        load(path, environ={})


@pytest.mark.parametrize(
    "body",
    [
        "rate_limit:\n  on_store_error: maybe\n",
        "trusted_proxies: [not-an-ip]\n",
        "unknown_field: 1\n",
        "rate_limit:\n  limit: 0\n",
    ],
)
def test_invalid_config_is_refused(tmp_path: Path, body: str):
    path = tmp_path / "asn.yaml"
    path.write_text(body)
    with pytest.raises(ConfigError):
        load(path, environ={})
