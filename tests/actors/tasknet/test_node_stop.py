"""A node actor that is stopped closes its record files (events.log, raft.log): no descriptor of its
folder stays open in the process, and a node restarted on the same folder reads them back."""

from __future__ import annotations

import os
from pathlib import Path

from actors.tasknet.node_actor import TaskNode
from actors.tasknet.raft import LEADER


def open_under(folder: Path) -> list[str]:
    """The files under `folder` this process holds open (from /proc/self/fd)."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the descriptor listdir itself used, closed since
            continue
        if target.startswith(f"{folder}{os.sep}"):
            held.append(target)
    return held


async def test_a_stopped_node_closes_its_files_and_a_restarted_one_reads_them_back(tmp_path: Path):
    folder = tmp_path / "n1"
    node = TaskNode("n1", str(folder), {})
    me = node.core.node_id
    node.core.set_genesis_author(me)
    assert await node.bootstrap([me])
    assert await node.ensure_joined()
    raft = node.core.ensure_raft(seed=1)
    assert raft is not None
    while raft.role != LEADER:
        raft.tick()
    node.core.persist_raft()
    events, term = len(node.core.log), raft.term
    assert events == 2 and term >= 1
    assert sorted(Path(p).name for p in open_under(folder)) == ["events.log", "raft.log"]

    await node.stop()
    assert open_under(folder) == []
    await node.stop()  # a second stop has nothing left to close
    assert node.core.ensure_raft() is raft  # a stopped node opens no file again

    again = TaskNode("n1", str(folder), {})
    try:
        assert again.core.node_id == me and len(again.core.log) == events
        assert again.core.node_id in again.core.state["nodes"]
        restarted = again.core.ensure_raft()
        assert restarted is not None and restarted.term == term and restarted.hard.voted_for == me
    finally:
        await again.stop()
    assert open_under(folder) == []
