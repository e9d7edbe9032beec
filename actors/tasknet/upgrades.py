"""Signed, content-addressed upgrade packages: propose, test in a sandbox, apply after ratification, roll back.

A package is a zip of Python files (at most `max_package_bytes`) carried inside the
signed `proposal_create` event, so its author's signature covers it and its SHA-256 is
its name in the store. Testing: every file compiles, imports stay within an allow-list,
and the package's own `test_*.py` run with unittest in a subprocess under CPU, memory,
file-size and process limits with an empty environment. An upgrade is applied only once
its proposal is ratified through Raft, and only when its tests passed on this node: it is
installed as the node's active package version (files on disk; the running node does not
import it). Rollback restores the version that was active before.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import binascii
import hashlib
import io
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from actors.tasknet.ledger import Reject
from actors.tasknet.node import NodeCore
from actors.tasknet.records import Proposal
from actors.tasknet.rules_governance import proposal as find_proposal
from actors.tasknet.settings import DEFAULT_IMPORTS, UpgradeParams


class SecurityReport(TypedDict):
    syntax_errors: list[str]
    violations: list[str]


class TestRun(TypedDict):
    """This node's test run of an upgrade proposal (testing, tested, test_failed, applied)."""

    status: str
    progress: int
    version: str
    results: NotRequired[dict[str, Any]]


class UpgradeRecord(TypedDict):
    """One line of the node's upgrade history (`applied` ones name the installed version and the previous)."""

    proposal_id: str
    version: str
    applied_at: float
    status: str
    path: NotRequired[str]
    previous: NotRequired[str | None]


def _limits(cpu_s: int, memory_mb: int, uid: int) -> Callable[[], None]:
    """In the child before bwrap runs: rlimits, a new session, and (when root) an unprivileged uid."""

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
        resource.setrlimit(resource.RLIMIT_NPROC, (64, 64))
        os.setsid()
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)

    return apply


def sandbox_command(package_dir: Path, python: str, argv: list[str]) -> list[str]:
    """`python argv` under bubblewrap: only /usr read-only, the package read-only at /pkg, a tmpfs
    workspace at /work (the cwd) and /tmp, fresh namespaces (no network, no other process),
    an empty environment; bwrap run by an unprivileged user sets no-new-privileges."""
    return [
        *("bwrap", "--ro-bind", "/usr", "/usr"),
        *("--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin"),
        *("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"),
        *("--ro-bind", str(package_dir), "/pkg", "--tmpfs", "/work", "--chdir", "/work"),
        *("--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"),
        *("--clearenv", "--setenv", "PATH", "/usr/bin", "--setenv", "HOME", "/work"),
        python,
        *argv,
    ]


def run_sandboxed(package_dir: Path, settings: UpgradeParams, timeout: float) -> tuple[bool, str]:
    """Run the package's own `test_*.py` with unittest inside the sandbox: (passed, output tail)."""
    if shutil.which("bwrap") is None:
        return False, "bubblewrap (bwrap) is not installed: upgrade tests never run outside the sandbox"
    package_dir.chmod(0o755)  # the unprivileged sandbox user reads the unpacked files, nothing else
    python = str(settings.get("python", "/usr/bin/python3"))
    argv = ["-I", "-m", "unittest", "discover", "-s", "/pkg", "-t", "/pkg", "-p", "test_*.py"]
    limits = _limits(int(timeout), int(settings.get("memory_mb", 512)), int(settings.get("sandbox_uid", 65534)))
    try:
        proc = subprocess.run(
            sandbox_command(package_dir, python, argv),
            env={"PATH": "/usr/bin:/bin"},
            capture_output=True,
            timeout=timeout,
            preexec_fn=limits,
        )
    except subprocess.TimeoutExpired:
        return False, "tests timed out"
    return proc.returncode == 0, (proc.stdout + proc.stderr).decode(errors="replace")[-2000:]


# what zipfile raises on a damaged or exotic archive: bad CRC or headers, truncated or
# corrupt deflate data, an unsupported compression method, an encrypted member
BROKEN_ZIP = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError, OSError)


def unpack(package: bytes, into: Path, max_files: int = 64, max_unpacked: int = 1 << 20) -> list[Path]:
    """Extract a zip safely: Python files only, no absolute or parent paths, bounded size."""
    try:
        return _unpack(zipfile.ZipFile(io.BytesIO(package)), into, max_files, max_unpacked)
    except BROKEN_ZIP as exc:
        raise Reject(f"package is not a readable zip archive ({type(exc).__name__}: {exc})"[:300]) from exc


def _unpack(archive: zipfile.ZipFile, into: Path, max_files: int, max_unpacked: int) -> list[Path]:
    infos = [i for i in archive.infolist() if not i.is_dir()]
    if len(infos) > max_files or sum(i.file_size for i in infos) > max_unpacked:
        raise Reject("package has too many files or unpacks too large")
    out = []
    for info in infos:
        name = Path(info.filename)
        if name.is_absolute() or ".." in name.parts or name.suffix != ".py":
            raise Reject(f"package entry {info.filename!r} is not a relative .py path")
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        data = archive.read(info)
        if len(data) != info.file_size:
            raise zipfile.BadZipFile(f"{info.filename} unpacks to another size than declared")
        target.write_bytes(data)
        out.append(target)
    return out


