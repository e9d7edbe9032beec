"""The node module's pure helpers: blacklist keys and the sweep of folders left by killed nodes."""

from __future__ import annotations

import os
import subprocess

import pytest

from actors.mitigation import node as node_module
from actors.mitigation.node import FOLDER_PREFIX, NodeError, source_key, sweep_stale_folders


@pytest.mark.parametrize(
    "given,key",
    [
        ("127.0.0.1", "127.0.0.1"),
        (" 10.1.2.3 ", "10.1.2.3"),
        ("10.1.2.3/32", "10.1.2.3"),
        ("10.1.2.3/8", "10.0.0.0/8"),
        ("2001:db8::1", "2001:db8::1"),
        ("2001:db8::/32", "2001:db8::/32"),
    ],
)
def test_a_source_is_keyed_by_its_address_or_its_network(given, key):
    assert source_key(given) == key


def test_anything_else_is_a_422():
    with pytest.raises(NodeError) as caught:
        source_key("evil.example")
    assert caught.value.status == 422 and "not an IP address" in caught.value.message


def test_folders_of_dead_owners_are_swept_and_live_ones_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(node_module.tempfile, "gettempdir", lambda: str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone, alive, unowned = (tmp_path / f"{FOLDER_PREFIX}{n}" for n in ("gone", "alive", "unowned"))
    for folder in (gone, alive, unowned):
        folder.mkdir()
    (gone / "owner.pid").write_text(str(dead.pid))
    (alive / "owner.pid").write_text(str(os.getpid()))
    # no owner file yet (a node starting up), and a folder that is not a node's: both left alone
    other = tmp_path / "not-a-node"
    other.mkdir()
    (other / "owner.pid").write_text(str(dead.pid))
    sweep_stale_folders()
    assert not gone.exists()
    assert alive.exists() and unowned.exists() and other.exists()
