"""The files Squid needs for TLS: a copy of the interception CA its own user can read, the certificate
generator's database, and whether the installed Squid can bump at all.

Squid reads `tls-cert` / `tls-key` as its own user (also on `squid -k reconfigure`), and the state
folder is reachable by that user (see dataplane), so the CA is copied there: ``tls/ca.pem`` (0644) and
``tls/ca.key`` (0600), both owned by Squid's user. The copy of the key exists only while bumping is on.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pwd
import subprocess
from pathlib import Path

from actors.webfilter.squidconf import CERT_DB_SIZE, TlsFiles


class TlsSetupError(RuntimeError):
    """The CA or the certificate generator is missing, or this Squid cannot bump."""


@functools.cache
def tls_capable(squid_bin: str, certgen_bin: str) -> bool:
    """Whether this Squid can bump TLS: the OpenSSL build (`squid-openssl`) and its certificate generator."""
    try:
        done = subprocess.run([squid_bin, "-v"], capture_output=True, timeout=10, check=False)
    except OSError:
        return False
    return configure_can_bump(done.stdout.decode(errors="replace")) and os.access(certgen_bin, os.X_OK)


def configure_can_bump(squid_v: str) -> bool:
    """From `squid -v`: built with OpenSSL and the certificate generator (Debian's `squid` is GnuTLS)."""
    return "--with-openssl" in squid_v and "--enable-ssl-crtd" in squid_v


def _copy(source: Path, target: Path, mode: int, owner: pwd.struct_passwd | None) -> None:
    data = source.read_bytes()
    if target.exists() and target.read_bytes() == data:
        return
    tmp = target.with_name(target.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    if owner:
        os.chown(tmp, owner.pw_uid, owner.pw_gid)
    os.replace(tmp, target)


def prepare(
    root: Path,
    *,
    bump: bool,
    squid_bin: str,
    certgen_bin: str,
    ca_cert: str,
    ca_key: str,
    outgoing_cafile: str,
    user: str | None,
) -> TlsFiles:
    """The TLS files under `root`; with `bump`, the CA copied in and the certificate database initialised
    (`security_file_certgen -c`), both owned by `user` (Squid's user when started as root)."""
    tls = root / "tls"
    files = TlsFiles(
        ca_cert=tls / "ca.pem",
        ca_key=tls / "ca.key",
        certgen=certgen_bin,
        cert_db=root / "ssl_db",
        outgoing_cafile=outgoing_cafile,
    )
    if not bump:
        files.ca_key.unlink(missing_ok=True)
        return files
    if not tls_capable(squid_bin, certgen_bin):
        raise TlsSetupError("this Squid cannot bump TLS: install squid-openssl (scripts/system-deps.sh)")
    if not (ca_cert and ca_key):
        raise TlsSetupError("ssl_bump needs the interception CA (ca_cert, ca_key)")
    owner = pwd.getpwnam(user) if user else None
    tls.mkdir(mode=0o700, exist_ok=True)
    if owner:
        os.chown(tls, owner.pw_uid, owner.pw_gid)
    _copy(Path(ca_cert), files.ca_cert, 0o644, owner)
    _copy(Path(ca_key), files.ca_key, 0o600, owner)
    if not files.cert_db.exists():
        done = subprocess.run(
            [certgen_bin, "-c", "-s", str(files.cert_db), "-M", CERT_DB_SIZE], capture_output=True, check=False
        )
        if done.returncode != 0:
            raise TlsSetupError("security_file_certgen -c failed: " + done.stderr.decode(errors="replace")[-300:])
        if owner:
            for folder, _, names in os.walk(files.cert_db):
                for path in [folder, *(os.path.join(folder, n) for n in names)]:
                    os.chown(path, owner.pw_uid, owner.pw_gid)
    return files


def ca_digest(files: TlsFiles) -> str | None:
    """SHA-256 of the CA certificate Squid bumps with."""
    return hashlib.sha256(files.ca_cert.read_bytes()).hexdigest() if files.ca_cert.exists() else None
