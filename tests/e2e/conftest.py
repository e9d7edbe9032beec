"""Tier 3: one `rayfleet up` for the tests of this package, tests go through real HTTP.

The cluster is started exactly as a user starts it (`rayfleet up`, in a child
process) on free ports, with its own state folder and secrets, and stopped with
`rayfleet down`'s signal at the end. `RAYFLEET_E2E_APPS=a,b` limits the
applications deployed while developing one component. The cluster is package-scoped: it stops
once the last test of tests/e2e that needs it has run (under `make test` the tests that start a
cluster of their own run before it, so no two of ours are up in one worker).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from rayfleet.launcher import Launched, free_port, launch
from tests.conftest import ROOT


@pytest.fixture(scope="package")
def cluster(tmp_path_factory) -> Launched:
    apps = os.environ.get("RAYFLEET_E2E_APPS")
    state_dir = tmp_path_factory.mktemp("rayfleet-e2e")
    env = {
        "RAYFLEET_HOST": "127.0.0.1",
        "RAYFLEET_HOME": str(ROOT),
        # components that bind their own data-plane ports get free ones in tests
        "LLM_GATEWAY__SERVER__PORT": os.environ.get("LLM_GATEWAY__SERVER__PORT", str(free_port())),
        # records, cache and registry of this run stay out of the project's var/ (a user's
        # `make up` keeps its data there); the ASN dataset cache in var/asn is shared on purpose
        "LLM_GATEWAY__DATA_DIR": str(state_dir / "llm_gateway"),
        "LXC__AUDIT_LOG": str(state_dir / "lxc" / "audit.log"),
        "LXC__CONF_BACKUP_DIR": str(state_dir / "lxc" / "conf-backups"),
        "TASKNET__DATA_DIR": str(state_dir / "tasknet"),
        "TASKNET__NETWORK__PROPOSAL_VOTING_PERIOD": "10",  # nobody closes a proposal before it ends
        "WEBFILTER__DATA_DIR": str(state_dir / "webfilter"),
    }
    launched = launch(state_dir, apps.split(",") if apps else None, env=env, cwd=ROOT, timeout=300)
    yield launched
    launched.stop()


@pytest.fixture(scope="package")
def serve_url(cluster: Launched) -> str:
    """Base URL of the Serve HTTP ingress, e.g. http://127.0.0.1:PORT (no trailing slash)."""
    return cluster.base_url


@pytest.fixture(scope="package")
def cluster_secrets(cluster: Launched) -> dict[str, str]:
    """The secrets the cluster's replicas were given (its own secrets.env)."""
    return cluster.secrets


def needs_app(cluster: Launched, name: str) -> None:
    """Skip a component's e2e tests when RAYFLEET_E2E_APPS leaves it out (never in CI)."""
    if name not in cluster.apps:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{name} was not deployed")
        pytest.skip(f"{name} not deployed in this run (RAYFLEET_E2E_APPS)")


@pytest.fixture
def http(serve_url: str):
    with httpx.Client(base_url=serve_url, timeout=30.0, trust_env=False) as client:
        yield client


def status_json(state_dir: Path) -> dict:
    """`rayfleet status --json` of the `rayfleet up` whose state folder is ``state_dir``."""
    env = {**os.environ, "RAYFLEET_STATE_DIR": str(state_dir)}
    out = subprocess.run(
        [sys.executable, "-m", "rayfleet.cli", "status", "--json"], env=env, capture_output=True, text=True, timeout=60
    )
    return json.loads(out.stdout)
