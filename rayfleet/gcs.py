"""A head node that can restart: Ray's GCS fault tolerance over an external Redis.

Ray's Global Control Service keeps the cluster's metadata (nodes, named actors, Serve's
controller, placement groups) in memory, so by default its death ends the cluster. With
``RAYFLEET_GCS_REDIS`` set, ``rayfleet up`` starts the head with ``ray start`` and
``RAY_REDIS_ADDRESS``: the GCS writes its tables to that Redis under its own key namespace
(``RAYFLEET_GCS_NAMESPACE``, default ``rayfleet``; never a test's keys), and a restarted GCS
reads them back. Running tasks, actors, replicas and the direct listeners live on while
it is down (no new actors or workers start then).

Nothing restarts a dead GCS process by itself (on Kubernetes the pod restarts); here
:class:`GcsKeeper` does: it watches the head's ``gcs_server`` and, when it dies, starts it
again with the same command line and environment, under :mod:`rayfleet.supervisor`'s
backoff and start limit. The raylets wait ``RAY_gcs_rpc_server_reconnect_timeout_s``
(60 s by default) for it to come back.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast
from urllib.parse import parse_qs, unquote, urlsplit

from rayfleet.logs import get_logger, register_secret
from rayfleet.nodes import Node, start_node
from rayfleet.supervisor import RestartPolicy, Status, Supervised, SupervisorThread

log = get_logger("gcs")

REDIS_ENV = "RAYFLEET_GCS_REDIS"
NAMESPACE_ENV = "RAYFLEET_GCS_NAMESPACE"
DEFAULT_NAMESPACE = "rayfleet"
POLL_S = 0.2


@dataclass(frozen=True)
class GcsStorage:
    """Where the GCS keeps its tables: a Redis address, its password and a key namespace."""

    host: str
    port: int
    namespace: str = DEFAULT_NAMESPACE
    password: str = field(default="", repr=False)

    def env(self) -> dict[str, str]:
        """What the head's `ray start` (and so its GCS) needs in its environment."""
        return {"RAY_REDIS_ADDRESS": f"{self.host}:{self.port}", "RAY_external_storage_namespace": self.namespace}

    def start_args(self) -> list[str]:
        return ["--redis-password", self.password] if self.password else []

    def key_prefix(self) -> str:
        """Ray's Redis keys for this namespace start with this."""
        return f"RAY{self.namespace}@"


def parse_storage(url: str, namespace: str | None = None) -> GcsStorage:
    """``redis://[:password@]host:port[?namespace=name]`` (or ``host:port``) → :class:`GcsStorage`.

    Ray's GCS uses Redis database 0 and separates clusters by key namespace, so a database
    number other than 0 is refused rather than silently ignored.
    """
    if "://" not in url:
        url = "redis://" + url
    parts = urlsplit(url)
    if parts.scheme != "redis":
        raise ValueError(f"{REDIS_ENV} must be a redis:// URL or host:port (got a {parts.scheme!r} URL)")
    if not parts.hostname or parts.port is None:
        raise ValueError(f"{REDIS_ENV} needs a host and a port")
    if parts.path not in ("", "/", "/0"):
        raise ValueError(
            f"{REDIS_ENV}: Ray's GCS always uses Redis database 0; separate clusters with a namespace "
            f"(?namespace=... or {NAMESPACE_ENV}) instead of a database number"
        )
    query = parse_qs(parts.query)
    chosen = namespace or (query.get("namespace") or [DEFAULT_NAMESPACE])[0]
    if not chosen.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"{NAMESPACE_ENV} may hold letters, digits, '-' and '_' only")
    password = unquote(parts.password or "")
    if password:
        register_secret(password)
    return GcsStorage(parts.hostname, parts.port, chosen, password)


def storage_from_env() -> GcsStorage | None:
    """The GCS storage ``rayfleet up`` should use, or None (the GCS stays in memory)."""
    url = os.environ.get(REDIS_ENV, "").strip()
    if not url:
        return None
    return parse_storage(url, os.environ.get(NAMESPACE_ENV) or None)


def forget_namespace(storage: GcsStorage) -> int:
    """Delete every key of ``storage``'s namespace (a cluster that is gone for good); returns the count."""
    import redis

    client = redis.Redis(host=storage.host, port=storage.port, password=storage.password or None)
    try:
        keys = list(client.scan_iter(match=storage.key_prefix() + "*", count=500))
        return cast(int, client.delete(*keys)) if keys else 0
    finally:
        client.close()


