"""Fixtures of the memory tests: an isolated database, `mem` subprocesses, embedding servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from deployments.memory.config import load_settings
from deployments.memory.service import Memory
from tests.deployments.memory.embedserver import EmbeddingServer

REPO = Path(__file__).resolve().parents[3]
MEM = [sys.executable, "-m", "deployments.memory.cli"]


@pytest.fixture
def mem_env(tmp_path: Path) -> dict[str, str]:
    """Environment for a `mem` process with its own database and no user settings leaking in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM_")}
    env["MEM_DB"] = str(tmp_path / "store" / "memories.db")
    env["HOME"] = str(tmp_path / "home")
    env["PYTHONPATH"] = str(REPO)
    return env


def run_mem(
    env: dict[str, str], *args: str, stdin: str | None = None, cwd: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*MEM, *args], env=env, input=stdin, capture_output=True, text=True, timeout=timeout, cwd=cwd or str(REPO)
    )


def run_json(env: dict[str, str], *args: str, stdin: str | None = None, expect: int = 0) -> dict:
    proc = run_mem(env, *args, stdin=stdin)
    assert proc.returncode == expect, (proc.returncode, proc.stdout, proc.stderr)
    return json.loads(proc.stdout)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    warnings: list[str] = []
    settings = load_settings({"MEM_DB": str(tmp_path / "db" / "m.db")})
    mem = Memory(settings, warn=warnings.append)
    mem.warnings = warnings  # type: ignore[attr-defined]
    yield mem
    mem.store.close()


def memory_with(tmp_path: Path, **env: str) -> Memory:
    warnings: list[str] = []
    base = {"MEM_DB": str(tmp_path / "db" / "m.db")}
    base.update(env)
    mem = Memory(load_settings(base), warn=warnings.append)
    mem.warnings = warnings  # type: ignore[attr-defined]
    return mem


@pytest.fixture
def embed_server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer("ok") as server:
        yield server


@pytest.fixture
def stalling_server() -> Iterator[EmbeddingServer]:
    """Holds every request until the test ends (the gate opens at teardown)."""
    with EmbeddingServer("gate", stall_seconds=120) as server:
        try:
            yield server
        finally:
            server.gate.set()


@pytest.fixture
def failing_server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer("error") as server:
        yield server
