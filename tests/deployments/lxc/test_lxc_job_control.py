"""Jobs can be cancelled (the host command really stops, the container's lease is held until it
has) and followed as server-sent events by a real HTTP client over a real socket."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from actors.lxc.jobs import JobBook
from rayfleet.launcher import free_port
from rayfleet.state import call, local_state
from tests.deployments.lxc.simenv import API_KEY, SimEnv, create_ct
from tests.polling import eventually

ASYNC = {"Prefer": "respond-async"}


class Served:
    """The container API served by uvicorn on loopback, in front of a pve-sim."""

    def __init__(self, sim: SimEnv, app: Any, url: str) -> None:
        self.sim = sim
        self.app = app
        self.url = url

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers={"X-API-Key": API_KEY}, timeout=60, trust_env=False)

    @property
    def jobs(self) -> Any:
        return self.app.state.component.jobs


async def _serve(tmp_path: Path) -> AsyncIterator[Served]:
    from deployments.lxc.app import create_app

    sim = SimEnv(tmp_path / "sim")
    try:
        with local_state():
            app = create_app(sim.config(tmp_path, jobs_store=f"sqlite:///{tmp_path}/jobs.sqlite3"), state=None)
            port = free_port()
            server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
            task = asyncio.get_running_loop().create_task(server.serve())
            await eventually(lambda: server.started, interval=0.02, what="the API serving")
            try:
                yield Served(sim, app, f"http://127.0.0.1:{port}")
            finally:
                server.should_exit = True
                await asyncio.wait_for(task, 15)
                await app.state.component.service.pool.close()
    finally:
        sim.stop()
        shutil.rmtree(tmp_path / "sim", ignore_errors=True)


@pytest.fixture
async def slow(tmp_path: Path) -> AsyncIterator[Served]:
    """vzdump holds the container's lock for 30 s (long enough to be cancelled mid-way)."""
    async for served in _serve(tmp_path):
        yield served


@pytest.fixture
async def quick(tmp_path: Path) -> AsyncIterator[Served]:
    """vzdump holds the container's lock for 1.5 s (a job that streams for a while, then ends)."""
    async for served in _serve(tmp_path):
        yield served


async def _finished(api: httpx.AsyncClient, url: str) -> dict[str, Any] | None:
    job = (await api.get(url)).json()
    return job if job["state"] != "running" else None


async def _backup_running(api: httpx.AsyncClient, sim: SimEnv, vmid: str) -> str:
    sim.slow_down(30.0)
    accepted = await api.post(f"/api/v1/lxc/instances/{vmid}/backup", json={}, headers=ASYNC)
    assert accepted.status_code == 202, accepted.text
    await eventually(lambda: sim.model.containers[vmid]["lock"] == "backup", what="vzdump running on the host")
    return str(accepted.headers["location"])


async def test_cancel_stops_the_host_command_and_holds_the_lease_until_it_has_ended(slow):
    async with slow.client() as api:
        vmid = await create_ct(api)
        url = await _backup_running(api, slow.sim, vmid)

        cancel = await api.delete(url)
        assert cancel.status_code == 202, cancel.text
        assert cancel.json()["cancel_requested"] is True
        # the stop waits for the backup's lease: were it released before vzdump ended, the host
        # would refuse the shutdown with "CT is locked (backup)" (409)
        stop = await api.post("/api/v1/lxc/instances/stop", json={"instance_ids": [vmid]})
        assert stop.status_code == 200, stop.text
        assert stop.json()["results"][vmid]["outcome"] == "stopped"
        assert slow.sim.sim.sim.killed == 1  # the vzdump process was killed by the signal
        assert slow.sim.model.containers[vmid]["lock"] is None

        job = await eventually(lambda: _finished(api, url), timeout=30, what="the job recorded as cancelled")
        assert job["state"] == "cancelled" and job["result"] is None
        assert "stopped" in job["error"]["error"]
        assert any(line.startswith("$ vzdump ") for line in job["progress"])
        assert any("INFO: starting new backup job" in line for line in job["progress"])
        dumps = slow.sim.model.host_path("/var/lib/vz/dump")
        assert not [p for p in dumps.iterdir() if p.name.startswith(f"vzdump-lxc-{vmid}-")]

        again = await api.delete(url)
        assert again.status_code == 409 and again.json()["code"] == 409
        assert (await api.delete("/api/v1/jobs/" + "0" * 32)).status_code == 404
        assert (await api.delete("/api/v1/jobs/nope")).status_code == 400


