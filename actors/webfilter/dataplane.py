"""Squid and dnsmasq processes on loopback: started, reconfigured and stopped by their owner.

Layout of the state folder: ``acl/`` (ACL files), ``errors/`` (Squid's templates plus the
policy pages), ``logs/`` (access.log, cache.log), ``run/`` (pid files), ``dns/``
(dnsmasq.conf, hosts), ``tls/`` and ``ssl_db/`` (TLS interception, see tlsfiles). Squid
drops to its own user when started as root, so ``logs/``, ``run/`` and the TLS folders belong
to that user. dnsmasq has no upstream (`no-resolv`): it answers the configured test names and
the sinkholed blacklist, nothing leaves the machine.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from actors.webfilter import squidconf, tlsfiles

TEMPLATES = Path("/usr/share/squid/errors/templates")


@dataclass(frozen=True)
class ProxySettings:
    """How to run the data plane (the `proxy` section of the component's config)."""

    squid_bin: str = "/usr/sbin/squid"
    dnsmasq_bin: str = "/usr/sbin/dnsmasq"
    port: int = 0
    cache_mem_mb: int = 32
    hosts: dict[str, str] = field(default_factory=dict)
    user: str = "proxy"
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
    last_apply: dict[str, Any]  # timings of the last apply (empty before the first one)
    ssl_bump: bool  # Squid runs a bumping configuration now
    ssl_bump_ca_sha256: str | None


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
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, socket.socket() as tcp:
                udp.bind((addr, 53))
                tcp.bind((addr, 53))
        except OSError:
            continue
        return addr
    raise DataPlaneError("no free loopback address for dnsmasq on port 53")


def _write_atomic(path: Path, text: str) -> bool:
    """Replace `path` with `text` via a temporary file; False when the content is unchanged."""
    if path.exists() and path.read_text() == text:
        return False
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return True


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.3)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class DataPlane:
    """One Squid and one dnsmasq for a state folder."""

    def __init__(self, root: Path, config: ProxySettings) -> None:
        self.config = config
        self.user = config.user if os.geteuid() == 0 else None
        self.fallback = False
        self.conf_changed = False
        self.watchdog: subprocess.Popen[bytes] | None = None
        self.root = self._reachable(Path(root))
        self.port = 0
        self.dns = ""
        self.squid: subprocess.Popen[bytes] | None = None
        self.dnsmasq: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.last_apply: dict[str, Any] = {}
        self.hosts_changed = False
        self.tls: squidconf.TlsFiles | None = None
        self.bumping = False  # the configuration Squid runs has ssl-bump
        # what the files on disk were last rendered from (the entries, in the policy's order)
        self._acl_entries: dict[str, list[str]] = {}
        self._sinkhole: list[str] | None = None
        self._pages: set[str] = set()

    def _reachable(self, root: Path) -> Path:
        """`root`, or a private folder under the system temporary folder when Squid's own user could not
        traverse the way to `root` (e.g. a 0700 home or pytest folder)."""
        root.mkdir(parents=True, exist_ok=True)
        if not self.user or all(os.stat(f).st_mode & 0o001 for f in [root, *root.parents]):
            return root
        base = Path(tempfile.gettempdir()) / "rayfleet-webfilter"
        base.mkdir(mode=0o711, exist_ok=True)
        os.chmod(base, 0o711)
        folder = Path(tempfile.mkdtemp(prefix=root.parent.name + "-", dir=base))
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

    def _spawn(self, argv: list[str], log_name: str) -> subprocess.Popen[bytes]:
        with open(self.root / "logs" / log_name, "ab") as log:
            return subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent
            )

    def start(self, policy: squidconf.Policy) -> PlaneStatus:
        """Start dnsmasq then Squid with `policy`; returns `status()`."""
        self._acl_entries, self._sinkhole, self._pages = {}, None, set()  # render everything once
        self._prepare()
        self.dns = free_dns_address()
        self.port = self.config.port or free_tcp_port()
        dns_dir = self.root / "dns"
        (dns_dir / "dnsmasq.conf").write_text(
            "\n".join(
                [
                    "port=53",
                    f"listen-address={self.dns}",
                    "bind-interfaces",
                    "no-resolv",
                    "no-hosts",
                    "local-ttl=5",
                    f"addn-hosts={dns_dir / 'hosts'}",
                    f"pid-file={self.root / 'run' / 'dnsmasq.pid'}",
                    "user=root" if os.geteuid() == 0 else "",
                ]
            )
            + "\n"
        )
        self._write(policy)
        self.dnsmasq = self._spawn([self.config.dnsmasq_bin, "-k", "-C", str(dns_dir / "dnsmasq.conf")], "dnsmasq.log")
        self._check_parse()
        self.squid = self._spawn([self.config.squid_bin, "-N", "-f", str(self.conf_path)], "squid.out")
        deadline = time.monotonic() + 20
        while not _port_open(self.port):
            if self.squid.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise DataPlaneError(f"squid did not start; see {self.root / 'logs' / 'cache.log'}")
            time.sleep(0.05)
        self.started_at = time.time()
        self.bumping = policy.ssl_bump
        self._start_watchdog()
        return self.status()

    def _start_watchdog(self) -> None:
        """Squid and dnsmasq change credentials, which clears PR_SET_PDEATHSIG: a small shell loop stops them
        (by their pid files) when this process is gone."""
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

    def _write(self, policy: squidconf.Policy) -> bool:
        """Render what changed since the last call: an ACL file whose entries are the same is neither
        rendered nor read back nor written (a list edit renders one file, not all of them)."""
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
            changed |= _write_atomic(self.root / "acl" / name, squidconf.render_acl(source))
            self._acl_entries[name] = entries
        for rule in [*squidconf.REASONS, *(f"waf:{c}" for c in policy.waf_categories)]:
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
        )
        self.conf_changed = _write_atomic(self.conf_path, conf)
        changed |= self.conf_changed
        sinkhole = policy.domain_blacklist if policy.enable_domain_blacklist else []
        exempt = set(policy.domain_whitelist)
        sinkhole = [d for d in sinkhole if d not in exempt]
        self.hosts_changed = False
        if sinkhole != self._sinkhole:
            self.hosts_changed = _write_atomic(
                self.root / "dns" / "hosts", squidconf.hosts_file(self.config.hosts, sinkhole)
            )
            self._sinkhole = sinkhole
        return changed

    def _check_parse(self) -> None:
        done = subprocess.run(
            [self.config.squid_bin, "-k", "parse", "-f", str(self.conf_path)], capture_output=True, timeout=60
        )
        if done.returncode != 0:
            lines = [ln for ln in done.stderr.decode(errors="replace").splitlines() if "FATAL" in ln or "ERROR" in ln]
            raise DataPlaneError("squid refused the configuration: " + "; ".join(lines[-3:]))

    def apply(self, policy: squidconf.Policy) -> dict[str, Any]:
        """Render `policy`; reconfigure Squid and reload dnsmasq when something changed. A changed squid.conf
        is checked with `squid -k parse` first; changed ACL files alone are not (their entries are validated
        before they are stored), which halves the propagation time of a list edit."""
        started = time.perf_counter()
        changed = self._write(policy)
        rendered = time.perf_counter()
        reconfigure_s = 0.0
        if changed and self.running():
            reconfigure_s = self.reconfigure(check=self.conf_changed)
            self.bumping = policy.ssl_bump
        if self.hosts_changed:
            self.reload_dns()
        self.last_apply = {
            "changed": changed,
            "render_ms": round((rendered - started) * 1000, 2),
            "parse_checked": self.conf_changed,
            "reconfigure_ms": round(reconfigure_s * 1000, 2),
            "total_ms": round((time.perf_counter() - started) * 1000, 2),
            "at": time.time(),
        }
        return self.last_apply

    def reconfigure(self, check: bool = True) -> float:
        """Check, signal, and wait until Squid listens again with the new configuration (it closes its
        port while reconfiguring). Returns the seconds the reconfiguration took."""
        if check:
            self._check_parse()
        cache_log = self.root / "logs" / "cache.log"
        mark = cache_log.stat().st_size if cache_log.exists() else 0
        started = time.monotonic()
        # SIGHUP is what `squid -k reconfigure` sends, but that command first parses the whole configuration
        # (every ACL file) itself just to find the pid file: signalling our own child skips a second parse
        if self.squid is None or not self.running():
            raise DataPlaneError("squid is not running")
        self.squid.send_signal(signal.SIGHUP)
        deadline = started + 30
        while time.monotonic() < deadline and self.running():
            with open(cache_log, "rb") as fh:
                fh.seek(mark)
                # "Accepting HTTP Socket connections", or "Accepting SSL bumped HTTP ..." with ssl-bump
                if b"HTTP Socket connections at" in fh.read() and _port_open(self.port):
                    break
            time.sleep(0.01)
        else:
            raise DataPlaneError("squid did not come back after reconfigure; see cache.log")
        return time.monotonic() - started

    def reload_dns(self) -> bool:
        if self.dnsmasq is None or self.dnsmasq.poll() is not None:
            return False
        self.dnsmasq.send_signal(signal.SIGHUP)
        return True

    def restart_squid(self) -> PlaneStatus:
        """Stop and start Squid: the only way to empty its memory cache at once."""
        self._stop_squid()
        self._check_parse()
        self.squid = self._spawn([self.config.squid_bin, "-N", "-f", str(self.conf_path)], "squid.out")
        deadline = time.monotonic() + 20
        while not _port_open(self.port):
            if self.squid.poll() is not None or time.monotonic() > deadline:
                raise DataPlaneError("squid did not restart")
            time.sleep(0.05)
        self.started_at = time.time()
        return self.status()

    def running(self) -> bool:
        return self.squid is not None and self.squid.poll() is None

    def status(self) -> PlaneStatus:
        bumping = self.bumping and self.running()
        return {
            "running": self.running(),
            "proxy": f"127.0.0.1:{self.port}" if self.port else None,
            "port": self.port,
            "dns": self.dns,
            "dns_running": self.dnsmasq is not None and self.dnsmasq.poll() is None,
            "squid_pid": self.squid.pid if self.squid else None,
            "started_at": self.started_at,
            "access_log": str(self.access_log),
            "last_apply": self.last_apply,
            "ssl_bump": bumping,
            "ssl_bump_ca_sha256": tlsfiles.ca_digest(self.tls) if self.tls and bumping else None,
        }

    def _stop_squid(self) -> None:
        if self.squid is not None and self.squid.poll() is None:
            self.squid.terminate()
            try:
                self.squid.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.squid.kill()
                self.squid.wait()
        self.squid = None

    def stop(self) -> None:
        self._stop_squid()
        if self.dnsmasq is not None and self.dnsmasq.poll() is None:
            self.dnsmasq.terminate()
            self.dnsmasq.wait(timeout=5)
        self.dnsmasq = None
        if self.watchdog is not None:
            self.watchdog.kill()
            self.watchdog.wait()
            self.watchdog = None
        if self.fallback:
            shutil.rmtree(self.root, ignore_errors=True)
