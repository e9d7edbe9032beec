"""Schema-driven fuzzing of the autoscale API (schemathesis) against pve-sim over real SSH.

The app is built in-process and driven through `tests.fuzzing.fuzz_asgi`: every
operation of its own OpenAPI document gets generated requests (and the document's
examples, which name containers that exist, so `pct` really runs on the simulated
host). A run fails on any 5xx, any status the document does not list, any wrong
content type and any body that breaks the operation's documented schema.

The simulator here is the test's own (not the session one the other tests share),
since the fuzzer really rescales its containers. The fuzzer's in-process client
is not on loopback (`testclient`), so the per-address limit is set far above the run.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import cast

import pytest
from schemathesis.python.asgi import shutdown_lifespans

from actors.autoscale.monitor import MonitorActor
from actors.autoscale.policy import Decision
from actors.autoscale.scaler import ScalerActor
from deployments.autoscale.app import create_app
from deployments.autoscale.state import AutoscaleState
from rayfleet.ssh import SSHHost
from rayfleet.state import ActorHandle, LocalActorHandle, local_state
from sims.pve.scenario import day_scenario, install
from tests.deployments.autoscale.conftest import API_KEY, make_config
from tests.fuzzing import fuzz_asgi
from tests.sims.pve.simenv import SimEnv

MAX_EXAMPLES = 60  # 422 requests: ~5 s idle, ~23 s at load average 20 on 2 cores; nothing skipped


def _scaler(sim: SimEnv) -> ActorHandle[ScalerActor]:
    """A scaling model with one monitor on the simulator and a decision in its log (the read routes have data)."""
    ssh = SSHHost("127.0.0.1", sim.port, key_file=str(sim.client_key), known_hosts=str(sim.known_hosts))
    monitor = cast(ActorHandle[MonitorActor], LocalActorHandle(MonitorActor("pve1", ssh)))
    scaler = ScalerActor({"pve1": monitor}, {"pve1": (24, 24576)}, "http://127.0.0.1:9", "AUTOSCALE_API_KEY")
    scaler.record(Decision(1.0, "pve1", "101", "cpu", "hold", 2, 3, "cooldown", {"cpu_pct": 80.0}))
    return cast(ActorHandle[ScalerActor], LocalActorHandle(scaler))


def test_no_generated_request_breaks_the_autoscale_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOSCALE_API_KEY", API_KEY)
    sim = SimEnv(tmp_path / "sim")
    try:
        install(sim.model, day_scenario(7)["pve1"])
        rate = {"max_requests_per_minute": 1_000_000, "actor_name": "autoscale-fuzz-rate-limit"}
        started = time.monotonic()
        with local_state():
            config = make_config(sim, rate_limit=rate)
            state = AutoscaleState.from_ray(config, background=False)
            state.scaler = _scaler(sim)
            app = create_app(config, state)
            try:
                report = fuzz_asgi(app, "/openapi.json", headers={"X-API-Key": API_KEY}, max_examples=MAX_EXAMPLES)
            finally:
                shutdown_lifespans()  # closes the app's SSH pool (the fuzzer's event loop keeps it open otherwise)
        elapsed = time.monotonic() - started
    finally:
        sim.stop()
    print(f"{report.requests} requests over {len(report.operations)} operations in {elapsed:.1f}s")
    assert len(report.operations) == 11 and report.requests >= 300
    assert any("pct set" in c for c in sim.commands()) and any("pct config" in c for c in sim.commands())
    assert report.failures == {}, "\n\n".join(f"{op}:\n{text}" for op, text in report.failures.items())
