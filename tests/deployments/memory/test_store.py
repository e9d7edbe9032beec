"""The store: records, FTS consistency, links (cascade on delete and rename), traverse, pin/verify."""

from __future__ import annotations

import os
import sqlite3
import stat

import pytest

from deployments.memory.errors import ConflictError, NotFoundError, StorageError, UsageError
from deployments.memory.store import Store


def test_first_use_creates_private_folder_and_file(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "deep" / "dir" / "m.db"
        store = Store(str(path))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_unwritable_location_is_a_storage_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StorageError):
        Store(str(blocker / "sub" / "m.db"))


def test_corrupt_file_is_a_storage_error(tmp_path):
    path = tmp_path / "m.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StorageError):
        Store(str(path))


def test_save_get_update_and_fts_follow(memory):
    store = memory.store
    first = memory.save("deploy", "Deploy with make release", "ops,make")
    assert first["created"] is True and first["superseded"] is None
    again = memory.save("deploy", "Deploy with the release pipeline", ["ops"])
    assert again["created"] is False
    rec = store.get("user", "deploy")
    assert rec["value"] == "Deploy with the release pipeline" and rec["tags"] == ["ops"]
    assert rec["links"] == {"out": [], "in": []}
    assert [r["key"] for r in memory.search("pipeline")["results"]] == ["deploy"]
    assert memory.search("make")["results"] == []  # the old text left the index in the same write
    assert store.fts_integrity()


def test_validation_errors(memory):
    with pytest.raises(UsageError):
        memory.save("", "x")
    with pytest.raises(UsageError):
        memory.save("k", "   ")
    with pytest.raises(UsageError):
        memory.save("bad\nkey", "x")
    with pytest.raises(UsageError):
        memory.save("k", "x", tags=123)
    with pytest.raises(UsageError):
        memory.save("k", "x" * (1024 * 1024 + 1))
    with pytest.raises(UsageError):
        memory.save("k", "x", scope="*")
    assert memory.store.counts()["total"] == 0


def test_list_hides_archived_and_puts_pinned_first(memory):
    store = memory.store
    for key in ("a", "b", "c"):
        memory.save(key, f"value of {key} number {key * 3}")
    store.set_pinned("user", "a", True)
    memory.supersede("b", "b2", "value of b, second edition")
    keys = [r["key"] for r in store.list("user")]
    assert keys[0] == "a" and "b" not in keys and set(keys) == {"a", "b2", "c"}
    assert [r["key"] for r in store.list("user", pinned_only=True)] == ["a"]
    assert store.get("user", "b")["archived"] is True  # still readable by key


def test_scopes_are_separate(memory):
    memory.save("k", "user value")
    memory.save("k", "repo value", scope="repo:x")
    assert memory.store.get("repo:x", "k")["value"] == "repo value"
    assert {r["scope"] for r in memory.store.list("*")} == {"user", "repo:x"}
    assert [r["scope"] for r in memory.search("value", scope="repo:x")["results"]] == ["repo:x"]


def test_delete_cascades_links(memory):
    store = memory.store
    for key in ("a", "b", "c"):
        memory.save(key, f"note {key} alpha{key}")
    store.link("user", "a", "uses", "b")
    store.link("user", "c", "refines", "a")
    result = store.delete("user", "a")
    assert result["links_removed"] == 2
    assert store.conn.execute("SELECT count(*) FROM memory_links").fetchone()[0] == 0
    assert store.get("user", "b")["links"] == {"out": [], "in": []}
    with pytest.raises(NotFoundError):
        store.delete("user", "a")
    assert memory.search("alphaa")["results"] == []
    assert store.fts_integrity()


def test_rename_keeps_links_and_index(memory):
    store = memory.store
    memory.save("old", "the old name carries links")
    memory.save("other", "something else entirely")
    store.link("user", "old", "see-also", "other")
    store.link("user", "other", "part-of", "old")
    result = store.rename("user", "old", "new/name")
    assert result["links"] == 2
    rec = store.get("user", "new/name")
    assert rec["links"]["out"] == [{"rel": "see-also", "scope": "user", "key": "other"}]
    assert rec["links"]["in"] == [{"rel": "part-of", "scope": "user", "key": "other"}]
    with pytest.raises(NotFoundError):
        store.get("user", "old")
    assert [r["key"] for r in memory.search("new name")["results"]] == ["new/name"]
    with pytest.raises(ConflictError):
        store.rename("user", "new/name", "other")
    with pytest.raises(NotFoundError):
        store.rename("user", "missing", "x")
    assert store.fts_integrity()


