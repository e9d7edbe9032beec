"""Config validation on start, routes coverage, and SSH trust/auth rules."""

from __future__ import annotations

import asyncio
import csv

import pytest

from deployments.lxc.config import LxcConfig
from tests.conftest import DATA
from tests.deployments.lxc.simenv import make_client


@pytest.mark.parametrize("key", ["", "your-api-key", "changeme", "CHANGE_ME"])
def test_refuses_empty_or_example_key(sim_env, tmp_path, key, monkeypatch):
    monkeypatch.delenv("LXC_API_KEY", raising=False)
    config = sim_env.config(tmp_path, api_key=key)
    with pytest.raises(ValueError, match="example"):
        config.check_startable()
    from deployments.lxc.app import create_app

    with pytest.raises(ValueError):
        create_app(config)


def test_key_from_environment_and_short_key_warning(sim_env, tmp_path, monkeypatch):
    monkeypatch.setenv("LXC_API_KEY", "k" * 40)
    config = sim_env.config(tmp_path, api_key=None)
    assert config.resolved_api_key() == "k" * 40 and config.check_startable() == []
    assert sim_env.config(tmp_path, api_key="short-but-real").check_startable() == [
        "api_key is shorter than 32 characters"
    ]


def test_structure_is_validated(sim_env, tmp_path):
    good = sim_env.config(tmp_path).model_dump(mode="json")
    good["api_key"] = "x" * 40
    for broken in (
        {"regions": {}},
        {"instance_sizes": {}},
        {"instance_sizes": {"medium": {"memory": 1, "cpulimit": 1, "storage": "local-lvm:8"}}},
        {"default_storage": "--evil"},
        {"unknown_key": 1},
    ):
        with pytest.raises(ValueError):
            LxcConfig.model_validate(good | broken)
    zone = good["regions"]["eu-south-1"]["availability_zones"]["az1"]
    for broken_zone in ({**zone, "known_hosts": None}, {**zone, "key_file": None}):
        with pytest.raises(ValueError):
            LxcConfig.model_validate(good | {"regions": {"r": {"availability_zones": {"a": broken_zone}}}})


def test_demo_config_loads_with_env_paths(monkeypatch):
    from deployments.lxc.config import load

    monkeypatch.setenv("LXC_SIM_DIR", "/tmp/lxc-sim-x")
    monkeypatch.setenv("LXC_SIM_PORT", "2299")
    config = load("config/lxc.yaml")
    zone = config.regions["eu-south-1"].availability_zones["az1"]
    assert zone.key_file == "/tmp/lxc-sim-x/client_key" and zone.effective_port() == 2299
    assert config.api.command_timeout == 3600 and config.api.allowed_origins == []


async def test_every_spec_route_is_served(api):
    with open(DATA / "routes.tsv") as fh:
        rows = [
            r
            for r in csv.reader((line for line in fh if not line.startswith("#")), delimiter="\t")
            if r and r[0] == "lxc"
        ]
    assert len(rows) == 65
    for _, method, path in rows:
        concrete = (
            path.replace("{instance_id}", "100")
            .replace("{group_name}", "web")
            .replace("{snapshot_name}", "snap1")
            .replace("{template_name}", "t1")
            .replace("{container_name}", "c1")
        )
        response = await api.request(method, concrete)
        routed = not (
            response.status_code == 404
            and response.headers.get("content-type", "").startswith("application/json")
            and response.json().get("message", "").startswith("The requested URL")
        )
        assert routed and response.status_code != 405, (method, path, response.status_code, response.text[:200])


async def test_unknown_host_key_is_refused(fresh_sim, tmp_path):
    (tmp_path / "kh").write_text(
        f"[127.0.0.1]:{fresh_sim.port} ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
    )
    from rayfleet.state import local_state

    with local_state():
        client, app = make_client(
            fresh_sim.config(
                tmp_path,
                regions={
                    "eu-south-1": {"availability_zones": {"az1": fresh_sim.zone(known_hosts=str(tmp_path / "kh"))}}
                },
            )
        )
        async with client:
            response = await client.get("/api/v1/lxc/instances")
        await app.state.component.service.pool.close()
    assert response.status_code == 500
    assert response.json()["return_code"] == 255 and "Host key" in response.json()["details"]
    assert fresh_sim.commands() == []


