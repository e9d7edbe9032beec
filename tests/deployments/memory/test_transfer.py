"""`mem export` / `mem import`: JSON Lines with links, moved between two databases (two machines)."""

from __future__ import annotations

import json
import os
import stat

from tests.deployments.memory.conftest import run_json, run_mem
from tests.deployments.memory.embedserver import EmbeddingServer


def second_machine(mem_env: dict[str, str], tmp_path) -> dict[str, str]:
    return {**mem_env, "MEM_DB": str(tmp_path / "other" / "memories.db"), "HOME": str(tmp_path / "home2")}


def seed(env: dict[str, str]) -> None:
    run_json(env, "save", "deploy-target", "production runs on the blue cluster", "ops,infra")
    run_json(env, "save", "oncall", "alice covers the weekend rota")
    run_json(env, "save", "editor", "tabs, four wide", "--scope", "repo:web")
    run_json(env, "pin", "deploy-target")
    run_json(env, "link", "oncall", "relates-to", "deploy-target")
    run_json(env, "link", "deploy-target", "see-also", "editor", "--to-scope", "repo:web")
    run_json(env, "supersede", "oncall", "oncall-2", "bob covers the weekend rota")


def test_export_then_import_moves_memories_links_pins_and_archive(mem_env, tmp_path) -> None:
    seed(mem_env)
    path = tmp_path / "export.jsonl"
    written = run_json(mem_env, "export", "--all", "-o", str(path))
    assert written["lines"] == 1 + 4 + 3 and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["count"] == 4 and lines[0]["links"] == 3
    assert {(m["scope"], m["key"]) for m in lines if m["type"] == "memory"} == {
        ("user", "deploy-target"),
        ("user", "oncall"),
        ("user", "oncall-2"),
        ("repo:web", "editor"),
    }
    other = second_machine(mem_env, tmp_path)
    result = run_json(other, "import", str(path))
    assert result == {"imported": 4, "skipped": 0, "links": 3, "on_conflict": "fail"}
    for env in (mem_env, other):  # the same view on both machines
        got = run_json(env, "get", "deploy-target")
        assert got["pinned"] is True and got["tags"] == ["ops", "infra"]
        assert run_json(env, "get", "oncall")["archived"] is True
    before = run_json(mem_env, "traverse", "deploy-target", "2", "--include-archived")
    after = run_json(other, "traverse", "deploy-target", "2", "--include-archived")
    edges = lambda g: sorted((e["from"], e["rel"], e["to"]) for e in g["edges"])  # noqa: E731
    assert edges(before) == edges(after)
    assert {rel for _, rel, _ in edges(after)} == {"relates-to", "see-also", "supersedes"}


def test_export_streams_one_scope_to_stdout_and_import_reads_stdin(mem_env, tmp_path) -> None:
    seed(mem_env)
    proc = run_mem(mem_env, "export", "--scope", "repo:web")
    assert proc.returncode == 0
    assert [json.loads(line)["type"] for line in proc.stdout.splitlines()] == ["header", "memory"]
    other = second_machine(mem_env, tmp_path)
    assert run_json(other, "import", "-", stdin=proc.stdout)["imported"] == 1
    assert run_json(other, "get", "editor", "--scope", "repo:web")["value"] == "tabs, four wide"


def test_a_bad_line_or_a_dangling_link_writes_nothing(mem_env, tmp_path) -> None:
    seed(mem_env)
    lines = run_mem(mem_env, "export", "--all").stdout.splitlines()
    other = second_machine(mem_env, tmp_path)
    broken = [*lines[:2], '{"type": "memory", "scope": "user", "key": "", "value": "x"}', *lines[2:]]
    proc = run_mem(other, "import", "-", stdin="\n".join(broken))
    assert proc.returncode == 2 and "import line 3" in proc.stderr
    dangling = [
        *lines,
        json.dumps(
            {
                "type": "link",
                "from": {"scope": "user", "key": "oncall"},
                "rel": "x",
                "to": {"scope": "user", "key": "ghost"},
            }
        ),
    ]
    proc = run_mem(other, "import", "-", stdin="\n".join(dangling))
    assert proc.returncode == 2 and "ghost" in proc.stderr
    for bad in ("not json", '{"type": "memory"}', json.dumps({"type": "header", "format": "other", "version": 1})):
        assert run_mem(other, "import", "-", stdin=bad).returncode == 2
    assert run_json(other, "list", "--scope", "*")["count"] == 0  # nothing half-written


def test_conflicts_fail_by_default_skip_or_replace_on_request(mem_env, tmp_path) -> None:
    seed(mem_env)
    export = run_mem(mem_env, "export", "--all").stdout
    other = second_machine(mem_env, tmp_path)
    run_json(other, "save", "deploy-target", "an older note about production")
    run_json(other, "save", "local-only", "kept")
    run_json(other, "link", "local-only", "about", "deploy-target")
    failed = run_mem(other, "import", "-", stdin=export)
    assert failed.returncode != 0 and "already exist" in failed.stderr
    assert run_json(other, "list", "--scope", "*")["count"] == 2
    skipped = run_json(other, "import", "-", "--on-conflict", "skip", stdin=export)
    assert (skipped["imported"], skipped["skipped"]) == (3, 1)
    assert run_json(other, "get", "deploy-target")["value"] == "an older note about production"
    replaced = run_json(other, "import", "-", "--on-conflict", "replace", stdin=export)
    assert replaced["imported"] == 4
    assert run_json(other, "get", "deploy-target")["value"] == "production runs on the blue cluster"
    edges = run_json(other, "traverse", "local-only", "1")["edges"]
    assert any(e["rel"] == "about" for e in edges)  # the local memory's link survived the replace


def test_vectors_travel_with_their_model(mem_env, tmp_path) -> None:
    with EmbeddingServer() as server:
        env = {**mem_env, "MEM_EMBEDDING_URL": server.base_url, "MEM_EMBEDDING_MODEL": "hashed"}
        run_json(env, "save", "deploy-target", "production runs on the blue cluster in eu-west")
        run_json(env, "save", "lunch", "the canteen serves pasta on fridays")
        export = run_mem(env, "export").stdout
        memory_lines = [json.loads(line) for line in export.splitlines()[1:]]
        assert all(m["embedding_model"] == "hashed" and m["embedding"] for m in memory_lines)
        other = {
            **second_machine(mem_env, tmp_path),
            "MEM_EMBEDDING_URL": server.base_url,
            "MEM_EMBEDDING_MODEL": "hashed",
        }
        run_json(other, "import", "-", stdin=export)
        calls = len(server.requests)
        found = run_json(other, "search", "which cluster does production use")
        assert found["mode"] == "hybrid" and found["results"][0]["key"] == "deploy-target"
        assert len(server.requests) == calls + 1  # only the query was embedded; the vectors came along