def security_check(files: list[Path], root: Path, allowed: set[str]) -> SecurityReport:
    local = {p.stem for p in files}
    violations: list[str] = []
    syntax_errors: list[str] = []
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError) as exc:
            syntax_errors.append(f"{path.relative_to(root)}: {exc}")
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("eval", "exec", "__import__", "compile", "open")
            ):
                violations.append(f"{path.relative_to(root)}: call to {node.func.id}()")
            violations.extend(
                f"{path.relative_to(root)}: import {n}" for n in names if n not in allowed and n not in local
            )
    return {"syntax_errors": syntax_errors, "violations": violations}


class Upgrades:
    def __init__(self, core: NodeCore, settings: UpgradeParams) -> None:
        self.core = core
        self.settings = settings
        self.root = (core.data_dir or Path(tempfile.mkdtemp(prefix="tasknet-up-"))) / "upgrades"
        self.root.mkdir(parents=True, exist_ok=True)
        self.ledger_path = self.root / "ledger.json"
        saved = json.loads(self.ledger_path.read_text()) if self.ledger_path.exists() else {}
        self.tests: dict[str, TestRun] = saved.get("tests", {})
        self.history: list[UpgradeRecord] = saved.get("history", [])
        self.current: str | None = saved.get("current")
        self._lock = asyncio.Lock()

    def _save(self) -> None:
        tmp = self.ledger_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"tests": self.tests, "history": self.history, "current": self.current}))
        tmp.replace(self.ledger_path)

    def store(self, package: bytes) -> str:
        digest = hashlib.sha256(package).hexdigest()
        path = self.root / "packages" / f"{digest}.zip"
        path.parent.mkdir(exist_ok=True)
        if not path.exists():
            path.write_bytes(package)
        return digest

    def package_params(self, version: str, package_b64: str, claimed_hash: str | None) -> dict[str, Any]:
        limit = int(self.settings.get("max_package_bytes", 32_768))
        if len(package_b64) > limit * 4 // 3 + 4:
            raise Reject(f"package larger than {limit} bytes")
        try:
            package = base64.b64decode(package_b64, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise Reject("package_b64 is not base64") from exc
        with tempfile.TemporaryDirectory(prefix="tasknet-check-") as tmp:
            unpack(package, Path(tmp))  # a broken archive is refused here, before anyone votes on it
        digest = self.store(package)
        if claimed_hash is not None and claimed_hash != digest:
            raise Reject("package_hash does not match the package's sha256")
        return {"version": version, "package_hash": digest, "package_size": len(package), "package_b64": package_b64}

    async def propose(
        self, version: str, package_b64: str, package_hash: str | None, title: str, description: str
    ) -> dict[str, Any]:
        params = self.package_params(version, package_b64, package_hash)
        _, result = self.core.submit(
            "proposal_create",
            {
                "title": title or f"upgrade to {version}",
                "description": description,
                "proposal_type": "code_upgrade",
                "params": params,
                "tags": ["upgrade"],
            },
        )
        return {
            "message": "upgrade proposed",
            "proposal_id": result["id"],
            "version": version,
            "package_hash": params["package_hash"],
            "next_steps": ["POST /upgrades/{id}/test", "vote", "close", "POST /governance/ratify/{id} (validators)"],
        }

    def _package_of(self, prop: Proposal) -> bytes:
        params = prop["params"]
        try:
            package = base64.b64decode(params["package_b64"], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise Reject("package_b64 is not base64") from exc
        if hashlib.sha256(package).hexdigest() != params["package_hash"]:
            raise Reject("package content does not match its hash")
        self.store(package)
        return package

    def _upgrade(self, proposal_id: str) -> Proposal:
        prop = find_proposal(self.core.state, {"proposal_id": proposal_id})
        if prop["proposal_type"] != "code_upgrade":
            raise Reject("not an upgrade proposal")
        return prop

    def _run_tests(self, package: bytes) -> dict[str, Any]:
        allowed = set(self.settings.get("allowed_imports", DEFAULT_IMPORTS))
        with tempfile.TemporaryDirectory(prefix="tasknet-test-") as tmp:
            root = Path(tmp)
            files = unpack(package, root)
            checks = security_check(files, root, allowed)
            result: dict[str, Any] = {
                "syntax_valid": not checks["syntax_errors"],
                "security_checks": {"passed": not checks["violations"], "violations": checks["violations"]},
                "performance_impact": {"tests_run": False},
            }
            if checks["syntax_errors"]:
                result["syntax_errors"] = checks["syntax_errors"]
            if checks["syntax_errors"] or checks["violations"]:
                return result
            timeout = float(self.settings.get("test_timeout_s", 20))
            started = time.perf_counter()
            passed, output = run_sandboxed(root, self.settings, timeout)
            result["performance_impact"] = {
                "tests_run": True,
                "tests_passed": passed,
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                "output_tail": output,
            }
            return result

    async def test(self, proposal_id: str) -> dict[str, Any]:
        prop = self._upgrade(proposal_id)
        version = prop["params"]["version"]
        self.tests[proposal_id] = {"status": "testing", "progress": 10, "version": version}
        try:
            results = await asyncio.to_thread(self._run_tests, self._package_of(prop))
        except Reject as exc:  # a package that cannot be read fails its test, it does not stay "testing"
            self.tests[proposal_id] = {
                "status": "test_failed",
                "progress": 0,
                "version": version,
                "results": {"error": exc.message},
            }
            self._save()
            raise
        ok = (
            results["syntax_valid"]
            and results["security_checks"]["passed"]
            and results["performance_impact"].get("tests_passed")
        )
        self.tests[proposal_id] = {
            "status": "tested" if ok else "test_failed",
            "progress": 100 if ok else 0,
            "version": prop["params"]["version"],
            "results": results,
        }
        self._save()
        return {"message": "tests passed" if ok else "tests failed", "test_results": results}

    async def install_ratified(self) -> int:
        """Install every ratified upgrade this node has not handled yet (each node, from its own fold,
        after its own sandboxed test run); how many it handled."""
        ratified = [
            prop
            for chan in self.core.state["channels"].values()
            for prop in chan["proposals"].values()
            if prop["proposal_type"] == "code_upgrade" and prop["status"] == "ratified"
        ]
        done = {h["proposal_id"] for h in self.history}
        handled = 0
        for prop in sorted(ratified, key=lambda p: p.get("ratified_at", 0)):
            if prop["id"] not in done:
                await self.apply_ratified(prop)
                handled += 1
        return handled

    async def apply_ratified(self, prop: Proposal) -> UpgradeRecord | None:
        """Install a ratified upgrade once (tests are run first when this node has not run them)."""
        async with self._lock:
            return await self._apply_ratified(prop)

    async def _apply_ratified(self, prop: Proposal) -> UpgradeRecord | None:
        pid = prop["id"]
        if any(h["proposal_id"] == pid for h in self.history):
            return None
        run = self.tests.get(pid)
        if run is None or run["status"] != "tested":
            try:
                await self.test(pid)
            except Reject:  # recorded as test_failed: the upgrade is not installed here
                pass
        if self.tests[pid]["status"] != "tested":
            self.history.append(
                {
                    "proposal_id": pid,
                    "version": prop["params"]["version"],
                    "applied_at": time.time(),
                    "status": "rejected_by_tests",
                }
            )
            self._save()
            return None
        package = self._package_of(prop)
        target = self.root / "versions" / f"{prop['params']['version']}-{prop['params']['package_hash'][:12]}"
        if not target.exists():
            target.mkdir(parents=True)
            unpack(package, target)
        entry: UpgradeRecord = {
            "proposal_id": pid,
            "version": prop["params"]["version"],
            "applied_at": time.time(),
            "status": "applied",
            "path": target.name,
            "previous": self.current,
        }
        self.history.append(entry)
        self.current = target.name
        self.tests[pid]["status"] = "applied"
        self._save()
        return entry

    async def status(self) -> dict[str, Any]:
        active = []
        for chan in self.core.state["channels"].values():
            for prop in chan["proposals"].values():
                if prop["proposal_type"] != "code_upgrade":
                    continue
                local = self.tests.get(prop["id"])
                active.append(
                    {
                        "proposal_id": prop["id"],
                        "version": prop["params"]["version"],
                        "status": local["status"] if local else prop["status"],
                        "proposal_status": prop["status"],
                        "progress": local["progress"] if local else 0,
                    }
                )
        return {"active_upgrades": active, "current_version": self.current}

    async def history_view(self) -> dict[str, Any]:
        return {
            "upgrades": [
                {
                    "version": h["version"],
                    "applied_at": h["applied_at"],
                    "status": h["status"],
                    "proposal_id": h["proposal_id"],
                }
                for h in self.history
            ]
        }

    async def rollback(self, proposal_id: str) -> dict[str, Any]:
        entry = next(
            (h for h in reversed(self.history) if h["proposal_id"] == proposal_id and h["status"] == "applied"), None
        )
        if entry is None:
            raise Reject("that upgrade is not applied on this node", 404)
        if self.current != entry["path"]:
            raise Reject("only the active upgrade can be rolled back")
        previous = entry["previous"]
        if previous is not None and not (self.root / "versions" / previous).exists():
            raise Reject("the previous version is missing from the store", 500)
        entry["status"] = "rolled_back"
        self.current = previous
        self._save()
        return {"message": f"rolled back {entry['version']}", "restored_version": previous or "base"}

    def remove_all(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
