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
import errno
import hashlib
import json
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from actors.webfilter import grouprules, squidconf, tlsfiles
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
    last_apply: dict[str, Any]  # timings of the last apply (empty before the first one)
    ssl_bump: bool  # Squid runs a bumping configuration now
    ssl_bump_ca_sha256: str | None
    children: list[Status]  # the supervised Squid and dnsmasq: state, restarts, last exit


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


def _dns_free(addr: str) -> bool:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, socket.socket() as tcp:
            udp.bind((addr, 53))
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            tcp.bind((addr, 53))
    except OSError:
        return False
    return True


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
        self._pages: set[str] = set()
        self._undo: dict[Path, str | None] = {}  # what the files of the candidate being applied held before
        self.crs: CrsTier | None = None  # the CRS inspection tier, while the WAF engine is `crs`
        self.crs_port = 0
        self.crs_hits = CrsHits(self.root / "crs")

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
        port, dns, crs = self.config.port, "", 0
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            last = json.loads(saved.read_text())
            port = port or (int(last["port"]) if _port_free(int(last["port"])) else 0)
            dns = str(last["dns"]) if _dns_free(str(last["dns"])) else ""
            crs = int(last.get("crs", 0)) if _port_free(int(last.get("crs", 0))) else 0
        port, dns = port or free_tcp_port(), dns or free_dns_address()
        self.crs_port = crs or free_tcp_port()
        saved.write_text(json.dumps({"port": port, "dns": dns, "crs": self.crs_port}))
        return port, dns

    def start(self, policy: squidconf.Policy) -> PlaneStatus:
        """Start dnsmasq then Squid with `policy`, both supervised; returns `status()`."""
        with self._lock:
            self._acl_entries, self._sinkhole, self._blocklist, self._pages = {}, None, None, set()  # render all once
            self._prepare()
            _reap_previous_owner(self.root)
            self.port, self.dns = self._listen()
            self._write(policy)
            self._undo = {}
            self.policy = policy
            self.supervisor = SupervisorThread("webfilter-dataplane")
            try:
                self.supervisor.start(self._supervised("dnsmasq", self._spawn_dnsmasq, self._probe_dnsmasq))
                if squidconf.crs_on(policy):
                    self._configure_crs(policy)  # needs dnsmasq (its resolver); Squid then names its port
                    self._write(policy)
                self._check_parse()
                self.supervisor.start(self._supervised("squid", self._spawn_squid, self._probe_squid))
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
        script = (
            f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
            f'for f in "{run}/squid.pid" "{run}/dnsmasq.pid"; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done'
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
        """Render dnsmasq's files that changed (its configuration, the static names, the blocklist)."""
        dns_dir = self.root / "dns"
        self.dns_conf_changed = self._put(
            dns_dir / "dnsmasq.conf",
            squidconf.dnsmasq_conf(
                policy,
                own=self.dns,
                hosts=dns_dir / "hosts",
                pid_file=self.root / "run" / "dnsmasq.pid",
                query_log=self.dns_log,
                as_root=os.geteuid() == 0,
            ),
        )
        self.hosts_changed = False
        if self._sinkhole is None:  # the static names, once per start (blocking is in blocklist.conf)
            self.hosts_changed = self._put(dns_dir / "hosts", squidconf.hosts_file(self.config.hosts, []))
            self._sinkhole = []
        blocklist = squidconf.dns_blocklist(policy)
        if blocklist != self._blocklist:
            self.dns_conf_changed |= self._put(dns_dir / "blocklist.conf", blocklist)
            self._blocklist = blocklist
        return self.dns_conf_changed  # a changed hosts file alone needs only a SIGHUP

    def _check_parse(self) -> None:
        done = subprocess.run(
            [self.config.squid_bin, "-k", "parse", "-f", str(self.conf_path)], capture_output=True, timeout=60
        )
        if done.returncode != 0:
            lines = [ln for ln in done.stderr.decode(errors="replace").splitlines() if "FATAL" in ln or "ERROR" in ln]
            raise DataPlaneError("squid refused the configuration: " + "; ".join(lines[-3:]))

    def _check_dnsmasq(self) -> None:
        done = subprocess.run(
            [self.config.dnsmasq_bin, "--test", "-C", str(self.root / "dns" / "dnsmasq.conf")],
            capture_output=True,
            timeout=30,
        )
        if done.returncode != 0:
            words = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()[-1:]
            raise DataPlaneError("dnsmasq refused the configuration: " + "; ".join(words))

    def apply(self, policy: squidconf.Policy) -> dict[str, Any]:
        """Render `policy` as a candidate, DNS first: dnsmasq's files are rendered, a changed dnsmasq candidate
        is tested (`dnsmasq --test`) and dnsmasq restarted with it (it reads `address=` lines only at start), so
        a blocklist edit is answered without waiting for Squid's files and Squid's parse of every ACL file; then
        Squid's files are rendered and its changed candidate parsed (`squid -k parse`) before any signal. A candidate either refuses is undone file by file (dnsmasq restarted again
        on the restored files when it had taken the candidate) and DataPlaneError is raised: the running Squid
        (and a supervised restart of it) keeps the last good configuration. Then Squid is reconfigured. While
        a child is being restarted the files are still written: the restarted process reads them."""
        with self._lock:
            started = time.perf_counter()
            self._undo = {}
            self._configure_crs(policy)
            dns_taken = False  # dnsmasq was (being) restarted on the candidate
            try:
                self._check_listeners(policy)
                changed = self._write_dns(policy)
                dns_rendered = time.perf_counter()
                if self.dns_conf_changed:
                    self._check_dnsmasq()
                    dns_taken = True
                    self._restart_child("dnsmasq")
                dns_ready = time.perf_counter()
                changed = self._write_squid(policy) or changed
                rendered = time.perf_counter()
                if self.squid_changed:
                    self._check_parse()
                checked = time.perf_counter()
            except DataPlaneError as exc:
                self._rollback()
                if dns_taken:
                    self._restart_dnsmasq_on_the_last_good()
                if self.policy is not None:
                    self._configure_crs(self.policy)
                raise DataPlaneError(f"{exc}; the last good configuration keeps running") from None
            self._undo = {}
            self.policy = policy
            if self.hosts_changed and not self.dns_conf_changed:
                self.reload_dns()
            reconfigure_s = 0.0
            if self.squid_changed and self.running():
                reconfigure_s = self.reconfigure(check=False)
                self.bumping = policy.ssl_bump
            if not squidconf.crs_on(policy):
                self._stop_crs()  # once Squid no longer sends it anything
            self.last_apply = {
                "changed": changed,
                "render_ms": round((dns_rendered - started + rendered - dns_ready) * 1000, 2),  # dnsmasq's + Squid's
                "parse_checked": self.squid_changed,
                "dns_restarted": self.dns_conf_changed,
                "dns_restart_ms": round((dns_ready - dns_rendered) * 1000, 2),  # dnsmasq --test and the restart
                "dns_ready_ms": round((dns_ready - started) * 1000, 2),  # the edit answered in DNS
                "parse_ms": round((checked - rendered) * 1000, 2),  # squid -k parse
                "reconfigure_ms": round(reconfigure_s * 1000, 2),
                "total_ms": round((time.perf_counter() - started) * 1000, 2),
                "at": time.time(),
            }
            return self.last_apply

    def _restart_dnsmasq_on_the_last_good(self) -> None:
        """After a rollback: dnsmasq took the refused candidate (or failed to start on it): start it again on
        the restored files."""
        try:
            self._restart_child("dnsmasq")
        except DataPlaneError:
            log.error("dnsmasq did not restart on the last good configuration", extra={"root": str(self.root)})

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
            "last_apply": self.last_apply,
            "ssl_bump": bumping,
            "ssl_bump_ca_sha256": tlsfiles.ca_digest(self.tls) if self.tls and bumping else None,
            "children": self.children(),
        }

    def stop(self) -> None:
        """End both children (their supervisors first, so nothing restarts them) and the watchdog."""
        if self.crs is not None and self.supervisor is not None:
            with contextlib.suppress(Exception):
                self._stop_crs()
        supervisor, self.supervisor = self.supervisor, None
        if supervisor is not None:
            for name in ("squid", "dnsmasq"):  # Squid first: it resolves through dnsmasq
                with contextlib.suppress(Exception):
                    supervisor.stop(name)
            supervisor.close()
        if self.watchdog is not None:
            self.watchdog.kill()
            self.watchdog.wait()
            self.watchdog = None
        if self.fallback:
            shutil.rmtree(self.root, ignore_errors=True)


def _bindable(kind: int, host: str, port: int, what: str) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, kind) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            reason = "is not an address of this node" if exc.errno == errno.EADDRNOTAVAIL else "is taken"
            raise DataPlaneError(f"{what} {reason} ({exc.strerror})") from None


def _pid_of(path: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text().split()[0])
    return None


def _reap_previous_owner(root: Path) -> None:
    """A previous owner of this folder that was killed (its actor restarted) may have left its watchdog,
    Squid and dnsmasq behind for up to a second: end them now, so this owner gets the same port and its
    new children are not killed by the old watchdog. Only processes whose command line names this folder."""
    run = root / "run"
    for name in ("watchdog.pid", "squid.pid", "dnsmasq.pid"):
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
