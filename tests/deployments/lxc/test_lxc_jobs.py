"""Long operations as jobs: `Prefer: respond-async` -> 202 and `/api/v1/jobs/{id}`, the container
lease held until the host command ends, the record kept by the JobBook actor."""

from __future__ import annotations

from typing import Any

import cloudpickle

from rayfleet.state import local_state
from tests.deployments.lxc.simenv import TEMPLATE, SimEnv, create_ct, make_client
from tests.polling import eventually

ASYNC = {"Prefer": "respond-async"}


async def job_done(client: Any, response: Any, timeout: float = 60) -> dict[str, Any]:
    """The finished job a 202 `response` started, read from its `Location`."""
    assert response.status_code == 202, response.text

    async def finished():
        job = (await client.get(response.headers["location"])).json()
        return job if job["state"] != "running" else None

    return await eventually(finished, timeout=timeout, what=f"the {response.json()['kind']} job")


async def test_backup_as_a_job_answers_202_and_records_the_result(tmp_path):
    sim = SimEnv(tmp_path / "sim", op_delay=1.0)  # vzdump holds the container lock for 1 s
    try:
        with local_state():
            client, app = make_client(sim.config(tmp_path, jobs_store=f"sqlite:///{tmp_path}/jobs.sqlite3"))
            async with client:
                vmid = await create_ct(client)
                accepted = await client.post(f"/api/v1/lxc/instances/{vmid}/backup", json={}, headers=ASYNC)
                assert accepted.status_code == 202, accepted.text
                assert accepted.headers["preference-applied"] == "respond-async"
                job_url = accepted.headers["location"]
                assert job_url == f"/api/v1/jobs/{accepted.json()['job_id']}"
                running = (await client.get(job_url)).json()
                assert running["state"] == "running" and running["kind"] == "backup"
                assert running["target"]["instance_id"] == vmid

                # the container's lease is held by the job: a stop waits until vzdump has ended
                stop = await client.post("/api/v1/lxc/instances/stop", json={"instance_ids": [vmid]})
                assert stop.status_code == 200 and stop.json()["results"][vmid]["outcome"] == "stopped"

                async def finished():
                    job = (await client.get(job_url)).json()
                    return job if job["state"] != "running" else None

                job = await eventually(finished, timeout=30, what="the backup job finished")
                assert job["state"] == "succeeded" and job["error"] is None, job
                assert job["result"]["archive"].startswith("/var/lib/vz/dump/vzdump-lxc-")
                assert job["finished"] >= job["started"]
                listed = (await client.get("/api/v1/jobs")).json()
                assert [j["id"] for j in listed] == [job["id"]]
            await app.state.component.service.pool.close()
    finally:
        sim.stop()


