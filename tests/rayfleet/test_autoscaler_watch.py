"""The timeline of a cluster under its autoscaler: what a look at the state file reads, and answers counted per phase."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rayfleet.autoscaler_watch import Load, Watch
from tests.polling import eventually_sync

HEAD = {"node_id": "h", "ip": "127.0.0.2", "worker": False, "resources": {"CPU": 2.0}}
WORKER = {"node_id": "w", "ip": "192.0.2.2", "worker": True, "resources": {"CPU": 1.0, "rayfleet_worker": 1.0}}


def write_state(path, nodes, replicas, ips):
    path.write_text(
        json.dumps({"nodes": nodes, "serve": {"ignore_gen": {"status": "RUNNING", "replicas": replicas, "nodes": ips}}})
    )


def test_a_look_counts_nodes_workers_and_where_the_replicas_run(tmp_path):
    state = tmp_path / "rayfleet.json"
    watch = Watch(state, "ignore_gen")
    assert (watch.sample().nodes, watch.sample().replicas) == (0, 0), "no state file yet: nothing seen, no error"
    write_state(state, [HEAD, WORKER], 4, ["127.0.0.2", "192.0.2.2"])
    seen = watch.sample()
    assert (seen.nodes, seen.workers, seen.replicas, seen.replica_ips) == (2, 1, 4, ["127.0.0.2", "192.0.2.2"])
    assert watch.worker_ips() == ["192.0.2.2"]
    state.write_text("{half a file")
    assert watch.sample().nodes == 0 and watch.worker_ips() == []


def test_wait_returns_the_look_that_held_or_names_what_did_not_happen(tmp_path):
    state = tmp_path / "rayfleet.json"
    write_state(state, [HEAD], 2, ["127.0.0.2"])
    watch = Watch(state, "ignore_gen", interval=0.05)
    assert watch.wait("one node", lambda s: s.nodes == 1, timeout=5).replicas == 2
    with pytest.raises(TimeoutError, match="a worker node did not happen within 0.2s"):
        watch.wait("a worker node", lambda s: s.workers == 1, timeout=0.2)


def test_the_table_keeps_a_row_for_every_change_of_phase_or_node_count(tmp_path):
    state = tmp_path / "rayfleet.json"
    write_state(state, [HEAD], 2, ["127.0.0.2"])
    watch = Watch(state, "ignore_gen", interval=0.02).start()
    eventually_sync(lambda: len(watch.samples) >= 2, timeout=10, what="looks before the load")
    watch.set_phase("load")
    write_state(state, [HEAD, WORKER], 4, ["127.0.0.2", "192.0.2.2"])
    eventually_sync(lambda: watch.samples[-1].nodes == 2, timeout=10, what="the worker seen")
    watch.stop()
    rows = watch.table(every=3600).splitlines()
    assert len(rows) == 3, rows  # the header, the first look, the change (phase and node count at once)
    assert rows[1].split()[1:3] == ["idle", "1"] and rows[2].split()[1:3] == ["load", "2"]
    assert rows[2].endswith("127.0.0.2,192.0.2.2")


class _Origin(BaseHTTPRequestHandler):
    status = 200

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(type(self).status)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@pytest.fixture
def origin() -> Iterator[tuple[str, type[_Origin]]]:
    handler = type("Origin", (_Origin,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/generate", handler
    server.shutdown()
    server.server_close()


def test_load_counts_answers_and_failures_under_the_phase_they_were_sent_in(origin):
    url, handler = origin
    load = Load(url, clients=2).start()
    try:
        eventually_sync(lambda: load.ok.get("idle", 0) >= 5, timeout=10, what="answers while idle")
        load.phase = "cooldown"
        handler.status = 503
        eventually_sync(lambda: load.failed.get("cooldown", 0) >= 3, timeout=10, what="failures counted")
    finally:
        load.stop()
    ok, failed = load.totals()
    assert ok >= 5 and failed >= 3 and ok + failed == sum(load.ok.values()) + sum(load.failed.values())
    assert "cooldown: HTTP 503" in load.errors, load.errors
