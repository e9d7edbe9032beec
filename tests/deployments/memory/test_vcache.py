"""The vector cache beside the database: written, reused, invalidated by every relevant change."""

from __future__ import annotations

import os
import stat

import pytest

from deployments.memory import vcache
from tests.deployments.memory.conftest import memory_with


@pytest.fixture
def hybrid(tmp_path, embed_server, monkeypatch):
    monkeypatch.setattr(vcache, "MIN_ROWS", 1)
    mem = memory_with(tmp_path, MEM_EMBEDDING_URL=embed_server.base_url, MEM_EMBEDDING_MODEL="m")
    for key, value in [
        ("deploy", "Deploy to production with make release"),
        ("coffee", "The coffee machine needs descaling every month"),
        ("backup", "Database backups run nightly"),
    ]:
        mem.save(key, value)
    return mem


def cache_files(mem) -> list[str]:
    folder = mem.store.path + ".vectors"
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def fresh(mem, dim_bytes: int = 1024) -> bool:
    return vcache.load(mem.store.path, mem.store.conn, "m", dim_bytes) is not None


def test_written_private_and_reused(hybrid):
    assert cache_files(hybrid) == []
    first = hybrid.search("coffe machin")
    files = cache_files(hybrid)
    assert len(files) == 3 and fresh(hybrid)
    folder = hybrid.store.path + ".vectors"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert all(stat.S_IMODE(os.stat(os.path.join(folder, f)).st_mode) == 0o600 for f in files)
    assert hybrid.search("coffe machin") == first
    assert cache_files(hybrid) == files  # reused, not rebuilt


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.save("new", "A brand new memory with a vector"),
        lambda m: m.store.set_pinned("user", "coffee", True),
        lambda m: m.supersede("backup", "backup-2", "Database backups run every night"),
        lambda m: m.store.delete("user", "deploy"),
        lambda m: m.store.set_embeddings([(1, b"\x00" * 1024)], "m"),
    ],
)
def test_changes_invalidate(hybrid, change):
    hybrid.search("coffee")
    assert fresh(hybrid)
    change(hybrid)
    assert not fresh(hybrid)
    hybrid.search("coffee")
    assert fresh(hybrid)


def test_rename_and_verify_keep_it(hybrid):
    hybrid.search("coffee")
    hybrid.store.rename("user", "coffee", "espresso")
    hybrid.store.verify("user", "deploy")
    assert fresh(hybrid)
    assert hybrid.search("coffe machin")["results"][0]["key"] == "espresso"


def test_results_match_uncached_and_survive_lost_files(hybrid, monkeypatch):
    cached = hybrid.search("deploy production")
    for name in cache_files(hybrid):
        if name.endswith("-matrix.npy"):
            os.unlink(os.path.join(hybrid.store.path + ".vectors", name))
    monkeypatch.setattr(vcache, "MIN_ROWS", 10**9)  # read SQLite, write nothing
    assert hybrid.search("deploy production") == cached


def test_scope_filter_uses_codes(hybrid):
    hybrid.save("other", "The coffee grinder in the other office", scope="work")
    assert [r["key"] for r in hybrid.search("coffee", scope="work")["results"]] == ["other"]
    assert {r["scope"] for r in hybrid.search("coffee", scope="*")["results"]} == {"user", "work"}
    assert hybrid.search("coffee", scope="nobody")["results"] == []