async def test_password_auth_and_one_pooled_connection(tmp_path, monkeypatch):
    from rayfleet.state import local_state
    from tests.deployments.lxc.simenv import SimEnv

    env = SimEnv(tmp_path / "pw")
    env.stop()
    from sims.pve import ThreadedSim

    sim = ThreadedSim(
        tmp_path / "pw" / "state",
        tmp_path / "pw" / "authorized_keys",
        host_key=env.sim.host_key,
        password="s3cret-pass",
    )
    port = sim.start()
    (tmp_path / "pw" / "known_hosts").write_text(env.known_hosts.read_text().replace(str(env.port), str(port)))
    monkeypatch.setenv("PVE_TEST_PASSWORD", "s3cret-pass")
    zone = {
        "host": "127.0.0.1",
        "port": port,
        "user": "root",
        "password_env": "PVE_TEST_PASSWORD",
        "known_hosts": str(tmp_path / "pw" / "known_hosts"),
    }
    try:
        with local_state():
            client, app = make_client(
                env.config(tmp_path, regions={"eu-south-1": {"availability_zones": {"az1": zone}}})
            )
            async with client:
                for _ in range(5):
                    assert (await client.get("/api/v1/lxc/instances")).status_code == 200
                conf = (await client.get("/api/v1/conf")).text
            pool = app.state.component.service.pool
            assert len(pool._hosts) == 1
            await pool.close()
        assert "s3cret-pass" not in conf
        assert sim.sim.connections == 1
    finally:
        sim.stop()


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("host", "a" * 64 + ".example.test"),  # a DNS label over 63 characters
        ("host", "pve..example.test"),  # an empty label
        ("host", "-pve.example.test"),
        ("host", "pve 1"),
        ("host", "pve1\x00.example.test"),
        ("host", "bücher.example"),  # an internationalised name must be given in its ASCII (xn--) form
        ("host", "p" * 60 + "." + ".".join(["q" * 60] * 4)),  # over 253 characters
        ("host", ""),
        ("node_host", "b" * 64),
        ("node_name", "n" * 64),
        ("node_name", "pve_1"),
    ],
)
def test_a_zone_host_or_node_that_cannot_be_an_address_is_refused_at_load_naming_the_key(
    sim_env, tmp_path, where, value
):
    good = sim_env.config(tmp_path).model_dump(mode="json")
    good["api_key"] = "x" * 40
    zone = dict(good["regions"]["eu-south-1"]["availability_zones"]["az1"])
    if where == "host":
        zone["host"] = value
        key = "regions.eu-south-1.availability_zones.az1.host"
    elif where == "node_host":
        zone["nodes"] = {"pve1": {"host": value}}
        key = "regions.eu-south-1.availability_zones.az1.nodes.pve1.host"
    else:
        zone["nodes"] = {value: {"host": "127.0.0.1"}}
        key = "regions.eu-south-1.availability_zones.az1.nodes"
    with pytest.raises(ValueError) as refused:
        LxcConfig.model_validate(good | {"regions": {"eu-south-1": {"availability_zones": {"az1": zone}}}})
    assert key in str(refused.value)
    assert "host name" in str(refused.value) or "node name" in str(refused.value)


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "::1", "fe80::1%eth0", "pve1", "pve-1.example.test", "a" * 63 + ".test", "xn--bcher-kva.example"],
)
def test_host_names_and_ip_literals_are_accepted(sim_env, tmp_path, host):
    good = sim_env.config(tmp_path).model_dump(mode="json")
    good["api_key"] = "x" * 40
    zone = {
        **good["regions"]["eu-south-1"]["availability_zones"]["az1"],
        "host": host,
        "nodes": {"pve1": {"host": host}},
    }
    config = LxcConfig.model_validate(good | {"regions": {"eu-south-1": {"availability_zones": {"az1": zone}}}})
    assert config.regions["eu-south-1"].availability_zones["az1"].node_host("pve1").host == host


async def test_a_single_host_that_hangs_is_waited_for_once_then_answers_503_at_once(sim_env, tmp_path):
    """A zone of one host whose SSH server takes the connection and never sends its banner: the
    first request waits `connect_timeout`, the next ones are answered 503 without a connection
    (counted at the listener) until `unreachable_backoff` has passed."""
    from rayfleet.state import local_state

    taken: list[asyncio.StreamWriter] = []

    async def hung(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        taken.append(writer)

    silent = await asyncio.start_server(hung, "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    zone = sim_env.zone(port=port, connect_timeout=0.5, unreachable_backoff=600)
    try:
        with local_state():
            client, app = make_client(
                sim_env.config(tmp_path, regions={"eu-south-1": {"availability_zones": {"az1": zone}}})
            )
            async with client:
                answers = [await client.get("/api/v1/lxc/instances") for _ in range(3)]
                answers.append(await client.post("/api/v1/lxc/instances/stop", json={"instance_ids": ["101", "102"]}))
                answers.append(await client.get("/api/v1/lxc/instances/101"))
            await app.state.component.service.pool.close()
        assert len(taken) == 1
        for answer in answers:
            assert answer.status_code == 503, answer.text
            assert answer.json()["code"] == 503 and "Connection timed out" in answer.text
        assert "not tried again for " in answers[1].json()["description"]
    finally:
        for writer in taken:
            writer.close()
        silent.close()


async def test_a_host_name_that_does_not_resolve_answers_503_in_the_resolvers_words(sim_env, tmp_path):
    """No DNS query leaves: the tests' guard (tests/netguard.py) answers any name but loopback's as
    an unknown name, a real `socket.gaierror` with a negative EAI code, which was worded
    `Unknown error -2`."""
    from rayfleet.state import local_state

    zone = sim_env.zone(host="pve1.invalid")
    with local_state():
        client, app = make_client(
            sim_env.config(tmp_path, regions={"eu-south-1": {"availability_zones": {"az1": zone}}})
        )
        async with client:
            answer = await client.get("/api/v1/lxc/instances")
        await app.state.component.service.pool.close()
    assert answer.status_code == 503, answer.text
    description = answer.json()["description"]
    assert "ssh: Could not resolve hostname pve1.invalid: " in description
    assert "Unknown error" not in description
