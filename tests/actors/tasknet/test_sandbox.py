"""Upgrade tests run under bubblewrap as an unprivileged user: no network, nothing of the host but
/usr (read-only), a tmpfs workspace. Each package below is a test suite that tries one escape a
reviewer would try and fails loudly if it gets through; the host checks that nothing leaked."""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
from pathlib import Path

import pytest

from actors.tasknet.upgrades import run_sandboxed

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (make system-deps)")
SECRET = "sk-fleet-secret-" + "q" * 24


@pytest.fixture()
def host():
    """A host directory any user could write to and a secret any user could read: only the
    sandbox's mounts keep a package from them."""
    base = Path(tempfile.mkdtemp(prefix="tn-escape-", dir="/tmp"))
    base.chmod(0o777)
    (base / "secrets.env").write_text(f"TOKEN={SECRET}\n")
    (base / "secrets.env").chmod(0o644)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _run(tmp_path: Path, test_body: str) -> tuple[bool, str]:
    pkg = Path(tempfile.mkdtemp(prefix="tn-pkg-", dir="/tmp"))
    try:
        (pkg / "test_escape.py").write_text(
            "import unittest\n\n\nclass Escape(unittest.TestCase):\n    def test_escape(self):\n"
            + "".join(f"        {line}\n" for line in test_body.strip().splitlines())
        )
        (pkg / "test_escape.py").chmod(0o644)
        return run_sandboxed(pkg, {}, timeout=20)
    finally:
        shutil.rmtree(pkg, ignore_errors=True)


def _attempts(host: Path, how: str) -> str:
    """Read the secret and write outside the workspace through `how` (an expression giving `open`)."""
    return f"""
opener = {how}
leaked = []
for path in ({str(host / "secrets.env")!r}, "/etc/shadow"):
    try:
        leaked.append(opener(path).read())
    except OSError:
        pass
wrote = []
for path in ({str(host / "escaped")!r}, "/usr/escaped", "/pkg/escaped"):
    try:
        opener(path, "w").write("x")
        wrote.append(path)
    except OSError:
        pass
print("LEAKED" + repr(leaked), "WROTE" + repr(wrote))
self.assertEqual((leaked, wrote), ([], []))
"""


@pytest.mark.parametrize(
    "how",
    [
        "__builtins__['open'] if isinstance(__builtins__, dict) else __builtins__.open",
        "__import__('importlib').import_module('io').open",
        "(lambda os: lambda p, m='r': os.fdopen(os.open(p, os.O_RDONLY if m == 'r' else os.O_WRONLY | os.O_CREAT), m))"
        "(__import__('unittest.mock').mock.sys.modules['os'])",
    ],
    ids=["builtins", "importlib", "os-through-another-module"],
)
def test_files_outside_the_workspace_stay_out_of_reach(tmp_path, host, how):
    passed, output = _run(tmp_path, _attempts(host, how))
    assert passed, output
    assert SECRET not in output
    assert not (host / "escaped").exists()


def test_ctypes_system_calls_cannot_write_outside(tmp_path, host):
    body = f"""
import ctypes
libc = ctypes.CDLL(None)
fd = libc.open({str(host / "escaped").encode()!r}, 0o101, 0o644)
self.assertEqual(fd, -1)
libc.system(b"touch {host / "escaped-system"}")  # the host path does not exist in here
"""
    passed, output = _run(tmp_path, body)
    assert passed, output
    assert not (host / "escaped").exists() and not (host / "escaped-system").exists()


def test_there_is_no_network(tmp_path):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted: list = []
    server.settimeout(15)
    threading.Thread(target=lambda: accepted.append(_accept(server)), daemon=True).start()
    body = f"""
import socket
with self.assertRaises(OSError):
    socket.create_connection(("127.0.0.1", {port}), timeout=2)
"""
    passed, output = _run(tmp_path, body)
    server.close()
    assert passed, output
    assert accepted in ([], [None])


def _accept(server: socket.socket) -> object:
    try:
        return server.accept()
    except OSError:
        return None


def test_tests_run_as_an_unprivileged_user_in_a_fresh_process_tree(tmp_path):
    body = """
import os
self.assertNotEqual(os.getuid(), 0)
self.assertEqual(sorted(os.listdir("/")), ["bin", "dev", "lib", "lib64", "pkg", "proc", "tmp", "usr", "work"])
self.assertEqual(os.getcwd(), "/work")
self.assertLess(len([p for p in os.listdir("/proc") if p.isdigit()]), 5)
self.assertEqual(dict(os.environ).get("RAYFLEET_HOME"), None)
"""
    passed, output = _run(tmp_path, body)
    assert passed, output


def test_a_good_package_passes_in_the_sandbox(tmp_path):
    passed, output = _run(tmp_path, "self.assertEqual(sum([1, 2]), 3)")
    assert passed and "OK" in output, output