async def test_a_cancel_recorded_by_another_replica_reaches_the_running_one(slow):
    async with slow.client() as api:
        vmid = await create_ct(api)
        url = await _backup_running(api, slow.sim, vmid)
        # another replica's DELETE only reaches the book; this replica learns it at its next poll
        await call(slow.jobs, JobBook.cancel, url.rsplit("/", 1)[1])
        job = await eventually(lambda: _finished(api, url), timeout=30, what="the job cancelled via the book")
        assert job["state"] == "cancelled"
        assert slow.sim.sim.sim.killed == 1
        assert slow.sim.model.containers[vmid]["lock"] is None


def _events(text: str) -> list[dict[str, str]]:
    """Split an event stream into its events (fields per the HTML living standard's parser)."""
    events = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        if fields:
            events.append(fields)
    return events


async def test_a_job_streams_its_output_as_server_sent_events(quick):
    async with quick.client() as api:
        vmid = await create_ct(api)
        quick.sim.slow_down(1.5)
        accepted = await api.post(f"/api/v1/lxc/instances/{vmid}/backup", json={}, headers=ASYNC)
        url = accepted.headers["location"]
        received = ""
        state_at_first_line = None
        async with api.stream("GET", f"{url}/events") as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            assert stream.headers["cache-control"] == "no-cache"
            async for chunk in stream.aiter_text():
                received += chunk
                if state_at_first_line is None and "event: progress" in received:
                    state_at_first_line = (await api.get(url)).json()["state"]
        assert state_at_first_line == "running"  # lines arrive while the host command runs

        events = _events(received)
        progress, end = events[:-1], events[-1]
        assert {e["event"] for e in progress} == {"progress"}
        assert [int(e["id"]) for e in progress] == list(range(1, len(progress) + 1))
        lines = [json.loads(e["data"])["line"] for e in progress]
        assert lines[0].startswith("$ vzdump ") and any("Finished Backup of VM" in line for line in lines)
        assert end["event"] == "end"
        final = json.loads(end["data"])
        assert final["state"] == "succeeded" and final["result"]["archive"].startswith("/var/lib/vz/dump/")
        assert final["finished"] >= final["started"]

        # a client reconnecting after event 2 gets the rest, then the outcome
        resumed = await api.get(f"{url}/events", headers={"Last-Event-ID": "2"})
        again = _events(resumed.text)
        assert [json.loads(e["data"])["line"] for e in again[:-1]] == lines[2:]
        assert again[-1]["event"] == "end"

        assert (await api.get("/api/v1/jobs/" + "0" * 32 + "/events")).status_code == 404
        assert (await api.get("/api/v1/jobs/xyz/events")).status_code == 400
        unauthenticated = await httpx.AsyncClient(trust_env=False).get(f"{quick.url}{url}/events")
        assert unauthenticated.status_code == 401


async def test_a_finished_jobs_record_and_output_outlive_the_replica_and_the_book(fresh_sim, tmp_path):
    from tests.deployments.lxc.simenv import make_client

    config = fresh_sim.config(tmp_path, jobs_store=f"sqlite:///{tmp_path}/jobs.sqlite3")
    with local_state():  # the first replica and its actors
        client, app = make_client(config)
        async with client:
            vmid = await create_ct(client)
            accepted = await client.post(f"/api/v1/lxc/instances/{vmid}/backup", json={}, headers=ASYNC)
            url = accepted.headers["location"]
            before = await eventually(lambda: _finished(client, url), timeout=30, what="the backup job")
        await app.state.component.service.pool.close()
    with local_state():  # a new replica, and a new JobBook on the same store (as after a restart)
        client, app = make_client(config)
        async with client:
            after = (await client.get(url)).json()
            assert after["state"] == "succeeded" and after["result"] == before["result"]
            assert after["progress"] == before["progress"] and after["progress"][0].startswith("$ vzdump ")
            replay = _events((await client.get(f"{url}/events")).text)
            assert [json.loads(e["data"])["line"] for e in replay[:-1]] == before["progress"]
            assert json.loads(replay[-1]["data"])["state"] == "succeeded"
        await app.state.component.service.pool.close()