async def test_a_failing_job_records_the_status_the_route_would_answer(fresh_sim, tmp_path):
    with local_state():
        client, app = make_client(fresh_sim.config(tmp_path, jobs_store=f"sqlite:///{tmp_path}/jobs.sqlite3"))
        async with client:
            vmid = await create_ct(client)
            sync = await client.post(f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": "nowhere"})
            accepted = await client.post(
                f"/api/v1/lxc/instances/{vmid}/migrate", json={"target_host": "nowhere"}, headers=ASYNC
            )
            assert accepted.status_code == 202

            async def finished():
                job = (await client.get(accepted.headers["location"])).json()
                return job if job["state"] != "running" else None

            job = await eventually(finished, timeout=30, what="the migrate job finished")
            assert job["state"] == "failed" and job["error"]["status"] == sync.status_code != 200
            # bad input is still refused before any job is made
            both = await client.post(
                f"/api/v1/lxc/instances/{vmid}/backup", json={"destination": "/x", "storage": "local"}, headers=ASYNC
            )
            assert both.status_code == 400
            assert len((await client.get("/api/v1/jobs")).json()) == 1
            assert (await client.get("/api/v1/jobs/" + "0" * 32)).status_code == 404
            assert (await client.get("/api/v1/jobs/not-an-id")).status_code == 400
        await app.state.component.service.pool.close()


async def test_host_update_and_app_setup_as_jobs(fresh_sim, tmp_path):
    with local_state():
        client, app = make_client(fresh_sim.config(tmp_path, jobs_store=f"sqlite:///{tmp_path}/jobs.sqlite3"))
        async with client:
            vmid = await create_ct(client)
            update = await client.post("/api/v1/px/update", json={}, headers=ASYNC)
            setup = await client.post(
                f"/api/v1/lxc/instances/{vmid}/app/setup", json={"enable_nesting": True}, headers=ASYNC
            )
            assert update.status_code == setup.status_code == 202

            async def done(url):
                job = (await client.get(url)).json()
                return job if job["state"] != "running" else None

            updated = await eventually(lambda: done(update.headers["location"]), timeout=30, what="px/update job")
            assert updated["state"] == "succeeded" and "upgraded" in updated["result"]["output"]
            assert updated["target"] == {"hosts": ["eu-south-1/az1"]}
            installed = await eventually(lambda: done(setup.headers["location"]), timeout=60, what="app/setup job")
            assert installed["state"] == "succeeded", installed
            assert "docker.io" in fresh_sim.model.containers[vmid]["packages"]
        await app.state.component.service.pool.close()


async def test_create_clone_and_host_backup_as_jobs(fresh_sim, tmp_path):
    with local_state():
        client, app = make_client(fresh_sim.config(tmp_path, jobs_store=f"sqlite:///{tmp_path}/jobs.sqlite3"))
        async with client:
            created = await job_done(
                client,
                await client.post("/api/v1/lxc/instances", json={"image_id": TEMPLATE, "count": 2}, headers=ASYNC),
            )
            assert created["state"] == "succeeded", created
            first, second = created["result"]["instance_ids"]
            assert {first, second} <= set(fresh_sim.model.containers)
            assert any(line.startswith(f"$ pct create {first} ") for line in created["progress"])

            cloned = await job_done(
                client,
                await client.post("/api/v1/lxc/instances/clone", json={"source_instance_id": first}, headers=ASYNC),
            )
            assert cloned["state"] == "succeeded", cloned
            assert cloned["result"]["instance_id"] in fresh_sim.model.containers

            dumped = await job_done(
                client,
                await client.post("/api/v1/px/backup-lxc", json={"vmid": second, "storage": "local"}, headers=ASYNC),
            )
            assert dumped["state"] == "succeeded", dumped
            assert any("creating vzdump archive" in line for line in dumped["progress"])
            refused = await client.post("/api/v1/px/backup-lxc", json={"vmid": second}, headers=ASYNC)
            assert refused.status_code == 400  # validated before any job is made
        await app.state.component.service.pool.close()


async def test_a_job_outlives_the_replica_that_accepted_it(fresh_sim, tmp_path):
    """The job runs in the runner actor, with the runner's own SSH pool: the replica that accepted
    it can go (its pool closed, its app dropped) and another one sees it finish, output complete."""
    from deployments.lxc.service import shared_service

    config = fresh_sim.config(tmp_path, jobs_store=f"sqlite:///{tmp_path}/jobs.sqlite3")
    with local_state():  # the actors (book, runner, locks) outlive both replicas
        first, first_app = make_client(config)
        async with first:
            vmid = await create_ct(first)
            fresh_sim.slow_down(3.0)  # vzdump holds the container for 3 s
            accepted = await first.post(f"/api/v1/lxc/instances/{vmid}/backup", json={}, headers=ASYNC)
            assert accepted.status_code == 202, accepted.text
            url = accepted.headers["location"]
            await eventually(lambda: fresh_sim.model.containers[vmid]["lock"] == "backup", what="vzdump running")
        await first_app.state.component.service.pool.close()  # the replica is gone, and its connections
        del first, first_app

        second, second_app = make_client(config)
        async with second:

            async def finished():
                job = (await second.get(url)).json()
                return job if job["state"] != "running" else None

            job = await eventually(finished, timeout=60, what="the backup finished after its replica went")
            assert job["state"] == "succeeded", job
            assert job["result"]["archive"].startswith(f"/var/lib/vz/dump/vzdump-lxc-{vmid}-")
            assert fresh_sim.model.host_path(job["result"]["archive"]).is_file()
            progress = job["progress"]
            assert progress[0].startswith("$ vzdump ") and any("Finished Backup of VM" in x for x in progress)
            replay = (await second.get(f"{url}/events")).text  # the stream comes from storage
            assert replay.count("event: progress") == len(progress) and "event: end" in replay
        await second_app.state.component.service.pool.close()
        await shared_service(config).pool.close()


def test_a_job_is_rebuilt_in_another_process_with_that_processs_service(fresh_sim, tmp_path):
    """What Ray does with the runner's argument: the pickled job, loaded by a fresh interpreter,
    runs against a service of that process (none of the replica's objects travel)."""
    import functools
    import json
    import subprocess
    import sys

    from deployments.lxc.jobs import as_job
    from deployments.lxc.service import LxcService

    async def where(t: Any) -> dict[str, Any]:  # travels by value, as a route's closure does
        from deployments.lxc.service import shared_service

        return {"key": t.key, "host": t.zone.host, "from_shared_service": t.source is shared_service(t.config)}

    config = fresh_sim.config(tmp_path)
    t = LxcService(config).target()
    payload = tmp_path / "job.pickle"
    payload.write_bytes(cloudpickle.dumps(as_job(functools.partial(where, t))))
    script = (
        "import asyncio, json, sys, cloudpickle; job = cloudpickle.load(open(sys.argv[1], 'rb'));"
        "lines = []; print(json.dumps(asyncio.run(job(lines.append))))"
    )
    done = subprocess.run([sys.executable, "-c", script, str(payload)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome == {"result": {"key": "eu-south-1/az1", "host": "127.0.0.1", "from_shared_service": True}}


COMPOSE = "services:\n  web:\n    image: nginx:1.27\n"


async def test_compose_deploy_and_update_template_image_and_host_backup_as_jobs(fresh_sim, tmp_path):
    """The other operations that can outlive a request: app/deploy, app/update, px/image, px/backup."""
    (tmp_path / "compose").mkdir()
    (tmp_path / "compose" / "web.yml").write_text(COMPOSE)
    with local_state():
        client, app = make_client(fresh_sim.config(tmp_path, jobs_store=f"sqlite:///{tmp_path}/jobs.sqlite3"))
        async with client:
            vmid = await create_ct(client)
            base = f"/api/v1/lxc/instances/{vmid}/app"
            assert (await client.post(f"{base}/setup", json={"enable_nesting": True})).status_code == 200
            ct = fresh_sim.model.containers[vmid]

            deployed = await job_done(
                client,
                await client.post(
                    f"{base}/deploy", json={"action": "install", "compose_file": "web.yml"}, headers=ASYNC
                ),
            )
            assert deployed["kind"] == "app/deploy" and deployed["state"] == "succeeded", deployed
            assert deployed["target"]["instance_id"] == vmid
            assert ct["docker"]["containers"]["web-web-1"]["image"] == "nginx:1.27"

            (tmp_path / "compose" / "web.yml").write_text(COMPOSE.replace("1.27", "1.28"))
            updated = await job_done(
                client, await client.post(f"{base}/update", json={"compose_file": "web.yml"}, headers=ASYNC)
            )
            assert updated["state"] == "succeeded", updated
            assert ct["docker"]["containers"]["web-web-1"]["image"] == "nginx:1.28"

            # a compose file that cannot be used is refused before any job is made
            jobs_before = len((await client.get("/api/v1/jobs")).json())
            (tmp_path / "compose" / "bad.yml").write_text("services: [")
            for path, body in ((f"{base}/deploy", {"compose_file": "bad.yml"}), (f"{base}/update", {})):
                refused = await client.post(path, json=body, headers=ASYNC)
                assert refused.status_code == 400, refused.text
            assert len((await client.get("/api/v1/jobs")).json()) == jobs_before

            imaged = await job_done(
                client,
                await client.post(
                    "/api/v1/px/image", json={"instance_id": vmid, "template_name": "golden"}, headers=ASYNC
                ),
            )
            assert imaged["kind"] == "px/image" and imaged["state"] == "succeeded", imaged
            assert fresh_sim.model.host_path("/var/lib/vz/template/cache/golden.tar.gz").is_file()

            saved = await job_done(
                client, await client.post("/api/v1/px/backup", json={"backup_dir": "/root/cfg"}, headers=ASYNC)
            )
            assert saved["kind"] == "px/backup" and saved["state"] == "succeeded", saved
            assert list(fresh_sim.model.host_path("/root/cfg").glob("proxmox-backup-*.tar.gz"))
        await app.state.component.service.pool.close()
