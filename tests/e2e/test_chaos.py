"""The chaos run, bounded: one round of every fault kind under mixed writes, nothing acknowledged lost.

`bench/chaos.py` runs `rayfleet up` (web filter, task network, mitigation, LLM gateway) with
its GCS in Redis, joins a worker node, starts `mem serve`, and writes through every
component's public API while it kills, one after another in a seeded order, a Serve replica,
a named actor, a data-plane child, the GCS, the worker node and `mem serve`. Afterwards it
looks up every write that was acknowledged. The ten-minute version is the README's figure;
this one proves the same properties in one round.
"""

from __future__ import annotations

import json
import subprocess
import sys

import redis

from tests.conftest import ROOT, require_server

KINDS = {"replica", "actor", "child", "gcs", "node", "mem"}


def test_one_round_of_every_fault_loses_no_acknowledged_write(tmp_path):
    require_server("redis", "127.0.0.1", 6379)
    out = tmp_path / "chaos.json"
    namespace_keys_before = set(redis.Redis(host="127.0.0.1", port=6379).scan_iter(match="RAYrayfleet-chaos-*"))
    done = subprocess.run(
        [
            sys.executable,
            "bench/chaos.py",
            *("--rounds", "1", "--fault-every", "8", "--seed", "7"),
            *("--recovery", "180", "--json", str(out)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert out.exists(), done.stdout[-4000:] + done.stderr[-4000:]
    summary = json.loads(out.read_text())
    report = done.stdout[-4000:]

    assert set(summary["faults"]) == KINDS and not summary["skipped"], report
    writers = {row["writer"]: row for row in summary["writers"]}
    for name in ("webfilter domain", "tasknet task", "mitigation rule", "mitigation ban", "gateway registry", "memory"):
        assert writers[name]["acknowledged"] > 0 and writers[name]["listed"], report
    assert summary["lost"] == 0, report
    assert done.returncode == 0, report

    # the replicas' own listeners answer while the GCS is down
    for name, row in writers.items():
        if name.startswith("direct "):
            assert summary["failed_by_writer_and_fault"][name].get("gcs", 0) == 0, report
            assert row["acknowledged"] > 0, report
    # the run's GCS tables were removed from Redis with its cluster
    leftovers = set(redis.Redis(host="127.0.0.1", port=6379).scan_iter(match="RAYrayfleet-chaos-*"))
    assert leftovers <= namespace_keys_before
