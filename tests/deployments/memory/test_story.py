"""The done-when story, through subprocesses of the installed `mem` and `curl`.

A new user saves a dozen memories from the shell, finds each again with a few
words in another order, links and traverses them, starts `mem serve`, and reads
them with curl using the printed token.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import free_port

MEM_BIN = Path(sys.executable).parent / "mem"

DOZEN = {
    "deploy-prod": ("Production deploys go through make release after the CI pipeline turns green", "ops"),
    "db-host": ("The primary PostgreSQL database lives on db-prod-1 behind pgbouncer", "db,ops"),
    "backup-policy": ("Nightly backups are kept for thirty days in the cold storage bucket", "db"),
    "editor": ("I edit code in Neovim with the lazy plugin manager and treesitter", "tools"),
    "python-version": ("Projects target Python 3.11 and use uv for virtual environments", "python"),
    "test-command": ("Run the unit tests with pytest -x before every push to main", "python,ci"),
    "oncall": ("Alice Moreau is the on-call lead for payments this quarter", "people"),
    "vpn": ("The office VPN uses WireGuard with keys rotated every ninety days", "network"),
    "coffee": ("The espresso machine on floor two needs descaling every month", "office"),
    "api-style": ("Public HTTP APIs return JSON errors with a code and a message field", "api"),
    "logging": ("Services log JSON lines to stderr and never print secrets", "ops"),
    "release-day": ("Releases are cut on Tuesday mornings and announced in the team channel", "ops"),
}
QUERIES = {
    "deploy-prod": "release make deploys",
    "db-host": "pgbouncer primary database",
    "backup-policy": "thirty nightly backups",
    "editor": "treesitter neovim",
    "python-version": "uv python 3.11",
    "test-command": "push pytest unit",
    "oncall": "payments lead alice",
    "vpn": "wireguard vpn keys",
    "coffee": "descaling espresso",
    "api-style": "errors json apis",
    "logging": "secrets stderr",
    "release-day": "tuesday releases cut",
}


def mem(env: dict, *args: str, stdin: str | None = None) -> dict:
    proc = subprocess.run([str(MEM_BIN), *args], env=env, input=stdin, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, (args, proc.stderr)
    return json.loads(proc.stdout)


def curl(*args: str) -> tuple[int, dict]:
    proc = subprocess.run(["curl", "-sS", "-w", "\n%{http_code}", *args], capture_output=True, text=True, timeout=30)
    body, _, status = proc.stdout.rpartition("\n")
    return int(status), json.loads(body)


def test_new_user_story(mem_env):
    if not MEM_BIN.exists():
        pytest.fail(f"{MEM_BIN} missing: install the project (pip install -e .)")
    if shutil.which("curl") is None:
        pytest.fail("curl is not installed")
    env = {k: v for k, v in mem_env.items() if k != "PYTHONPATH"}  # the installed script, as a user runs it

    for key, (value, tags) in DOZEN.items():
        if key == "logging":
            saved = mem(env, "save", key, "-", tags, stdin=value + "\n")
        else:
            saved = mem(env, "save", key, value, tags)
        assert saved["created"] is True and saved["superseded"] is None
    assert mem(env, "list")["count"] == 12

    for key, query in QUERIES.items():
        results = mem(env, "search", query)["results"]
        assert results and results[0]["key"] == key, (query, [r["key"] for r in results])

    mem(env, "link", "deploy-prod", "needs", "test-command")
    mem(env, "link", "deploy-prod", "scheduled-by", "release-day")
    mem(env, "link", "test-command", "uses", "python-version")
    graph = mem(env, "traverse", "deploy-prod", "2", "--direction", "out")
    assert {n["key"]: n["depth"] for n in graph["nodes"]} == {
        "deploy-prod": 0,
        "test-command": 1,
        "release-day": 1,
        "python-version": 2,
    }
    assert len(graph["edges"]) == 3

    port = free_port()
    server = subprocess.Popen(
        [str(MEM_BIN), "serve", str(port)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        info = json.loads(server.stdout.readline())
        token = info["token"]
        assert info["url"] == f"http://127.0.0.1:{port}"
        status, health = curl(f"{info['url']}/health")
        assert status == 200 and health["status"] == "ok"
        status, listing = curl("-H", f"X-MEM-Token: {token}", f"{info['url']}/memories")
        assert status == 200 and {m["key"] for m in listing["memories"]} == set(DOZEN)
        status, one = curl("-H", f"Authorization: Bearer {token}", f"{info['url']}/memories/vpn")
        assert status == 200 and one["value"] == DOZEN["vpn"][0]
        status, found = curl(
            "-G", "-H", f"X-MEM-Token: {token}", "--data-urlencode", "q=espresso descaling", f"{info['url']}/memories"
        )
        assert status == 200 and found["results"][0]["key"] == "coffee"
        status, denied = curl(f"{info['url']}/memories/vpn")
        assert status == 401 and denied["code"] == "unauthorized"
    finally:
        server.terminate()
        server.wait(timeout=10)
