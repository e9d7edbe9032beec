"""`GET /autoscale/api/v1/decisions` and `/api/v1/timelines`: the scaling model's decisions, filtered, with inputs and outcome."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import cast

import httpx
import pytest

from actors.autoscale.policy import Decision
from actors.autoscale.scaler import ScalerActor
from deployments.autoscale.app import create_app
from deployments.autoscale.state import AutoscaleState
from rayfleet.state import ActorHandle, LocalActorHandle, local_state
from tests.deployments.autoscale.conftest import API_KEY, make_config


def _decision(t: float, vmid: str, action: str, outcome: str = "", resource: str = "cpu") -> Decision:
    d = Decision(t, "pve1", vmid, resource, action, 2, 3, f"{action} because", {"cpu_pct": 91.0})
    d.outcome = outcome
    return d


@pytest.fixture
def scaler() -> ScalerActor:
    s = ScalerActor({}, {"pve1": (24, 24576)}, "http://127.0.0.1:9", "AUTOSCALE_API_KEY", decisions_kept=50)
    s.record(_decision(100.0, "101", "set", "applied"))
    s.record(_decision(200.0, "102", "hold", "refused_capacity"))
    s.record(_decision(300.0, "101", "hold"))
    s.record(_decision(400.0, "101", "set", resource="ram"))  # settled as failed: not applied, no dry run
    s.record(_decision(500.0, "103", "skip"))
    return s


@pytest.fixture
async def api(sim, monkeypatch, scaler) -> AsyncIterator[httpx.AsyncClient]:
    monkeypatch.setenv("AUTOSCALE_API_KEY", API_KEY)
    config = make_config(sim)
    with local_state():
        state = AutoscaleState.from_ray(config, background=False)
        state.scaler = cast(ActorHandle[ScalerActor], LocalActorHandle(scaler))
        transport = httpx.ASGITransport(app=create_app(config, state), client=("127.0.0.1", 4321))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://test", headers={"X-API-Key": API_KEY}
        ) as client:
            yield client


async def test_decisions_are_listed_oldest_first_with_inputs_and_outcome(api):
    response = await api.get("/api/v1/decisions")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "success"
    data = body["data"]
    assert data["kept"] == 5 and data["capacity_kept"] == 50
    rows = data["decisions"]
    assert [r["t"] for r in rows] == [100.0, 200.0, 300.0, 400.0, 500.0]
    assert [r["outcome"] for r in rows] == ["applied", "refused_capacity", "held", "failed", "skipped"]
    assert rows[0]["inputs"] == {"cpu_pct": 91.0} and rows[0]["reason"] == "set because"
    assert {"vmid", "host", "resource", "action", "current", "target", "applied", "dry_run", "error"} <= set(rows[0])


async def test_filters_combine(api):
    rows = (await api.get("/api/v1/decisions", params={"lxc_id": "101"})).json()["data"]["decisions"]
    assert [r["t"] for r in rows] == [100.0, 300.0, 400.0]
    rows = (await api.get("/api/v1/decisions", params={"lxc_id": 101, "action": "hold"})).json()["data"]["decisions"]
    assert [r["t"] for r in rows] == [300.0]
    rows = (await api.get("/api/v1/decisions", params={"since": "250"})).json()["data"]["decisions"]
    assert [r["t"] for r in rows] == [300.0, 400.0, 500.0]
    rows = (await api.get("/api/v1/decisions", params={"limit": 2})).json()["data"]["decisions"]
    assert [r["t"] for r in rows] == [400.0, 500.0]  # the newest two
    rows = (await api.get("/api/v1/decisions", params={"lxc_id": "0102"})).json()["data"]["decisions"]
    assert [r["vmid"] for r in rows] == ["102"]


@pytest.mark.parametrize(
    "params",
    [
        {"lxc_id": "101.0"},
        {"lxc_id": "١٠١"},
        {"lxc_id": "１０１"},
        {"lxc_id": "¹⁰¹"},
        {"lxc_id": "9" * 5000},
        {"lxc_id": "-101"},
        {"lxc_id": "99"},
        {"lxc_id": ""},
        {"action": "delete"},
        {"action": "SET"},
        {"since": "yesterday"},
        {"since": "1e9"},
        {"since": "-1"},
        {"since": "١٠٠"},
        {"since": "9" * 5000},
        {"limit": "0"},
        {"limit": "1001"},
        {"limit": "10.0"},
        {"limit": "9" * 5000},
        {"lxc": "101"},
    ],
)
async def test_bad_filters_are_400_validation_failed_and_never_echo_python(api, params):
    response = await api.get("/api/v1/decisions", params=params)
    assert response.status_code == 400
    body = response.json()
    assert body["status"] == "error" and body["message"] == "Validation failed" and body["errors"]
    text = response.text
    assert "int()" not in text and "Exceeds the limit" not in text and "9" * 50 not in text


async def test_a_repeated_filter_is_400(api):
    response = await api.get("/api/v1/decisions?lxc_id=101&lxc_id=102")
    assert response.status_code == 400 and response.json()["message"] == "Validation failed"


async def test_decisions_need_the_key(api):
    assert (await api.get("/api/v1/decisions", headers={"X-API-Key": ""})).status_code == 401
    assert (await api.get("/api/v1/decisions", headers={"X-API-Key": "nope"})).status_code == 403


async def test_without_the_scaling_model_the_route_says_so(client):
    response = await client.get("/api/v1/decisions")
    assert response.status_code == 503
    assert response.json() == {"status": "error", "message": "The scaling model is not running on this deployment"}


async def test_the_decision_log_is_bounded():
    s = ScalerActor({}, {"pve1": (24, 24576)}, "http://127.0.0.1:9", "AUTOSCALE_API_KEY", decisions_kept=10)
    for i in range(25):
        s.record(_decision(float(i), "101", "hold"))
    page = await s.decisions(limit=1000)
    assert page["kept"] == 10 and [r["t"] for r in page["decisions"]] == [float(i) for i in range(15, 25)]


async def test_the_decisions_route_is_documented(client):
    spec = (await client.get("/openapi.json")).json()
    op = spec["paths"]["/api/v1/decisions"]["get"]
    assert {p["name"] for p in op["parameters"]} == {"lxc_id", "action", "since", "limit"}
    assert {"200", "400", "401", "403", "429", "503"} <= set(op["responses"])


@pytest.mark.parametrize(
    "query",
    ["lxc_id=101.0", "lxc_id=%D9%A1%D9%A0%D9%A1", "lxc_id=" + "9" * 5000, "lxc_id=101&lxc_id=101", "action=set"],
)
async def test_timelines_take_only_a_strict_lxc_id(api, query):
    response = await api.get("/api/v1/timelines?" + query)
    assert response.status_code == 400 and response.json()["message"] == "Validation failed"
    assert "9" * 50 not in response.text and "int()" not in response.text


async def test_timelines_without_samples_list_no_containers(api):
    response = await api.get("/api/v1/timelines", params={"lxc_id": "101"})
    assert response.status_code == 200 and response.json()["data"] == {"containers": []}
