"""Run by test_node_actor_restart.py in its own process: a private Ray instance, 3 node actors,
one crashed by `ray.kill` (Ray restarts it); prints what the test asserts."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile

import ray

from deployments.tasknet.config import TasknetConfig
from deployments.tasknet.network import Network
from tests.polling import eventually


async def scenario(data_dir: str) -> None:
    config = TasknetConfig.model_validate(
        {"data_dir": data_dir, "webrtc": {"enabled": False}, "llm": {"base_url": None}}
    )
    network = Network(config)
    await network.ensure()
    n1, n2 = network.handles["n1"], network.handles["n2"]
    before = (await n1.submit.remote("task_create", {"title": "before", "reward": 5}, "general"))["result"]["id"]
    ray.kill(n2, no_restart=False)

    async def known(task_id: str) -> bool:
        return "result" in await n2.view.remote("task", task_id=task_id)

    await eventually(lambda: known(before), timeout=60, what="the restarted node recovered its log")
    print("recovered")
    after = (await n1.submit.remote("task_create", {"title": "after", "reward": 5}, "general"))["result"]["id"]
    await eventually(lambda: known(after), timeout=60, what="the restarted node rejoined the gossip")
    print("rewired", (await n2.view.remote("network_stats"))["result"]["total_peers"])
    for handle in network.handles.values():
        ray.kill(handle, no_restart=True)


def main() -> None:
    tmp = tempfile.mkdtemp(prefix="tasknet-ray-")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _temp_dir=os.path.join(tmp, "ray"),
        namespace="rayfleet",
        logging_level="ERROR",
    )
    try:
        asyncio.run(scenario(os.path.join(tmp, "data")))
    finally:
        ray.shutdown()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
