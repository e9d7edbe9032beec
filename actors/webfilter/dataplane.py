"""Squid and dnsmasq processes on loopback: started, reconfigured and stopped by their owner.

Layout of the state folder: ``acl/`` (ACL files), ``errors/`` (Squid's templates plus the
policy pages), ``logs/`` (access.log, cache.log), ``run/`` (pid files), ``dns/``
(dnsmasq.conf, hosts), ``tls/`` and ``ssl_db/`` (TLS interception, see tlsfiles). Squid
drops to its own user when started as root, so ``logs/``, ``run/`` and the TLS folders belong
to that user. dnsmasq has no upstream (`no-resolv`): it answers the configured test names and
the sinkholed blacklist, nothing leaves the machine.

Both processes are supervised (`rayfleet.supervisor`, on a `SupervisorThread`, since the owning
actor is synchronous): killed, or failing their probe (a TCP connect to Squid's port, to dnsmasq's
port 53), each is restarted with backoff on the same port and address, and the current policy is
re-applied to it. ``run/listen.json`` keeps the port and address for the next owner of the folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import dataclasses
import errno
import functools
import hashlib
import ipaddress
import json
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from actors.webfilter import dotforward, groupdns, grouprules, squidconf, tlsfiles
from actors.webfilter.crstier import CrsHits, tier_config
from actors.webfilter.logpolicy import shift_rotated
from rayfleet.crs.config import CrsPaths
from rayfleet.crs.process import CrsError, CrsTier
from rayfleet.logs import get_logger
from rayfleet.supervisor import RestartPolicy, Status, Supervised, SupervisorThread

log = get_logger("webfilter.dataplane")
# Squid starts in well under a second: the first restart comes 0.2 s after a death, so a killed Squid
# serves again within about a second; ten deaths in a minute give up (state `failed`) rather than spin
RESTART_POLICY = RestartPolicy(initial_backoff=0.2, max_backoff=5.0, burst=10, window=60.0, probe_interval=2.0)

TEMPLATES = Path("/usr/share/squid/errors/templates")
SINKHOLE = "dnsmasq-sinkhole"  # the supervised child answering every name 0.0.0.0/:: (the delta's target)
RECONFIGURE_TIMEOUT = 30  # seconds Squid may take to listen again after SIGHUP


@dataclass(frozen=True)
class ProxySettings:
    """How to run the data plane (the `proxy` section of the component's config)."""

    squid_bin: str = "/usr/sbin/squid"
    dnsmasq_bin: str = "/usr/sbin/dnsmasq"
    port: int = 0
    cache_mem_mb: int = 32
    hosts: dict[str, str] = field(default_factory=dict)
    user: str = "proxy"
    log_rotate_keep: int = 3  # rotated copies kept of Squid's access log and dnsmasq's query log
    certgen_bin: str = "/usr/lib/squid/security_file_certgen"
    tls_outgoing_cafile: str = ""  # extra CA file Squid verifies origins with (besides the system CAs)
    ca_cert: str = ""  # the interception CA (copied into tls/ while ssl_bump is on)
    ca_key: str = ""
    nft_bin: str = "/usr/sbin/nft"  # per-group DNS steering (groupdns)
    unbound_bin: str = "/usr/sbin/unbound"  # the DNS-over-TLS forwarder (dotforward), for tls:// upstreams
    unbound_checkconf_bin: str = "/usr/sbin/unbound-checkconf"


class ViewStatus(TypedDict):
    """A client group's own dnsmasq (`groupdns`): the port steered queries reach it on; `outside`: the view
    for the time outside the group's windows."""

    group: str
    outside: bool
    port: int
    running: bool
    pid: int | None


class PlaneStatus(TypedDict):
    """What `DataPlane.status()` reports (also the answer of the proxy actor's start, restart, reconfigure)."""

    running: bool
    proxy: str | None  # 127.0.0.1:<port> once started
    port: int
    dns: str  # dnsmasq's loopback address
    dns_running: bool
    squid_pid: int | None
    started_at: float
    access_log: str
    dns_log: str  # dnsmasq's query log (log-queries=extra), tailed into the log store
    dns_dot: dict[str, Any] | None  # the DNS-over-TLS upstreams and their forwarder (`dot_status`)
    dns_sinkhole: str | None  # where dnsmasq forwards the names blocked since its last start (`addr#port`)
    last_apply: dict[str, Any]  # timings of the last apply (empty before the first one)
    ssl_bump: bool  # Squid runs a bumping configuration now
    ssl_bump_ca_sha256: str | None
    children: list[Status]  # the supervised Squid and dnsmasq: state, restarts, last exit
    dns_views: list[ViewStatus]  # the client groups' own dnsmasq, steered to by the nft table
    nft_table: str | None  # `inet <name>` while it is in place


_PR_SET_PDEATHSIG = 1


class DataPlaneError(RuntimeError):
    """Squid or dnsmasq could not be started or refused a configuration."""


def _die_with_parent() -> None:
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def free_tcp_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_dns_address() -> str:
    """A 127.x address whose UDP and TCP port 53 are free (Squid's resolver only speaks port 53)."""
    for _ in range(50):
        addr = f"127.53.{random.randint(1, 254)}.{random.randint(1, 254)}"
        if _dns_free(addr):
            return addr
    raise DataPlaneError("no free loopback address for dnsmasq on port 53")


def _write_atomic(path: Path, text: str) -> bool:
    """Replace `path` with `text` via a temporary file; False when the content is unchanged."""
    if path.exists() and path.read_text() == text:
        return False
    _replace(path, text)
    return True


def _replace(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.3)
        return sock.connect_ex((host, port)) == 0


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _dns_port_free(addr: str, port: int) -> bool:
    """Are UDP and TCP `port` free on `addr`?"""
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as udp, socket.socket(family) as tcp:
            udp.bind((addr, port))
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            tcp.bind((addr, port))
    except OSError:
        return False
    return True


def _dns_free(addr: str) -> bool:
    return _dns_port_free(addr, 53)


class DataPlane:
    """One Squid and one dnsmasq for a state folder, each a child of `rayfleet.supervisor`: killed or
    unhealthy, it is restarted (with backoff) on the same address and port, and the current policy is
    re-applied to the new process. Calls come from the owning actor's thread; the supervisors run on
    their own thread (`SupervisorThread`); `_lock` keeps their renders and signals from interleaving."""

    def __init__(self, root: Path, config: ProxySettings, policy: RestartPolicy | None = None) -> None:
        self.config = config
        self.user = config.user if os.geteuid() == 0 else None
        self.fallback = False
        self.conf_changed = False
        self.watchdog: subprocess.Popen[bytes] | None = None
        self.root = self._reachable(Path(root))
        self.port = 0
        self.dns = ""
        self.restart_policy = policy or RESTART_POLICY
        self.supervisor: SupervisorThread | None = None
        self.policy: squidconf.Policy | None = None  # the policy last applied: what a restarted child gets
        self.started_at = 0.0
        self.last_apply: dict[str, Any] = {}
        self.hosts_changed = False
        self.dns_conf_changed = False
        self.squid_changed = False
        self.tls: squidconf.TlsFiles | None = None
        self.bumping = False  # the configuration Squid runs has ssl-bump
        self._lock = threading.RLock()
        # what the files on disk were last rendered from (the entries, in the policy's order)
        self._acl_entries: dict[str, list[str]] = {}
        self._sinkhole: list[str] | None = None
        self._blocklist: str | None = None  # the DNS blocklist last rendered
        # base + delta: the policy dnsmasq's blocklist.conf was rendered from (read at its last start), that
        # blacklist's rules, and the names blocked since, in its servers-file (delta.conf, read on SIGHUP)
        self._dns_base: squidconf.Policy | None = None
        self._base_rules: set[str] = set()
        self.delta: list[str] = []
        self.delta_changed = False
        self.sinkhole_port = 0  # the sinkhole dnsmasq's port on 127.0.0.1 (kept in run/listen.json)
        self.dot_port = 0  # the DNS-over-TLS forwarder's port on 127.0.0.1 (kept in run/listen.json)
        self.dot_changed = False  # its configuration changed in the candidate being applied
        self._dot_taken = False  # during an apply: the forwarder was (being) started, restarted or stopped
        self._pages: set[str] = set()
        self._undo: dict[Path, str | None] = {}  # what the files of the candidate being applied held before
        self.crs: CrsTier | None = None  # the CRS inspection tier, while the WAF engine is `crs`
        self.crs_port = 0
        self.crs_hits = CrsHits(self.root / "crs")
        self._dns_taken = False  # during an apply: dnsmasq was (being) restarted on the candidate
        self.nft = groupdns.NftTable(groupdns.table_name(str(self.root)), config.nft_bin)
        self._views: dict[str, groupdns.View] = {}  # the client groups' DNS views running, in the groups' order
        self._view_ports: dict[str, int] = {}  # group -> its view's port (kept in run/listen.json)
        self._view_blocklists: dict[str, str] = {}  # group -> the blocklist last rendered for its view
        # base + delta per view, as for the main dnsmasq: the policy its blocklist was rendered from and its rules
        self._view_bases: dict[str, tuple[squidconf.Policy, set[str]]] = {}
        self.view_pids: dict[int, str] = {}  # dnsmasq pid -> group, for the query log (the latest 512)

    def _reachable(self, root: Path) -> Path:
        """`root`, or a private folder under the system temporary folder when Squid's own user could not
        traverse the way to `root` (e.g. a 0700 home or pytest folder)."""
        root.mkdir(parents=True, exist_ok=True)
        if not self.user or all(os.stat(f).st_mode & 0o001 for f in [root, *root.parents]):
            return root
        base = Path(tempfile.gettempdir()) / "rayfleet-webfilter"
        base.mkdir(mode=0o711, exist_ok=True)
        os.chmod(base, 0o711)
        # named after `root`, so the next owner of `root` (a restarted actor) finds the same folder
        folder = base / f"{root.parent.name}-{hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]}"
        folder.mkdir(mode=0o711, exist_ok=True)
        os.chmod(folder, 0o711)
        self.fallback = True
        (root / "MOVED").write_text(f"Squid's state lives in {folder} ({root} is not reachable by {self.user})\n")
        return folder

    @property
    def conf_path(self) -> Path:
        return self.root / "squid.conf"

    @property
    def access_log(self) -> Path:
        return self.root / "logs" / "access.log"

    @property
    def dns_log(self) -> Path:
        return self.root / "logs" / "dns-queries.log"

    def _child(self, name: str) -> Any:
        """The running process of the supervised child `name` (an asyncio Process), or None."""
        child = self.supervisor.children.get(name) if self.supervisor else None
        process = child.child if child is not None else None
        return process if process is not None and process.returncode is None else None

    @property
    def squid(self) -> Any:
        return self._child("squid")

    @property
    def dnsmasq(self) -> Any:
        return self._child("dnsmasq")

    @property
    def sinkhole(self) -> Any:
        return self._child(SINKHOLE)

    @property
    def sinkhole_address(self) -> str:
        """Where the main dnsmasq forwards the names blocked since its last start (0.0.0.0 mode), as its query
        log names it: `127.0.0.1#<port>`."""
        return f"127.0.0.1#{self.sinkhole_port}"

    @property
    def dot_address(self) -> str:
        """Where dnsmasq forwards when the upstreams are `tls://`: the forwarder, as `127.0.0.1#<port>`."""
        return f"127.0.0.1#{self.dot_port}" if self.dot_port else ""

    def _prepare(self) -> None:
        for sub in ("acl", "errors", "logs", "run", "dns"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        for template in TEMPLATES.iterdir():
            target = self.root / "errors" / template.name
            if not target.exists():
                shutil.copyfile(template, target)
        if self.user:
            entry = pwd.getpwnam(self.user)
            for sub in ("logs", "run"):
                os.chown(self.root / sub, entry.pw_uid, entry.pw_gid)
                for child in (self.root / sub).iterdir():
                    os.chown(child, entry.pw_uid, entry.pw_gid)

    async def _exec(self, argv: list[str], log_name: str) -> asyncio.subprocess.Process:
        with open(self.root / "logs" / log_name, "ab") as log:
            return await asyncio.create_subprocess_exec(
                *argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent
            )

    async def _spawn_listening(
        self, argv: list[str], log_name: str, host: str, port: int, timeout: float
    ) -> asyncio.subprocess.Process:
        """Start `argv` and return it once it accepts connections on host:port (DataPlaneError if it dies or
        does not listen within `timeout` seconds)."""
        process = await self._exec(argv, log_name)
        deadline = time.monotonic() + timeout
        while not await asyncio.to_thread(_port_open, port, host):
            if process.returncode is not None or time.monotonic() > deadline:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
                name = Path(argv[0]).name
                raise DataPlaneError(f"{name} did not start; see {self.root / 'logs'}")
            await asyncio.sleep(0.02)
        return process

    async def _spawn_squid(self) -> asyncio.subprocess.Process:
        """Squid on `self.port` (the same one every time), returned once it accepts connections."""
        argv = [self.config.squid_bin, "-N", "-f", str(self.conf_path)]
        process = await self._spawn_listening(argv, "squid.out", "127.0.0.1", self.port, 20)
        self.started_at = time.time()
        return process

    async def _spawn_dnsmasq(self) -> asyncio.subprocess.Process:
        argv = [self.config.dnsmasq_bin, "-k", "-C", str(self.root / "dns" / "dnsmasq.conf")]
        return await self._spawn_listening(argv, "dnsmasq.log", self.dns, 53, 10)

    async def _spawn_sinkhole(self) -> asyncio.subprocess.Process:
        argv = [self.config.dnsmasq_bin, "-k", "-C", str(self.root / "dns" / "sinkhole.conf")]
        return await self._spawn_listening(argv, "dnsmasq.log", "127.0.0.1", self.sinkhole_port, 10)

    async def _probe_sinkhole(self) -> bool:
        return await asyncio.to_thread(self._probe, self.sinkhole_port, "127.0.0.1")

    def _ensure_sinkhole(self) -> None:
        """Start the supervised sinkhole the first time a delta is forwarded to it (0.0.0.0 mode); it runs
        until the plane stops."""
        if self.supervisor is None or SINKHOLE in self.supervisor.children:
            return
        conf = squidconf.sinkhole_conf(
            address="127.0.0.1",
            port=self.sinkhole_port,
            pid_file=self.root / "run" / f"{SINKHOLE}.pid",
            as_root=os.geteuid() == 0,
        )
        _write_atomic(self.root / "dns" / "sinkhole.conf", conf)
        try:
            self.supervisor.start(self._supervised(SINKHOLE, self._spawn_sinkhole, self._probe_sinkhole))
        except Exception as exc:
            raise DataPlaneError(f"the DNS sinkhole did not start: {exc}") from None

    async def _spawn_dot(self) -> asyncio.subprocess.Process:
        argv = [self.config.unbound_bin, "-d", "-c", str(self.root / "dns" / "unbound.conf")]
        return await self._spawn_listening(argv, "unbound-dot.log", "127.0.0.1", self.dot_port, 10)

    async def _probe_dot(self) -> bool:
        return await asyncio.to_thread(self._probe, self.dot_port, "127.0.0.1")

    def _write_dot(self, policy: squidconf.Policy) -> bool:
        """Render the DNS-over-TLS forwarder's configuration when the upstreams are `tls://` (changed: True)."""
        upstreams = dotforward.tls_upstreams(policy.dns_upstreams)
        if not upstreams:
            return False
        conf = dotforward.unbound_conf(
            upstreams,
            dotforward.ca_file(policy.dns_upstream_ca_file),
            self.dot_port,
            self.root / "dns",
            self.root / "run" / f"{dotforward.CHILD}.pid",
        )
        return self._put(self.root / "dns" / "unbound.conf", conf)

    def _start_dot_check(self) -> Check:
        argv = [self.config.unbound_checkconf_bin, str(self.root / "dns" / "unbound.conf")]
        return Check(argv, _unbound_verdict)

    def _apply_dot(self, policy: squidconf.Policy) -> None:
        """Start, restart (its configuration changed) or stop the supervised DNS-over-TLS forwarder so that it
        matches `policy`: before dnsmasq takes a candidate that forwards to it."""
        if self.supervisor is None:
            return
        wanted = bool(dotforward.tls_upstreams(policy.dns_upstreams))
        running = dotforward.CHILD in self.supervisor.children
        if wanted and not running:
            self._dot_taken = True
            try:
                self.supervisor.start(self._supervised(dotforward.CHILD, self._spawn_dot, self._probe_dot))
            except Exception as exc:
                self.supervisor.stop(dotforward.CHILD)
                raise DataPlaneError(f"the DNS-over-TLS forwarder did not start: {exc}") from None
        elif wanted and self.dot_changed:
            self._dot_taken = True
            self._restart_child(dotforward.CHILD)
        elif not wanted and running:
            self._dot_taken = True
            self.supervisor.stop(dotforward.CHILD)

    def dot_status(self) -> dict[str, Any] | None:
        """The DNS-over-TLS upstreams in force and their forwarder (None: plain upstreams or none)."""
        policy = self.policy or squidconf.Policy()
        upstreams = dotforward.tls_upstreams(policy.dns_upstreams)
        if not upstreams:
            return None
        process = self._child(dotforward.CHILD)
        return {
            "upstreams": [str(u) for u in upstreams],
            "ca_file": dotforward.ca_file(policy.dns_upstream_ca_file),
            "forwarder": self.dot_address,
            "running": process is not None,
            "pid": process.pid if process is not None else None,
        }

    async def _probe_squid(self) -> bool:
        return await asyncio.to_thread(self._probe, self.port, "127.0.0.1")

    async def _probe_dnsmasq(self) -> bool:
        return await asyncio.to_thread(self._probe, 53, self.dns)

    def _probe(self, port: int, host: str) -> bool:
        """Does the child accept a connection? While the owner applies a policy (Squid closes its port
        while it reconfigures) the answer is yes: the apply itself reports a child that does not come back."""
        if not self._lock.acquire(blocking=False):
            return True
        try:
            return _port_open(port, host)
        finally:
            self._lock.release()

    async def _reapply(self) -> None:
        await asyncio.to_thread(self._reapply_sync)

    def _reapply_sync(self) -> None:
        """After a supervised restart: render the current policy again (every file, in case one changed
        under us) and hand it to the new process when it differs from what it read at start."""
        with self._lock:
            if self.policy is None:
                return
            self._acl_entries, self._sinkhole, self._blocklist = {}, None, None
            if self._write(self.policy) and self.running():
                self.reconfigure(check=True)
            if self.hosts_changed:
                self.reload_dns()
            self._undo = {}
            log.info("re-applied the policy to a restarted child", extra={"root": str(self.root)})

    def _listen(self) -> tuple[int, str]:
        """Squid's port and dnsmasq's address: the configured port, else those of the previous owner of
        this folder (kept in run/listen.json) while they are free, else fresh ones."""
        saved = self.root / "run" / "listen.json"
        port, dns, crs, sink, dot = self.config.port, "", 0, 0, 0
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            last = json.loads(saved.read_text())
            port = port or (int(last["port"]) if _port_free(int(last["port"])) else 0)
            dns = str(last["dns"]) if _dns_free(str(last["dns"])) else ""
            crs = int(last.get("crs", 0)) if _port_free(int(last.get("crs", 0))) else 0
            sink = int(last.get("sinkhole", 0)) if _port_free(int(last.get("sinkhole", 0))) else 0
            dot = int(last.get("dot", 0)) if _port_free(int(last.get("dot", 0))) else 0
            self._view_ports = {str(k): int(v) for k, v in dict(last.get("views", {})).items()}
        port, dns = port or free_tcp_port(), dns or free_dns_address()
        self.crs_port = crs or free_tcp_port()
        self.sinkhole_port = sink or free_tcp_port()
        self.dot_port = dot or free_tcp_port()
        self.port, self.dns = port, dns
        self._save_listen()
        return port, dns

    def _save_listen(self) -> None:
        listen = {
            "port": self.port,
            "dns": self.dns,
            "crs": self.crs_port,
            "sinkhole": self.sinkhole_port,
            "dot": self.dot_port,
            "views": self._view_ports,
        }
        (self.root / "run" / "listen.json").write_text(json.dumps(listen))

    def start(self, policy: squidconf.Policy) -> PlaneStatus:
        """Start dnsmasq then Squid with `policy`, both supervised; returns `status()`."""
        with self._lock:
            self._acl_entries, self._sinkhole, self._blocklist, self._pages = {}, None, None, set()  # render all once
            self._dns_base, self._base_rules, self.delta = None, set(), []  # dnsmasq starts on a new base
            self._prepare()
            _reap_previous_owner(self.root)
            self._require_nft(policy)
            if self.nft.available() is None:
                try:
                    self.nft.delete()  # a table a killed predecessor left steers to views that are gone
                except groupdns.GroupDnsError as exc:  # e.g. no CAP_NET_ADMIN: fine while no group needs a view
                    log.warning(
                        "could not clear the group DNS table", extra={"table": self.nft.name, "error": str(exc)}
                    )
            self.port, self.dns = self._listen()
            self._write(policy)
            self._undo = {}
            self.policy = policy
            self.supervisor = SupervisorThread("webfilter-dataplane")
            try:
                self._apply_dot(policy)  # dnsmasq forwards to it
                self.supervisor.start(self._supervised("dnsmasq", self._spawn_dnsmasq, self._probe_dnsmasq))
                if squidconf.crs_on(policy):
                    self._configure_crs(policy)  # needs dnsmasq (its resolver); Squid then names its port
                    self._write(policy)
                self._check_parse()
                self.supervisor.start(self._supervised("squid", self._spawn_squid, self._probe_squid))
                self._apply_views(policy)
            except Exception:
                self.stop()
                raise
            self.bumping = policy.ssl_bump
            self._start_watchdog()
            return self.status()

    def _supervised(
        self,
        name: str,
        spawn: Callable[[], Awaitable[asyncio.subprocess.Process]],
        probe: Callable[[], Awaitable[bool]],
    ) -> Supervised:
        return Supervised(name, spawn, probe=probe, on_restart=self._reapply, policy=self.restart_policy)

    def _start_watchdog(self) -> None:
        """Squid and dnsmasq change credentials, which clears PR_SET_PDEATHSIG: a small shell loop ends them
        (by their pid files, which follow every supervised restart) when this process is gone. It only reaps;
        starting and restarting is the supervisors' job."""
        if self.watchdog is not None and self.watchdog.poll() is None:
            return
        run = self.root / "run"
        unsteer = (
            f"{self.nft.nft_bin} delete table inet {self.nft.name} 2>/dev/null; "
            if self.nft.available() is None
            else ""
        )
        script = (
            f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; {unsteer}"
            f'for f in "{run}/squid.pid" "{run}"/dnsmasq*.pid "{run}/{dotforward.CHILD}.pid"; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done'
        )
        self.watchdog = subprocess.Popen(
            ["sh", "-c", script],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        (run / "watchdog.pid").write_text(str(self.watchdog.pid))

    def _put(self, path: Path, text: str) -> bool:
        """`_write_atomic` (the file read once), remembering what `path` held before, so a candidate Squid
        refuses can be undone."""
        before = path.read_text() if path.exists() else None
        if before == text:
            return False
        _replace(path, text)
        self._undo.setdefault(path, before)
        return True

    def _rollback(self) -> None:
        """Put back every file the refused candidate changed; the next apply renders everything again."""
        for path, before in self._undo.items():
            if before is None:
                path.unlink(missing_ok=True)
            else:
                _write_atomic(path, before)
        self._undo = {}
        self._acl_entries, self._sinkhole, self._blocklist = {}, None, None

    def _write(self, policy: squidconf.Policy) -> bool:
        """Render what changed since the last call, dnsmasq's files then Squid's (`_write_dns`, `_write_squid`)."""
        dns = self._write_dns(policy)
        return self._write_squid(policy) or dns

    def _write_squid(self, policy: squidconf.Policy) -> bool:
        """Render Squid's files that changed: an ACL file whose entries are the same is neither rendered nor
        read back nor written (a list edit renders one file, not all of them)."""
        changed = False
        cfg = self.config
        self.tls = tlsfiles.prepare(
            self.root,
            bump=policy.ssl_bump,
            squid_bin=cfg.squid_bin,
            certgen_bin=cfg.certgen_bin,
            ca_cert=cfg.ca_cert,
            ca_key=cfg.ca_key,
            outgoing_cafile=cfg.tls_outgoing_cafile,
            user=self.user,
        )
        for name, source in squidconf.acl_sources(policy).items():
            entries = list(source[1])
            if self._acl_entries.get(name) == entries:
                continue
            changed |= self._put(self.root / "acl" / name, squidconf.render_acl(source))
            self._acl_entries[name] = entries
        groups = (grouprules.rule_name(g["name"]) for g in policy.groups)
        for rule in [*squidconf.REASONS, *(f"waf:{c}" for c in policy.waf_categories), *groups]:
            if rule not in self._pages:
                _write_atomic(self.root / "errors" / squidconf.page_name(rule), squidconf.error_page(rule))
                self._pages.add(rule)
        conf = squidconf.squid_conf(
            policy,
            root=self.root,
            port=self.port,
            dns=self.dns,
            cache_mem_mb=self.config.cache_mem_mb,
            user=self.user,
            tls=self.tls,
            log_rotate_keep=self.config.log_rotate_keep,
            crs_port=self.crs_port if self.crs is not None else 0,
        )
        self.conf_changed = self._put(self.conf_path, conf)
        changed |= self.conf_changed
        self.squid_changed = changed  # squid.conf or an ACL file
        return changed

    def _write_dns(self, policy: squidconf.Policy) -> bool:
        """Render dnsmasq's files that changed (its configuration, the static names, the blocklist, the delta).
        Base + delta: when `policy` only blocks names beyond the base (`squidconf.dns_delta`), blocklist.conf
        stays as dnsmasq read it at its last start and those names go to its servers-file (`delta_changed`:
        a SIGHUP takes them); otherwise the blocklist is rendered whole as the new base and the delta emptied
        (`dns_conf_changed`: dnsmasq restarts)."""
        dns_dir = self.root / "dns"
        base = self._dns_base
        delta = squidconf.dns_delta(base, self._base_rules, policy) if base is not None else None
        if base is None or delta is None:
            base, delta = policy, []
        self.dns_conf_changed = self._put(
            dns_dir / "dnsmasq.conf",
            squidconf.dnsmasq_conf(
                policy,
                own=self.dns,
                hosts=dns_dir / "hosts",
                pid_file=self.root / "run" / "dnsmasq.pid",
                query_log=self.dns_log,
                as_root=os.geteuid() == 0,
                servers_file=dns_dir / "delta.conf",
                forwarder=self.dot_address,
            ),
        )
        self.dot_changed = self._write_dot(policy)
        self.hosts_changed = False
        if self._sinkhole is None:  # the static names, once per start (blocking is in blocklist.conf)
            self.hosts_changed = self._put(dns_dir / "hosts", squidconf.hosts_file(self.config.hosts, []))
            self._sinkhole = []
        if base is policy or self._blocklist is None:
            blocklist = squidconf.dns_blocklist(base)
            if blocklist != self._blocklist:
                self.dns_conf_changed |= self._put(dns_dir / "blocklist.conf", blocklist)
                self._blocklist = blocklist
        if base is policy:
            self._dns_base, self._base_rules = policy, squidconf.blocked_rules(policy)
        self.delta = delta
        text = squidconf.dns_delta_file(delta, policy, self.sinkhole_address)
        self.delta_changed = self._put(dns_dir / "delta.conf", text)
        # a changed hosts file or delta alone needs only a SIGHUP
        return self.dns_conf_changed or self.delta_changed or self.dot_changed

    def _start_parse(self) -> Check:
        return Check([self.config.squid_bin, "-k", "parse", "-f", str(self.conf_path)], _squid_verdict)

    def _start_dnsmasq_test(self, conf: Path | None = None) -> Check:
        argv = [self.config.dnsmasq_bin, "--test", "-C", str(conf or self.root / "dns" / "dnsmasq.conf")]
        return Check(argv, _dnsmasq_verdict)

    def _check_parse(self) -> None:
        self._start_parse().verdict()

    def _check_dnsmasq(self, conf: Path | None = None) -> None:
        self._start_dnsmasq_test(conf).verdict()

    def apply(self, policy: squidconf.Policy) -> dict[str, Any]:
        """Render `policy` as a candidate and check it whole before anything takes it: Squid's files are
        rendered and a changed Squid candidate parsed (`squid -k parse`), while dnsmasq's files are rendered
        and a changed dnsmasq candidate tested (`dnsmasq --test`) beside it. A candidate
        either refuses is undone file by file and DataPlaneError is raised: dnsmasq, the groups' views and the
        running Squid (and a supervised restart of either) keep the last good configuration, so a refused
        edit never shows in DNS. Then dnsmasq is restarted on its candidate (it reads `address=` lines only
        at start), the groups' views follow, and Squid is reconfigured. While a child is being restarted the
        files are still written: the restarted process reads them.

        One kind of edit goes to DNS first (`dns_first`), since no Squid candidate of its shape can be refused:
        only plain names added to or removed from the global domain lists (`_names_only`: every other part
        of the policy the same, no list becoming empty or non-empty, so `squid.conf` is unchanged and only the
        lists' `dstdomain` name files change, rendered from validated names without overlaps). dnsmasq is
        tested and restarted on it before Squid's files are rendered and parsed; Squid still parses before
        the signal, and were it to refuse, dnsmasq is restarted on the restored files."""
        with self._lock:
            started = time.perf_counter()
            self._undo = {}
            self._configure_crs(policy)
            self._dns_taken = False  # dnsmasq was (being) restarted on the candidate
            self._dot_taken = False
            views_taken = False  # the groups' views were (being) given the candidate
            checks: list[Check] = []
            dns_first = self._names_only(policy)
            base = (self._dns_base, self._base_rules, self.delta)
            try:
                self._require_nft(policy)
                self._check_listeners(policy)
                changed, steps = self._take(policy, dns_first, checks, started)
                views_taken = True
                views_started = time.perf_counter()
                self._apply_views(policy)  # after Squid's check: what Squid refuses never reaches a group's DNS
                viewed = time.perf_counter()
            except (DataPlaneError, groupdns.GroupDnsError) as exc:
                for check in checks:
                    check.end()
                self._rollback()
                self._dns_base, self._base_rules, self.delta = base
                if self._dot_taken and self.policy is not None:
                    self._restore_dot(self.policy)
                if self._dns_taken:
                    self._restart_dnsmasq_on_the_last_good()
                if views_taken and self.policy is not None:
                    self._restore_views(self.policy)
                if self.policy is not None:
                    self._configure_crs(self.policy)
                raise DataPlaneError(f"{exc}; the last good configuration keeps running") from None
            self._undo = {}
            self.policy = policy
            if self.hosts_changed and not self.dns_conf_changed and not self.delta_changed:
                self.reload_dns()
            reconfigure_s = 0.0
            if self.squid_changed and self.running():
                reconfigure_s = self.reconfigure(check=False)
                self.bumping = policy.ssl_bump
            if not squidconf.crs_on(policy):
                self._stop_crs()  # once Squid no longer sends it anything
            self.last_apply = {
                "changed": changed,
                "dns_first": dns_first,
                "render_ms": round(steps["render"] * 1000, 2),  # Squid's + dnsmasq's
                "parse_checked": self.squid_changed,
                "dns_restarted": self.dns_conf_changed,
                "dns_reloaded": self.delta_changed and not self.dns_conf_changed,  # the delta taken by SIGHUP
                "dns_delta": len(self.delta),  # names blocked since dnsmasq's last start (its servers-file)
                "dns_restart_ms": round(steps["dns_restart"] * 1000, 2),  # dnsmasq's restart (dns_first: and --test)
                "dns_ready_ms": round(steps["dns_ready"] * 1000, 2),  # the edit answered in DNS
                "views_ms": round((viewed - views_started) * 1000, 2),  # the groups' views and nft table
                "parse_ms": round(
                    steps["parse"] * 1000, 2
                ),  # squid -k parse (not dns_first: and what remained of --test)
                "reconfigure_ms": round(reconfigure_s * 1000, 2),
                "total_ms": round((time.perf_counter() - started) * 1000, 2),
                "at": time.time(),
            }
            return self.last_apply

    def _take(
        self, policy: squidconf.Policy, dns_first: bool, checks: list[Check], since: float
    ) -> tuple[bool, dict[str, float]]:
        """Render and check the candidate, and restart dnsmasq on it: `dns_first`, dnsmasq's part is tested and
        taken before Squid's files are rendered and parsed; otherwise Squid's parse and dnsmasq's test run side
        by side (`checks`, ended by the caller on failure) before dnsmasq takes anything. Returns whether a file
        changed and the steps' seconds (`render`, `parse`, `dns_restart`, `dns_ready`: from `since`)."""
        started = time.perf_counter()
        if dns_first:
            changed = self._write_dns(policy)
            dns_rendered = time.perf_counter()
            self._restart_dnsmasq_if_changed(test=True)
            dns_ready = time.perf_counter()
            changed = self._write_squid(policy) or changed
            rendered = time.perf_counter()
            if self.squid_changed:
                self._check_parse()
            checked = time.perf_counter()
            render, parse, restart = (
                dns_rendered - started + rendered - dns_ready,
                checked - rendered,
                dns_ready - dns_rendered,
            )
        else:
            # Squid's parse is the longest check: it starts first, dnsmasq's files are rendered beside it
            changed = self._write_squid(policy)
            if self.squid_changed:
                checks.append(self._start_parse())
            changed = self._write_dns(policy) or changed
            if self.dns_conf_changed:
                checks.append(self._start_dnsmasq_test())
            if self.dot_changed:
                checks.append(self._start_dot_check())
            rendered = time.perf_counter()
            for check in checks:
                check.verdict()
            checked = time.perf_counter()
            self._apply_dot(policy)
            self._restart_dnsmasq_if_changed(test=False)
            dns_ready = time.perf_counter()
            render, parse, restart = rendered - started, checked - rendered, dns_ready - checked
        return changed, {"render": render, "parse": parse, "dns_restart": restart, "dns_ready": dns_ready - since}

    def _restart_dnsmasq_if_changed(self, test: bool) -> None:
        """Restart dnsmasq on its changed candidate (`test`: `dnsmasq --test` first), or, when only its delta
        changed, have the running dnsmasq read it again (`_reload_delta`)."""
        if self.dns_conf_changed:
            if test:
                self._check_dnsmasq()
            self._dns_taken = True
            self._restart_child("dnsmasq")
        elif self.delta_changed:
            self._dns_taken = True
            self._reload_delta()

    def _reload_delta(self) -> None:
        """SIGHUP: dnsmasq (same pid, answering meanwhile) reads its servers-file again, and the hosts file.
        Returns once its log says it took its servers (`using ...`, logged after the file is read, which always
        holds `squidconf.DELTA_MARK`), so the edit answers in DNS when apply returns."""
        base = self._dns_base or squidconf.Policy()  # the delta's mode is the base's
        self._take_delta("dnsmasq", self.delta, base.dns_block_mode)

    def _take_delta(self, name: str, delta: list[str], mode: str) -> None:
        """Have the supervised dnsmasq `name` read its servers-file again (the sinkhole started first when
        the delta forwards to it) and return once the query log (every dnsmasq of the plane writes it) shows
        that process (`dnsmasq[<pid>]`) logging `using ...`, which it does after reading the file; nothing to
        wait for when it is not running (its supervisor starts it on the files)."""
        if delta and mode != "nxdomain":
            self._ensure_sinkhole()
        process = self._child(name)
        if process is None:
            return
        log_file = self.dns_log
        mark = log_file.stat().st_size if log_file.exists() else 0
        if not self._signal(name, signal.SIGHUP):
            return
        line = f"dnsmasq[{process.pid}]: using ".encode()
        deadline = time.monotonic() + RECONFIGURE_TIMEOUT
        seen = b""  # what was logged since the signal, read once (the log grows with every query)
        with contextlib.ExitStack() as stack:
            fh = None
            while time.monotonic() < deadline and self._child(name) is process:
                if fh is None:
                    with contextlib.suppress(OSError):
                        fh = stack.enter_context(open(log_file, "rb"))
                        fh.seek(mark)
                if fh is not None:
                    seen = seen[-len(line) :] + fh.read()  # the line may be split across two reads
                    if line in seen:
                        return
                time.sleep(0.005)
        raise DataPlaneError(f"{name} did not read its delta after SIGHUP; see its query log")

    def _names_only(self, policy: squidconf.Policy) -> bool:
        """Does `policy` differ from the one applied only by plain names in the global domain lists (no
        `*.`/regex rule added or removed, no list becoming empty or non-empty)? Such a Squid candidate
        changes name files only: it cannot be refused (see `apply`)."""
        last = self.policy
        if last is None:
            return False
        if (
            dataclasses.replace(policy, domain_blacklist=last.domain_blacklist, domain_whitelist=last.domain_whitelist)
            != last
        ):
            return False
        pairs = ((policy.domain_blacklist, last.domain_blacklist), (policy.domain_whitelist, last.domain_whitelist))
        for after, before in pairs:
            if after is before or after == before:
                continue
            # the lists' indexes: the render derives the new one from the last one anyway
            if bool(after) != bool(before) or squidconf.pattern_rules(before) != squidconf.pattern_rules(after):
                return False
        return True

    # the client groups' DNS views (groupdns) ----------------------------------------------------------------
    def _require_nft(self, policy: squidconf.Policy) -> None:
        """A policy with group DNS views needs nft: refused with the reason rather than silently answering a
        group's clients from the global lists."""
        if groupdns.views(policy):
            why = self.nft.available()
            if why:
                raise DataPlaneError(f"per-group DNS needs nftables: {why}")

    def _view_paths(self, key: str) -> tuple[Path, Path, Path]:
        """A view's dnsmasq configuration, blocklist and pid file."""
        dns_dir = self.root / "dns"
        return dns_dir / f"group-{key}.conf", dns_dir / f"group-{key}.blocklist.conf", self._view_pid(key)

    def _view_pid(self, key: str) -> Path:
        return self.root / "run" / f"dnsmasq-group-{key}.pid"

    def _view_delta(self, key: str) -> Path:
        """A view's servers-file: the names the global or the group's blacklist blocked since its last start."""
        return self.root / "dns" / f"group-{key}.delta.conf"

    def _view_port(self, key: str, listen: list[str]) -> int:
        """The view's port: the one it had (run/listen.json) while it is free, else a free one."""
        port = self._view_ports.get(key, 0)
        if port and (key in self._views or all(_dns_port_free(a, port) for a in listen)):
            return port
        for _ in range(50):
            port = free_tcp_port()
            if port not in self._view_ports.values() and all(_dns_port_free(a, port) for a in listen):
                self._view_ports[key] = port
                self._save_listen()
                return port
        raise DataPlaneError(f"no free port for the DNS view {key}")

    async def _spawn_view(self, key: str) -> asyncio.subprocess.Process:
        conf, _, _ = self._view_paths(key)
        view = self._views.get(key)
        if view is None:
            raise DataPlaneError(f"no DNS view {key}")
        argv = [self.config.dnsmasq_bin, "-k", "-C", str(conf)]
        process = await self._spawn_listening(argv, "dnsmasq.log", view.policy.dns_listen[0], self._view_ports[key], 10)
        # rebound, never changed in place: the proxy actor's thread reads it while this loop's thread writes
        kept = list(self.view_pids.items())[-511:]
        self.view_pids = {**dict(kept), process.pid: view.group}
        return process

    def _view_child(self, key: str) -> str:
        return f"dnsmasq-group-{key}"

    def _apply_views(self, policy: squidconf.Policy) -> None:
        """Give each group with DNS rules its view (a dnsmasq of its own: started, or restarted when its files
        changed), then steer the groups' clients to them (the nft table, replaced whole), then end the views
        no group needs any more (after they stopped being steered to)."""
        if self.supervisor is None:
            return
        wanted = {view.key: view for view in groupdns.views(policy)}
        listen = list(policy.dns_listen)
        bound = ["0.0.0.0", "::"] if squidconf.wildcard(listen) else listen  # what the views' sockets take
        for key, view in wanted.items():
            port = self._view_port(key, bound)
            conf, blocklist_path, pid_file = self._view_paths(key)
            running = self._view_child(key) in self.supervisor.children
            base = self._view_bases.get(key) if running else None
            delta = squidconf.dns_delta(base[0], base[1], view.policy) if base is not None else None
            changed = self._put(
                conf,
                squidconf.dnsmasq_conf(
                    view.policy,
                    own="",
                    hosts=self.root / "dns" / "hosts",
                    pid_file=pid_file,
                    query_log=self.dns_log,
                    as_root=os.geteuid() == 0,
                    port=port,
                    blocklist=blocklist_path,
                    servers_file=self._view_delta(key),
                    forwarder=self.dot_address,
                ),
            )
            if delta is None:  # a new base: the blocklist rendered whole, and the view (re)started on it
                delta = []
                blocklist = squidconf.dns_blocklist(view.policy)
                if blocklist != self._view_blocklists.get(key):
                    changed |= self._put(blocklist_path, blocklist)
                    self._view_blocklists[key] = blocklist
                self._view_bases[key] = (view.policy, squidconf.blocked_rules(view.policy))
            delta_changed = self._put(
                self._view_delta(key), squidconf.dns_delta_file(delta, view.policy, self.sinkhole_address)
            )
            self._views[key] = view
            if running and not changed:
                if delta_changed:  # names added to a blacklist only: read by the running view (SIGHUP)
                    self._take_delta(self._view_child(key), delta, view.policy.dns_block_mode)
                continue
            self._check_dnsmasq(conf)
            if running:
                self._restart_child(self._view_child(key))
            else:
                self.supervisor.start(
                    Supervised(
                        self._view_child(key),
                        functools.partial(self._spawn_view, key),
                        probe=functools.partial(self._probe_view, key),
                        policy=self.restart_policy,
                    )
                )
        if wanted:
            self.nft.apply(listen, [(view, self._view_ports[key]) for key, view in wanted.items()], self.dns)
        elif self.nft.present:
            self.nft.delete()
        for key in [k for k in self._views if k not in wanted]:
            self.supervisor.stop(self._view_child(key))
            del self._views[key]
            self._view_blocklists.pop(key, None)
            self._view_bases.pop(key, None)
            for path in (*self._view_paths(key), self._view_delta(key)):
                path.unlink(missing_ok=True)

    async def _probe_view(self, key: str) -> bool:
        view = self._views.get(key)
        if view is None:
            return True
        return await asyncio.to_thread(self._probe, self._view_ports[key], view.policy.dns_listen[0])

    def _restore_views(self, policy: squidconf.Policy) -> None:
        """After a refused candidate: the views and the table as `policy` (the last good one) has them."""
        self._view_blocklists, self._view_bases = {}, {}
        try:
            self._apply_views(policy)
        except (DataPlaneError, groupdns.GroupDnsError) as exc:
            log.error("the groups' DNS views did not come back", extra={"root": str(self.root), "error": str(exc)})

    def view_status(self) -> list[ViewStatus]:
        out: list[ViewStatus] = []
        for key, view in self._views.items():
            process = self._child(self._view_child(key))
            port = self._view_ports.get(key, 0)
            pid = process.pid if process else None
            out.append(
                {"group": view.group, "outside": view.outside, "port": port, "running": process is not None, "pid": pid}
            )
        return out

    def _restart_dnsmasq_on_the_last_good(self) -> None:
        """After a rollback: dnsmasq took the refused candidate (or failed to start on it): start it again on
        the restored files."""
        try:
            self._restart_child("dnsmasq")
        except DataPlaneError:
            log.error("dnsmasq did not restart on the last good configuration", extra={"root": str(self.root)})

    def _restore_dot(self, policy: squidconf.Policy) -> None:
        """After a rollback: the forwarder as the last good policy had it (on the restored files)."""
        self.dot_changed = True
        try:
            self._apply_dot(policy)
        except DataPlaneError:
            log.error("the DNS-over-TLS forwarder did not come back", extra={"root": str(self.root)})

    def reconfigure(self, check: bool = True) -> float:
        """Check, signal, and wait until Squid listens again with the new configuration (it closes its
        port while reconfiguring). Returns the seconds the reconfiguration took."""
        with self._lock:
            if check:
                self._check_parse()
            cache_log = self.root / "logs" / "cache.log"
            mark = cache_log.stat().st_size if cache_log.exists() else 0
            started = time.monotonic()
            # SIGHUP is what `squid -k reconfigure` sends, but that command first parses the whole configuration
            # (every ACL file) itself just to find the pid file: signalling our own child skips a second parse
            squid = self.squid
            if squid is None:
                raise DataPlaneError("squid is not running")
            with contextlib.suppress(ProcessLookupError):
                os.kill(squid.pid, signal.SIGHUP)
            deadline = started + RECONFIGURE_TIMEOUT
            while time.monotonic() < deadline and self.running():
                with open(cache_log, "rb") as fh:
                    fh.seek(mark)
                    # "Accepting HTTP Socket connections", or "Accepting SSL bumped HTTP ..." with ssl-bump
                    if b"HTTP Socket connections at" in fh.read() and _port_open(self.port):
                        break
                time.sleep(0.01)
            else:
                if not self.running():
                    raise DataPlaneError("squid exited during reconfigure; see cache.log")
                raise DataPlaneError(
                    f"squid did not come back within {RECONFIGURE_TIMEOUT} s of reconfigure; see cache.log"
                )
            return time.monotonic() - started

    def _signal(self, name: str, sig: signal.Signals) -> bool:
        """Send `sig` to the supervised child `name`; False when it is not running."""
        child = self._child(name)
        if child is None:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, sig)
        return True

    def reload_dns(self) -> bool:
        return self._signal("dnsmasq", signal.SIGHUP)

    def rotate_log(self, which: str) -> bool:
        """Rotate Squid's access log (`which="access"`: SIGUSR1, what `squid -k rotate` sends, without that
        command's parse of every ACL file; under `logfile_rotate` Squid renames `access.log` to `access.log.0`,
        older copies shifted, and opens a new one) or dnsmasq's query log (`"dns"`: renamed here the same
        way, then SIGUSR2, on which dnsmasq reopens its log file). False when the process is not running."""
        with self._lock:
            if which == "access":
                return self._signal("squid", signal.SIGUSR1)
            if self.dnsmasq is None:
                return False
            shift_rotated(self.dns_log, self.config.log_rotate_keep)
            return self._signal("dnsmasq", signal.SIGUSR2)

    def restart_squid(self) -> PlaneStatus:
        """Stop and start Squid (same port, its supervisor kept): the only way to empty its memory cache."""
        with self._lock:
            self._check_parse()
            self._restart_child("squid")
            return self.status()

    def _restart_child(self, name: str) -> None:
        """Stop and start the supervised child `name` (its supervisor, restart count and address kept)."""
        with self._lock:
            if self.supervisor is None or name not in self.supervisor.children:
                raise DataPlaneError(f"{name} is not running")
            child = self.supervisor.children[name]
            self.supervisor.run(child.stop())
            try:
                self.supervisor.run(child.start())
            except Exception as exc:
                raise DataPlaneError(f"{name} did not restart") from exc

    def _check_listeners(self, policy: squidconf.Policy) -> None:
        """Every address Squid or dnsmasq would newly listen on must be one of this node's, and free: a
        listener that cannot bind would take the process down on reconfigure or restart."""
        last = self.policy or squidconf.Policy()
        for address in sorted(set(policy.proxy_listen) - set(last.proxy_listen)):
            host, _, port = address.rpartition(":")
            _bindable(socket.SOCK_STREAM, host.strip("[]"), int(port), f"proxy_listen {address}")
        for host in sorted(set(policy.dns_listen) - set(last.dns_listen)):
            _bindable(socket.SOCK_DGRAM, host, 53, f"dns_listen {host}")
        wild = squidconf.wildcard(policy.dns_listen)
        if wild and not squidconf.wildcard(last.dns_listen):
            # dnsmasq's wildcard sockets take port 53 of every address: another resolver's would make it fail
            others = sorted(_dns_listeners() - {self.dns, *last.dns_listen})
            if others:
                raise DataPlaneError(
                    f"dns_listen {wild} is taken: {', '.join(others)} already listen on port 53 of this node, "
                    "and a wildcard answers on port 53 of every address"
                )

    def _configure_crs(self, policy: squidconf.Policy) -> None:
        """Start the CRS tier, or give it `policy`'s configuration, when the WAF engine is `crs` (stopping it
        is `_stop_crs`, after Squid stopped sending to it). A configuration nginx or ModSecurity refuses
        raises DataPlaneError and leaves a running tier as it was."""
        if not squidconf.crs_on(policy) or self.supervisor is None:
            return
        crs, upstream = tier_config(policy, self.crs_port, self.dns)
        try:
            if self.crs is None:
                tier = CrsTier(
                    CrsPaths(self.root / "crs"), crs, upstream, name="nginx-crs", restart_policy=self.restart_policy
                )
                self.supervisor.run(tier.start(), timeout=120)
                self.crs = tier
            elif (self.crs.policy, self.crs.upstream) != (crs, upstream):
                self.supervisor.run(self.crs.apply(crs, upstream), timeout=120)
        except CrsError as exc:
            raise DataPlaneError(f"the CRS tier refused the configuration: {str(exc)[-300:]}") from None

    def _stop_crs(self) -> None:
        tier, self.crs = self.crs, None
        if tier is not None and self.supervisor is not None:
            self.supervisor.run(tier.stop())

    def crs_report(self) -> dict[str, Any]:
        """The tier's refusals read from its audit log (`CrsHits`), and its state."""
        return {
            "running": self.crs is not None and self.crs.running,
            "port": self.crs_port if self.crs is not None else 0,
            **self.crs_hits.read(),
        }

    def crs_reset(self, at: float) -> None:
        """The tier's counts restart from `at` (the WAF counter reset)."""
        self.crs_hits.reset(at)

    def running(self) -> bool:
        return self.squid is not None

    def children(self) -> list[Status]:
        """The supervised children's status (restarts, last exit, state), for /metrics and /health."""
        tier = [self.crs.status()] if self.crs is not None else []
        return (self.supervisor.statuses() if self.supervisor is not None else []) + tier

    def status(self) -> PlaneStatus:
        bumping = self.bumping and self.running()
        squid = self.squid
        return {
            "running": squid is not None,
            "proxy": f"127.0.0.1:{self.port}" if self.port else None,
            "port": self.port,
            "dns": self.dns,
            "dns_running": self.dnsmasq is not None,
            "squid_pid": squid.pid if squid is not None else None,
            "started_at": self.started_at,
            "access_log": str(self.access_log),
            "dns_log": str(self.dns_log),
            "dns_sinkhole": self.sinkhole_address if self.sinkhole_port else None,
            "dns_dot": self.dot_status(),
            "last_apply": self.last_apply,
            "ssl_bump": bumping,
            "ssl_bump_ca_sha256": tlsfiles.ca_digest(self.tls) if self.tls and bumping else None,
            "children": self.children(),
            "dns_views": self.view_status(),
            "nft_table": f"inet {self.nft.name}" if self.nft.present else None,
        }

    def stop(self) -> None:
        """End both children (their supervisors first, so nothing restarts them) and the watchdog."""
        if self.crs is not None and self.supervisor is not None:
            with contextlib.suppress(Exception):
                self._stop_crs()
        if self.nft.present:
            try:
                self.nft.delete()  # unsteer the groups' clients before their views end
            except groupdns.GroupDnsError as exc:
                log.error("could not delete the group DNS table", extra={"table": self.nft.name, "error": str(exc)})
        supervisor, self.supervisor = self.supervisor, None
        if supervisor is not None:
            for name in ("squid", "dnsmasq", SINKHOLE, dotforward.CHILD):  # Squid first: it resolves through dnsmasq
                with contextlib.suppress(Exception):
                    supervisor.stop(name)
            supervisor.close()  # and the groups' views
        self._views, self._view_blocklists = {}, {}
        if self.watchdog is not None:
            self.watchdog.kill()
            self.watchdog.wait()
            self.watchdog = None
        if self.fallback:
            shutil.rmtree(self.root, ignore_errors=True)


class Check:
    """A configuration check running in a process of its own (`squid -k parse`, `dnsmasq --test`), so two run
    side by side; `verdict()` waits for it and raises DataPlaneError with the program's words if it refused."""

    def __init__(self, argv: list[str], judge: Callable[[int, bytes, bytes], None], timeout: float = 60) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.program = Path(argv[0]).name
        self.judge = judge
        self.timeout = timeout
        self.done = False

    def verdict(self) -> None:
        try:
            out, err = self.process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.end()
            raise DataPlaneError(f"{self.program} did not finish its check") from None
        self.done = True
        self.judge(self.process.returncode, out, err)

    def end(self) -> None:
        """Stop a check still running (its sibling refused first) and reap it."""
        if not self.done:
            self.process.kill()
            self.process.communicate()
            self.done = True


def _squid_verdict(code: int, out: bytes, err: bytes) -> None:
    if code != 0:
        lines = [ln for ln in err.decode(errors="replace").splitlines() if "FATAL" in ln or "ERROR" in ln]
        raise DataPlaneError("squid refused the configuration: " + "; ".join(lines[-3:]))


def _dnsmasq_verdict(code: int, out: bytes, err: bytes) -> None:
    if code != 0:
        words = (err or out).decode(errors="replace").strip().splitlines()[-1:]
        raise DataPlaneError("dnsmasq refused the configuration: " + "; ".join(words))


def _unbound_verdict(code: int, out: bytes, err: bytes) -> None:
    if code != 0:
        words = (err or out).decode(errors="replace").strip().splitlines()[-1:]
        raise DataPlaneError("unbound refused the DNS-over-TLS configuration: " + "; ".join(words))


def _bindable(kind: int, host: str, port: int, what: str) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, kind) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            reason = "is not an address of this node" if exc.errno == errno.EADDRNOTAVAIL else "is taken"
            raise DataPlaneError(f"{what} {reason} ({exc.strerror})") from None


def _dns_listeners() -> set[str]:
    """The addresses of this node (its network namespace) where a TCP socket listens on port 53."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                address, _, port = fields[1].partition(":")
                if port != "0035" or fields[3] != "0A":  # port 53, LISTEN
                    continue
                # the address's 32-bit words in network order, each printed as the host reads it
                words = [int(address[i : i + 8], 16) for i in range(0, len(address), 8)]
                found.add(str(ipaddress.ip_address(b"".join(w.to_bytes(4, sys.byteorder) for w in words))))
    return found


def _pid_of(path: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text().split()[0])
    return None


def _reap_previous_owner(root: Path) -> None:
    """A previous owner of this folder that was killed (its actor restarted) may have left its watchdog,
    Squid and dnsmasq behind for up to a second: end them now, so this owner gets the same port and its
    new children are not killed by the old watchdog. Only processes whose command line names this folder."""
    run = root / "run"
    for name in (
        "watchdog.pid",
        "squid.pid",
        "dnsmasq.pid",
        f"{SINKHOLE}.pid",
        f"{dotforward.CHILD}.pid",
        *(p.name for p in run.glob("dnsmasq-group-*.pid")),
    ):
        pid = _pid_of(run / name)
        if pid is None or pid == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if str(root).encode() not in cmdline:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline and not _zombie(pid):
            time.sleep(0.01)
        # an ended child of the dead owner stays a zombie until it is reaped, and Squid takes a zombie's pid
        # file for a running instance: the pid file goes with the process
        (run / name).unlink(missing_ok=True)


def _zombie(pid: int) -> bool:
    with contextlib.suppress(OSError, IndexError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    return True