@dataclass(frozen=True)
class Process:
    """A running process's command line and environment, read from /proc."""

    pid: int
    argv: list[str]
    env: dict[str, str]

    @classmethod
    def read(cls, pid: int) -> Process:
        proc = Path("/proc") / str(pid)
        argv = [a.decode() for a in (proc / "cmdline").read_bytes().split(b"\0") if a]
        env = dict(
            entry.decode(errors="replace").partition("=")[::2]
            for entry in (proc / "environ").read_bytes().split(b"\0")
            if b"=" in entry
        )
        return cls(pid, argv, env)


def find_gcs(marker: str) -> int | None:
    """The pid of the ``gcs_server`` whose command line names ``marker`` (the head's temp dir)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"/gcs_server") and marker.encode() in b" ".join(argv):
            return int(entry.name)
    return None


class _Adopted:
    """A process this one did not start (the first gcs_server, a child of `ray start`): its exit
    is noticed by polling, and its exit code is not known (reported as -1)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    async def wait(self) -> int:
        while self.returncode is None:
            try:
                os.kill(self.pid, 0)
                with open(f"/proc/{self.pid}/stat", "rb") as stat:
                    if stat.read().split(b") ", 1)[1][:1] == b"Z":
                        self.returncode = -1
            except (ProcessLookupError, FileNotFoundError):
                self.returncode = -1
            if self.returncode is None:
                await asyncio.sleep(POLL_S)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        os.kill(self.pid, sig)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, 9)


class GcsKeeper:
    """Keeps a head node's GCS running: restarts it, with the same arguments, when it dies."""

    def __init__(self, head_marker: str, policy: RestartPolicy | None = None) -> None:
        self.marker = head_marker
        pid = find_gcs(head_marker)
        if pid is None:
            raise RuntimeError("no gcs_server runs for this head node")
        self.process = Process.read(pid)
        self._first: _Adopted | None = _Adopted(pid)
        self.supervised = Supervised(
            "gcs_server",
            self._spawn,
            policy=policy or RestartPolicy(initial_backoff=0.2, max_backoff=10.0, burst=5, window=300.0),
        )
        self._thread: SupervisorThread | None = None

    async def _spawn(self) -> _Adopted | asyncio.subprocess.Process:
        if self._first is not None:
            first, self._first = self._first, None
            return first
        return await asyncio.create_subprocess_exec(
            *self.process.argv,
            env=self.process.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )

    def start(self) -> None:
        self._thread = SupervisorThread("gcs-keeper")
        self._thread.start(self.supervised)

    def stop(self) -> None:
        """Stop watching (the GCS itself is stopped with its node)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        with contextlib.suppress(Exception):
            thread.run(self.supervised.detach(), timeout=10)
        thread.children.clear()
        thread.close()

    def status(self) -> Status:
        return self.supervised.status()


@dataclass
class FaultTolerantHead:
    """A head node started with ``ray start`` over Redis-backed GCS storage, and its keeper."""

    storage: GcsStorage
    node: Node
    address: str
    keeper: GcsKeeper

    @classmethod
    def start(cls, storage: GcsStorage, env: dict[str, str]) -> FaultTolerantHead:
        """Start the head (loopback, free ports, this machine's cores, a folder of its own under the
        temp dir: Ray's socket paths may not exceed 107 bytes) and begin keeping its GCS."""
        root = Path(tempfile.mkdtemp(prefix="rayfleet-head-"))
        node, address = start_node(
            "head",
            root,
            num_cpus=os.cpu_count() or 1,
            env={**env, **storage.env()},
            extra_args=storage.start_args(),
        )
        try:
            keeper = GcsKeeper(str(node.temp_dir))
            keeper.start()
        except Exception:
            node.kill()
            shutil.rmtree(root, ignore_errors=True)
            raise
        log.info("head node with GCS fault tolerance", extra={"address": address, "namespace": storage.namespace})
        return cls(storage, node, address, keeper)

    def status(self) -> dict[str, object]:
        """For the state file and ``rayfleet status --json``."""
        return {
            "fault_tolerant": True,
            "redis": f"{self.storage.host}:{self.storage.port}",
            "namespace": self.storage.namespace,
            "address": self.address,
            "folder": str(self.node.temp_dir),
            "gcs": dict(self.keeper.status()),
        }

    def stop(self, forget: bool = False) -> None:
        """Stop keeping the GCS, then end the whole head node. Its tables stay in Redis (a new head
        with the same namespace takes the cluster over) unless ``forget``: `rayfleet down` ends the
        cluster for good, and a later head must not resurrect its actors."""
        self.keeper.stop()
        self.node.kill()
        shutil.rmtree(self.node.temp_dir.parent, ignore_errors=True)  # the folder start() made
        if forget:
            try:
                forget_namespace(self.storage)
            except Exception as exc:  # Redis gone: the keys stay, the next `up` reuses the namespace
                log.warning("could not forget the GCS tables", extra={"error": type(exc).__name__})
