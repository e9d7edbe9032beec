"""The `mem` command through real subprocesses: commands, output, exit codes, environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from deployments.memory.errors import (
    EXIT_CONFLICT,
    EXIT_EMBEDDING,
    EXIT_NOT_FOUND,
    EXIT_STORAGE,
    EXIT_USAGE,
)
from tests.deployments.memory.conftest import MEM, REPO, run_json, run_mem


def test_save_get_search_list_roundtrip(mem_env):
    saved = run_json(mem_env, "save", "deploy", "Deploy with make release", "ops, make")
    assert saved == {
        "saved": True,
        "created": True,
        "scope": "user",
        "key": "deploy",
        "superseded": None,
        "embedded": False,
    }
    rec = run_json(mem_env, "get", "deploy")
    assert rec["found"] is True and rec["value"] == "Deploy with make release" and rec["tags"] == ["ops", "make"]
    assert rec["created_at"].endswith("Z") and rec["links"] == {"out": [], "in": []}
    found = run_json(mem_env, "search", "release deploy")
    assert [r["key"] for r in found["results"]] == ["deploy"] and found["mode"] == "text"
    listed = run_json(mem_env, "list")
    assert listed["count"] == 1 and listed["memories"][0]["key"] == "deploy"
    assert run_json(mem_env, "path") == {"path": mem_env["MEM_DB"]}


def test_value_from_stdin(mem_env):
    text = 'multi-line\n"quoted" value with $(no) expansion\n'
    run_json(mem_env, "save", "note", "-", stdin=text)
    assert run_json(mem_env, "get", "note")["value"] == text[:-1]
    run_json(mem_env, "supersede", "note", "note-2", "-", "t1", stdin="replacement from stdin")
    assert run_json(mem_env, "get", "note-2")["value"] == "replacement from stdin"


def test_get_miss_is_exit_3_with_found_false(mem_env):
    proc = run_mem(mem_env, "get", "missing")
    assert proc.returncode == EXIT_NOT_FOUND
    assert json.loads(proc.stdout) == {"found": False, "scope": "user", "key": "missing"}
    assert "no memory 'missing'" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("delete", "missing"),
        ("verify", "missing"),
        ("pin", "missing"),
        ("unpin", "missing"),
        ("rename", "missing", "x"),
        ("traverse", "missing"),
        ("supersede", "missing", "new", "v"),
        ("link", "missing", "rel", "other"),
        ("unlink", "missing", "rel", "other"),
    ],
)
def test_not_found_exit_code(mem_env, args):
    proc = run_mem(mem_env, *args)
    assert proc.returncode == EXIT_NOT_FOUND and proc.stdout == "" and "mem: error:" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("frobnicate",),
        ("get",),
        ("save", "k"),
        ("list", "ten"),
        ("search", "q", "x"),
        ("save", "", "value"),
        ("save", "k", "  "),
        ("link", "a", "bad rel", "b"),
        ("traverse", "k", "--direction", "up"),
        ("--format", "yaml", "list"),
        ("search", "   "),
        ("--scope", "*", "save", "k", "v"),
    ],
)
def test_bad_usage_exit_code(mem_env, args):
    proc = run_mem(mem_env, *args)
    assert proc.returncode == EXIT_USAGE, proc.stderr
    assert proc.stderr.startswith("mem: error:") and proc.stdout == ""


def test_conflict_exit_code(mem_env):
    run_json(mem_env, "save", "a", "first value")
    run_json(mem_env, "save", "b", "second thing entirely")
    for args in (("rename", "a", "b"), ("supersede", "a", "b", "v")):
        proc = run_mem(mem_env, *args)
        assert proc.returncode == EXIT_CONFLICT and "already exists" in proc.stderr


def test_storage_error_exit_code(mem_env, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    env = dict(mem_env, MEM_DB=str(blocker / "m.db"))
    proc = run_mem(env, "list")
    assert proc.returncode == EXIT_STORAGE and "cannot create database" in proc.stderr
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"garbage" * 1000)
    proc = run_mem(dict(mem_env, MEM_DB=str(corrupt)), "list")
    assert proc.returncode == EXIT_STORAGE


def test_reembed_without_endpoint_exit_code(mem_env):
    proc = run_mem(mem_env, "reembed")
    assert proc.returncode == EXIT_EMBEDDING and "MEM_EMBEDDING_URL" in proc.stderr


def test_bad_environment_is_usage_error(mem_env):
    proc = run_mem(dict(mem_env, MEM_EMBED_TIMEOUT="soon"), "list")
    assert proc.returncode == EXIT_USAGE and "MEM_EMBED_TIMEOUT" not in proc.stdout
    assert "invalid duration" in proc.stderr


def test_scope_option_and_env(mem_env):
    run_json(mem_env, "--scope", "work", "save", "k", "work value")
    run_json(mem_env, "save", "k", "user value", "--scope", "home")
    assert run_json(dict(mem_env, MEM_SCOPE="work"), "get", "k")["value"] == "work value"
    assert run_json(mem_env, "get", "k", "--scope", "home")["value"] == "user value"
    assert run_mem(mem_env, "get", "k").returncode == EXIT_NOT_FOUND  # default scope is user
    every = run_json(mem_env, "--scope", "*", "list")
    assert {m["scope"] for m in every["memories"]} == {"work", "home"}


def test_repo_current_scope(mem_env, tmp_path):
    repo = tmp_path / "my-project"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    proc = subprocess.run(
        [*MEM, "--scope", "repo:current", "save", "k", "repo value"],
        env=mem_env,
        cwd=repo / "src",
        capture_output=True,
        text=True,
    )
    assert json.loads(proc.stdout)["scope"] == "repo:my-project"


def test_links_traverse_and_flags(mem_env):
    for key in ("a", "b", "c"):
        run_json(mem_env, "save", key, f"memory {key} about topic{key}")
    run_json(mem_env, "link", "a", "uses", "b")
    run_json(mem_env, "link", "b", "uses", "c")
    run_json(mem_env, "link", "c", "cites", "a")
    graph = run_json(mem_env, "traverse", "a", "2", "--direction", "out")
    assert [n["key"] for n in graph["nodes"]] == ["a", "b", "c"]
    assert {(e["rel"]) for e in graph["edges"]} == {"uses", "cites"}
    only = run_json(mem_env, "traverse", "a", "3", "--rel", "cites")
    assert {n["key"] for n in only["nodes"]} == {"a", "c"}
    run_json(mem_env, "unlink", "c", "cites", "a")
    assert run_json(mem_env, "get", "a")["links"]["in"] == []
    assert run_json(mem_env, "pin", "b")["pinned"] is True
    assert run_json(mem_env, "pinned")["memories"][0]["key"] == "b"
    assert run_json(mem_env, "list")["memories"][0]["key"] == "b"
    assert run_json(mem_env, "unpin", "b")["pinned"] is False
    assert run_json(mem_env, "verify", "c")["verified_at"]
    run_json(mem_env, "rename", "b", "b-new")
    assert run_json(mem_env, "get", "a")["links"]["out"] == [{"rel": "uses", "scope": "user", "key": "b-new"}]
    run_json(mem_env, "supersede", "c", "c2", "memory c, second version")
    assert "c" not in [m["key"] for m in run_json(mem_env, "list")["memories"]]
    assert run_json(mem_env, "delete", "a")["links_removed"] == 1


def test_auto_supersede_reported(mem_env):
    run_json(mem_env, "save", "db", "The production database runs PostgreSQL 16 on host db-prod-1, port 5432.")
    result = run_json(mem_env, "save", "database", "Production database: PostgreSQL 16 on host db-prod-1 (port 5432).")
    assert result["superseded"] == "db"
    off = dict(mem_env, MEM_CONFLICT_DISABLE="1")
    assert (
        run_json(off, "save", "database-copy", "Production database: PostgreSQL 16 on host db-prod-1 (port 5432).")[
            "superseded"
        ]
        is None
    )


def test_text_format(mem_env):
    run_mem(mem_env, "save", "deploy", "Deploy with make release", "ops")
    proc = run_mem(mem_env, "--format", "text", "list")
    assert proc.returncode == 0 and "user/deploy [ops]: Deploy with make release" in proc.stdout
    proc = run_mem(mem_env, "get", "deploy", "--format", "text")
    assert proc.stdout.startswith("user/deploy") and "Deploy with make release" in proc.stdout
    assert run_mem(mem_env, "--format", "text", "path").stdout.strip() == mem_env["MEM_DB"]


def test_search_says_when_only_some_words_matched(mem_env):
    run_mem(
        mem_env, "save", "api-version", "Public API responses carry X-API-Version; bump it only on breaking changes"
    )
    res = run_json(mem_env, "search", "breaking changes API version header")
    assert res["match"] == "any" and [r["key"] for r in res["results"]] == ["api-version"]
    assert run_json(mem_env, "search", "breaking API")["match"] == "all"
    text = run_mem(mem_env, "--format", "text", "search", "breaking changes API version header").stdout
    assert text.startswith("(no memory matches every word; these match some of them)") and "api-version" in text


def test_debug_and_log_file(mem_env, tmp_path):
    quiet = run_mem(mem_env, "list")
    assert quiet.stderr == ""
    loud = run_mem(dict(mem_env, MEM_DEBUG="1"), "list")
    assert "debug: command=list" in loud.stderr
    log = tmp_path / "mem.log"
    run_mem(dict(mem_env, MEM_LOG_FILE=str(log)), "path")
    run_mem(dict(mem_env, MEM_LOG_FILE=str(log)), "list")
    lines = log.read_text().splitlines()
    assert len(lines) == 2 and "command=path" in lines[0]


def test_embedding_env_and_fallback_warning(mem_env, embed_server, stalling_server):
    env = dict(mem_env, MEM_EMBEDDING_URL=embed_server.base_url + "/v1", MEM_EMBEDDING_MODEL="hash")
    assert run_json(env, "save", "k", "coffee machine descaling")["embedded"] is True
    assert run_json(env, "search", "coffe machin")["mode"] == "hybrid"
    slow = dict(mem_env, MEM_EMBEDDING_URL=stalling_server.base_url, MEM_EMBED_TIMEOUT="200ms")
    proc = run_mem(slow, "search", "coffee")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["mode"] == "text"
    assert "warning: embedding endpoint timed out after 0.2s; using full-text search only" in proc.stderr
    assert run_json(dict(env, MEM_EMBEDDING_MODEL="other"), "reembed") == {
        "embedded": 1,
        "total": 1,
        "model": "other",
        "force": False,
    }


def test_two_processes_writing_at_once_lose_nothing(mem_env):
    """Two `mem` writers (plus a reader) hammer the same file; every save must land."""
    script = (
        "import sys\n"
        "from deployments.memory.cli import main\n"
        "w = sys.argv[1]\n"
        "for i in range(60):\n"
        "    assert main(['save', f'{w}-{i}', f'writer {w} note {i} words{i}x', w]) == 0\n"
        "    if i % 10 == 0:\n"
        "        assert main(['link', f'{w}-{i}', 'next', f'{w}-0']) in (0, 2)\n"
    )
    env = dict(mem_env, MEM_CONFLICT_DISABLE="")
    run_json(env, "list")  # create the file first so both start on the same schema
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, w],
            env=env,
            cwd=str(REPO),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in ("alpha", "beta")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    listed = run_json(env, "--scope", "user", "list", "1000")
    assert listed["count"] == 120
    for w in ("alpha", "beta"):
        for i in (0, 31, 59):
            assert [r["key"] for r in run_json(env, "search", f"words{i}x {w}")["results"]] == [f"{w}-{i}"]
    doctor = run_mem(env, "doctor")
    assert json.loads(doctor.stdout)["checks"][2] == {
        "name": "full-text index",
        "status": "pass",
        "detail": "consistent with the rows",
    }


def test_help_lists_env_and_exit_codes():
    proc = subprocess.run(
        [*MEM, "--help"], capture_output=True, text=True, cwd=str(REPO), env=dict(os.environ, PYTHONPATH=str(REPO))
    )
    assert proc.returncode == 0
    for name in ("MEM_DB", "MEM_EMBED_TIMEOUT", "MEM_SERVE_TOKEN", "3 not found", "5 storage error"):
        assert name in proc.stdout


def test_reembed_progress_bar_on_a_terminal(mem_env, embed_server):
    import pty

    env = dict(mem_env, MEM_EMBEDDING_URL=embed_server.base_url)
    for key in ("a", "b", "c"):
        run_json(dict(mem_env), "save", key, f"text number {key} here")
    quiet = run_mem(env, "reembed", "--force")
    assert quiet.returncode == 0 and "reembed [" not in quiet.stderr  # not a terminal: no bar
    master, slave = pty.openpty()
    proc = subprocess.run(
        [*MEM, "reembed", "--force"],
        env=env,
        cwd=str(REPO),
        stdout=subprocess.PIPE,
        stderr=slave,
        text=True,
        timeout=60,
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert proc.returncode == 0 and json.loads(proc.stdout)["embedded"] == 3
    assert b"reembed [" in shown and b"3/3" in shown
