"""The autoscaler's configuration: tiers per container, ids as strict as the API's."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from deployments.autoscale.config import AutoscaleConfig

HOST = {"host": "127.0.0.1", "key_file": "/nonexistent/key", "known_hosts": "/nonexistent/known_hosts"}


def config(**scaler: object) -> AutoscaleConfig:
    return AutoscaleConfig.model_validate({"hosts": {"pve1": HOST}, "scaler": scaler})


def test_tiers_map_their_containers_to_bounds_and_priority():
    c = config(
        limits={"max_cores": 4},
        tiers={
            "web": {"containers": [101, "0102"], "min_cores": 2, "max_cores": 12, "priority": 10},
            "batch": {"containers": ["103"], "max_memory_mb": 2048, "priority": -5},
        },
    )
    tiers = c.scaler.tier_of_containers()
    assert set(tiers) == {"101", "102", "103"}
    assert tiers["101"] == {
        "name": "web",
        "min_cores": 2,
        "max_cores": 12,
        "min_memory_mb": 256,
        "max_memory_mb": 8192,
        "priority": 10,
    }
    assert tiers["103"]["priority"] == -5 and tiers["103"]["max_memory_mb"] == 2048
    assert c.scaler.limits.max_cores == 4  # the default tier of every other container


@pytest.mark.parametrize(
    "scaler",
    [
        {"tiers": {"a": {"containers": ["101"]}, "b": {"containers": [101]}}},  # one container, two tiers
        {"tiers": {"a": {"containers": ["101.0"]}}},
        {"tiers": {"a": {"containers": ["١٠١"]}}},
        {"tiers": {"a": {"containers": ["9" * 5000]}}},
        {"tiers": {"a": {"containers": [101], "min_cores": 9, "max_cores": 4}}},
        {"tiers": {"a": {"containers": [101], "cpu_share": 3}}},  # unknown key
        {"ignore": ["１０１"]},
        {"ignore": [101.0]},
        {"ignore": ["9" * 5000]},
    ],
)
def test_bad_tiers_and_ids_are_refused_without_pythons_words(scaler):
    with pytest.raises(ValidationError) as info:
        config(**scaler)
    assert "Exceeds the limit" not in str(info.value) and "int()" not in str(info.value)


def test_the_node_name_defaults_to_the_hosts_key():
    c = AutoscaleConfig.model_validate({"hosts": {"pve1": HOST, "b": {**HOST, "node": "pve-b"}}})
    assert c.hosts["pve1"].node_name("pve1") == "pve1" and c.hosts["b"].node_name("b") == "pve-b"
    with pytest.raises(ValidationError):
        AutoscaleConfig.model_validate({"hosts": {"b": {**HOST, "node": "../etc"}}})
