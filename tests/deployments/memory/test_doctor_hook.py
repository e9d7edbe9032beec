"""`mem doctor` (checklist and exit code) and `mem hook` (recall context, fails open)."""

from __future__ import annotations

import json
import os
import subprocess

from tests.deployments.memory.conftest import MEM, run_json, run_mem
from tests.deployments.memory.test_rest import Served


def checks(proc) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads(proc.stdout)["checks"]}


def test_doctor_fresh_install_passes_with_warnings(mem_env):
    run_json(mem_env, "save", "k", "value")
    proc = run_mem(dict(mem_env, MEM_SERVE_PORT="1"), "doctor")
    assert proc.returncode == 0
    c = checks(proc)
    assert c["version"]["status"] == "pass" and "mem " in c["version"]["detail"]
    assert c["store"]["status"] == "pass" and "1 memories" in c["store"]["detail"]
    assert mem_env["MEM_DB"] in c["store"]["detail"]
    assert c["embeddings"]["status"] == "warn"
    assert c["rest server"]["status"] == "warn" and "127.0.0.1:1" in c["rest server"]["detail"]
    assert c["token"]["status"] == "warn"
    assert c["recall hook"]["status"] == "warn"
    text = run_mem(dict(mem_env, MEM_SERVE_PORT="1"), "doctor", "--format", "text")
    assert "✓ store:" in text.stdout and "⚠ embeddings:" in text.stdout and "0 failed" in text.stdout


def test_doctor_all_green(mem_env, embed_server):
    env = dict(mem_env, MEM_EMBEDDING_URL=embed_server.base_url)
    run_json(env, "save", "k", "value")
    settings_dir = os.path.join(mem_env["HOME"], ".claude")
    os.makedirs(settings_dir)
    with open(os.path.join(settings_dir, "settings.json"), "w") as fh:
        json.dump(
            {
                "hooks": {
                    "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "mem hook"}]}]
                }
            },
            fh,
        )
    served = Served(env, "0")
    try:
        proc = run_mem(dict(env, MEM_SERVE_PORT=str(served.info["port"])), "doctor")
    finally:
        served.stop()
    c = checks(proc)
    assert proc.returncode == 0, proc.stdout
    assert {k: v["status"] for k, v in c.items()} == {
        "version": "pass",
        "store": "pass",
        "full-text index": "pass",
        "embeddings": "pass",
        "vectors": "pass",
        "rest server": "pass",
        "token": "pass",
        "recall hook": "pass",
    }
    assert f"127.0.0.1:{served.info['port']}" in c["rest server"]["detail"]


def test_doctor_failures_exit_1(mem_env, failing_server):
    run_json(mem_env, "list")
    token_file = os.path.join(os.path.dirname(mem_env["MEM_DB"]), "serve-token")
    with open(token_file, "w") as fh:
        fh.write("loose-token\n")
    os.chmod(token_file, 0o644)
    proc = run_mem(dict(mem_env, MEM_EMBEDDING_URL=failing_server.base_url, MEM_SERVE_PORT="1"), "doctor")
    assert proc.returncode == 1
    c = checks(proc)
    assert c["embeddings"]["status"] == "fail" and "HTTP 500" in c["embeddings"]["detail"]
    assert c["token"]["status"] == "fail" and "mode 644" in c["token"]["detail"]
    assert json.loads(proc.stdout)["ok"] is False


def test_doctor_wrong_token_and_foreign_port(mem_env):
    served = Served(mem_env, "0")
    try:
        proc = run_mem(dict(mem_env, MEM_SERVE_PORT=str(served.info["port"]), MEM_SERVE_TOKEN="wrong"), "doctor")
    finally:
        served.stop()
    assert proc.returncode == 1 and checks(proc)["token accepted"]["status"] == "fail"


def test_hook_output(mem_env, tmp_path):
    repo = tmp_path / "proj"
    (repo / ".git").mkdir(parents=True)
    run_json(mem_env, "save", "style", "Prefer small pure functions", "code")
    run_json(mem_env, "pin", "style")
    run_json(mem_env, "save", "recent", "Yesterday we moved CI to the new runners")
    run_json(mem_env, "--scope", "repo:proj", "save", "build", "Build with make all; tests with make test")
    run_json(mem_env, "--scope", "repo:proj", "pin", "build")
    run_json(mem_env, "--scope", "repo:other", "save", "elsewhere", "Not this repository")
    run_json(mem_env, "save", "long", "x" * 2000)
    proc = subprocess.run([*MEM, "hook"], env=mem_env, cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == ""
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    lines = out["additionalContext"].splitlines()
    assert "verify before acting" in lines[0]
    assert lines[1].startswith("- user/style [code] (pinned, verified today)")
    assert lines[2].startswith("- repo:proj/build (pinned, verified today)")
    body = "\n".join(lines)
    assert "recent" in body and "elsewhere" not in body
    long_line = next(line for line in lines if "user/long" in line)
    assert long_line.endswith("x" * 600 + "…") and "x" * 601 not in long_line
    limited = subprocess.run(
        [*MEM, "hook", "--limit", "0", "--format", "text"], env=mem_env, cwd=repo, capture_output=True, text=True
    )
    assert len(limited.stdout.splitlines()) == 3  # preamble + the two pinned


def test_hook_fails_open(mem_env, tmp_path):
    assert run_mem(mem_env, "hook").stdout == ""  # no database yet: nothing, exit 0
    corrupt = tmp_path / "bad.db"
    corrupt.write_bytes(b"garbage" * 100)
    proc = run_mem(dict(mem_env, MEM_DB=str(corrupt)), "hook")
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    proc = run_mem(dict(mem_env, MEM_EMBED_TIMEOUT="nonsense"), "hook", "--limit", "x")
    assert proc.returncode == 0 and proc.stdout == ""
