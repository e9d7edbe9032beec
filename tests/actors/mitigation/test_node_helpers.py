"""The node module's pure helpers: blacklist keys and the sweep of folders left by killed nodes."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

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


def test_folders_of_dead_owners_are_swept_and_live_ones_kept():
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
    (gone / "owner.pid").write_text(str(dead.pid))
    alive = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
    (alive / "owner.pid").write_text(str(os.getpid()))
    unowned = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))  # no owner file yet: a node starting up
    try:
        sweep_stale_folders()
        assert not gone.exists()
        assert alive.exists() and unowned.exists()
    finally:
        for folder in (alive, unowned):
            (folder / "owner.pid").unlink(missing_ok=True)
            folder.rmdir()
