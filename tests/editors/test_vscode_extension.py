"""The VS Code extension (editors/vscode): `ci.sh` installs its npm dependencies from the
lock file, type-checks it (strict), builds it, checks its manifest, runs its unit tests
against this checkout's `mem` on temporary databases, and packages it into a `.vsix`.

Outside CI the test is skipped when node or npm is missing; under CI=true it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "editors" / "vscode"
MEM = Path(sys.executable).parent / "mem"

SETTINGS = {
    "memory-ext.binaryPath": ("string", "", None),
    "memory-ext.dbPath": ("string", "", None),
    "memory-ext.defaultScope": ("string", "user", ["user", "ask", "repo:current"]),
    "memory-ext.groupByScope": ("boolean", False, None),
    "memory-ext.sortBy": ("string", "updated", ["updated", "created", "key", "scope"]),
    "memory-ext.autoStartMCP": ("boolean", False, None),
}


def _toolchain() -> None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        reason = f"{' and '.join(missing)} not installed: the editor extension cannot be built"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def built() -> Path:
    _toolchain()
    assert MEM.is_file(), f"the project's mem console script is missing: {MEM}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM_")}
    env.update(MEM_BIN=str(MEM), PYTHONPATH=str(REPO))
    proc = subprocess.run(["bash", str(EXT / "ci.sh")], cwd=EXT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, f"ci.sh failed ({proc.returncode})\n{proc.stdout[-6000:]}\n{proc.stderr[-4000:]}"
    assert "# fail 0" in proc.stdout and "# pass " in proc.stdout, proc.stdout[-3000:]
    return EXT / "memory-ext.vsix"


def test_extension_builds_tests_and_packages(built: Path) -> None:
    with zipfile.ZipFile(built) as vsix:
        names = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
    assert {"extension/out/extension.js", "extension/out/runner.js", "extension/package.json"} <= names
    assert not any(n.startswith(("extension/src/", "extension/node_modules/", "extension/out/test/")) for n in names)
    props = manifest["contributes"]["configuration"]["properties"]
    assert set(props) == set(SETTINGS)
    for name, (kind, default, enum) in SETTINGS.items():
        assert (props[name]["type"], props[name]["default"], props[name].get("enum")) == (kind, default, enum), name
    assert manifest["contributes"]["mcpServerDefinitionProviders"][0]["id"] == "memory-ext.mem"


def test_npm_dependencies_come_from_the_committed_lock_file() -> None:
    lock = json.loads((EXT / "package-lock.json").read_text())
    package = json.loads((EXT / "package.json").read_text())
    root = lock["packages"][""]
    assert root["devDependencies"] == package["devDependencies"]
    assert not package.get("dependencies"), "the extension ships no runtime npm dependencies"
    ignored = (EXT / ".gitignore").read_text().split()
    assert {"node_modules/", "out/", "*.vsix"} <= set(ignored)