def test_links_validation(memory):
    store = memory.store
    memory.save("a", "one")
    memory.save("b", "two")
    with pytest.raises(UsageError):
        store.link("user", "a", "has space", "b")
    with pytest.raises(UsageError):
        store.link("user", "a", "self", "a")
    with pytest.raises(NotFoundError):
        store.link("user", "a", "x", "zzz")
    assert store.link("user", "a", "x", "b")["created"] is True
    assert store.link("user", "a", "x", "b")["created"] is False
    store.unlink("user", "a", "x", "b")
    with pytest.raises(NotFoundError):
        store.unlink("user", "a", "x", "b")


def test_traverse_nodes_edges_direction_rel_and_archived(memory):
    store = memory.store
    for key in ("root", "child", "grandchild", "parent", "old"):
        memory.save(key, f"memory {key} text{key}")
    store.link("user", "root", "has", "child")
    store.link("user", "child", "has", "grandchild")
    store.link("user", "parent", "has", "root")
    store.link("user", "root", "mentions", "old")
    store.link("user", "child", "mentions", "root")
    memory.supersede("old", "old-v2", "memory old, revised")

    both = store.traverse("user", "root", 1)
    assert [n["key"] for n in both["nodes"]] == ["root", "child", "parent"]
    assert both["root"] == "memory:///user/root"
    assert {(e["from"].rsplit("/", 1)[1], e["rel"], e["to"].rsplit("/", 1)[1]) for e in both["edges"]} == {
        ("root", "has", "child"),
        ("parent", "has", "root"),
        ("child", "mentions", "root"),
    }

    out2 = store.traverse("user", "root", 2, direction="out")
    assert {(n["key"], n["depth"]) for n in out2["nodes"]} == {("root", 0), ("child", 1), ("grandchild", 2)}
    inbound = store.traverse("user", "root", 3, direction="in")
    assert {n["key"] for n in inbound["nodes"]} == {"root", "parent", "child"}
    only_has = store.traverse("user", "root", 5, rel="has")
    assert {n["key"] for n in only_has["nodes"]} == {"root", "child", "grandchild", "parent"}
    assert {e["rel"] for e in only_has["edges"]} == {"has"}
    with_archived = store.traverse("user", "root", 1, include_archived=True)
    assert "old" in {n["key"] for n in with_archived["nodes"]}
    assert store.traverse("user", "root", 0)["depth"] == 1
    with pytest.raises(UsageError):
        store.traverse("user", "root", 1, direction="sideways")
    uri = store.traverse("user", "child", 1)["nodes"][0]["uri"]
    assert uri == "memory:///user/child"


def test_uri_escapes_scope_and_key(memory):
    memory.save("a/b c", "slashes and spaces", scope="repo:x y")
    node = memory.store.traverse("repo:x y", "a/b c")["nodes"][0]
    assert node["uri"] == "memory:///repo%3Ax%20y/a%2Fb%20c"


def test_pin_verify_and_manual_supersede(memory):
    store = memory.store
    memory.save("fact", "the build uses python 3.11")
    assert store.get("user", "fact")["verified_at"] is None
    store.verify("user", "fact")
    assert store.get("user", "fact")["verified_at"] is not None
    store.set_pinned("user", "fact", True)
    result = memory.supersede("fact", "fact-2", "the build uses python 3.12", "build")
    assert result["pinned"] is True
    new, old = store.get("user", "fact-2"), store.get("user", "fact")
    assert new["pinned"] and new["verified_at"] and old["archived"] and not old["pinned"]
    assert new["links"]["out"] == [{"rel": "supersedes", "scope": "user", "key": "fact"}]
    with pytest.raises(ConflictError):
        memory.supersede("fact-2", "fact", "x")
    with pytest.raises(UsageError):
        memory.supersede("fact-2", "fact-2", "x")
    with pytest.raises(NotFoundError):
        memory.supersede("nope", "fresh", "x")
    with pytest.raises(NotFoundError):
        store.set_pinned("user", "nope", True)
    # saving an archived key brings it back
    memory.save("fact", "the build uses python 3.13")
    assert store.get("user", "fact")["archived"] is False


def test_pin_restores_archived(memory):
    memory.save("x", "some value here")
    memory.supersede("x", "y", "another value there")
    memory.store.set_pinned("user", "x", True)
    assert memory.store.get("user", "x")["archived"] is False


def test_failed_write_leaves_nothing(memory, monkeypatch):
    """A failure inside the save transaction rolls back the row and its index entry."""
    store = memory.store
    memory.save("a", "alpha text for the conflict scan")

    def broken(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr("deployments.memory.store.Store._archive_and_link", staticmethod(broken))
    with pytest.raises(StorageError):
        memory.save("b", "alpha text for the conflict scan")
    assert store.counts()["total"] == 1
    assert [r["key"] for r in memory.search("alpha")["results"]] == ["a"]
    assert store.fts_integrity()
