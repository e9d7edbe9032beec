"""The TLS interception CA (generated with `cryptography`) and the checks of check-cert-security.

Squid bumps HTTPS with this CA when the setting `ssl_bump_enabled` is on (see actors/webfilter/tlsfiles.py)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

VALID_DAYS = 3650


def ensure_ca(folder: Path) -> tuple[Path, Path]:
    """Create `ca.pem` / `ca.key` (RSA 3072, mode 0600 key) once; returns their paths.

    The pair is written into a private temporary folder renamed to `folder` in one step, so replicas
    starting together end up with one CA whose key and certificate match (the loser's pair is dropped)."""
    cert_path, key_path = folder / "ca.pem", folder / "ca.key"
    if cert_path.exists() and key_path.exists():
        return cert_path, key_path
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".ca-", dir=folder.parent))
    try:
        _write_ca(staging)
        if folder.exists() and not any(folder.iterdir()):
            folder.rmdir()  # an empty folder left by an earlier version
        os.rename(staging, folder)
    except OSError:
        if not (cert_path.exists() and key_path.exists()):
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return cert_path, key_path


def _write_ca(folder: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=3072)
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, "rayfleet webfilter interception CA"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "rayfleet"),
        ]
    )
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    fd = os.open(folder / "ca.key", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    (folder / "ca.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def check(cert_path: Path, key_path: Path) -> dict[str, Any]:
    """Real findings about the CA: key size, signature, validity, constraints, key file mode, pairing."""
    findings: list[dict[str, str]] = []

    def add(severity: str, check_name: str, message: str) -> None:
        findings.append({"severity": severity, "check": check_name, "message": message})

    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    public = cert.public_key()
    size = getattr(public, "key_size", 0)
    if size < 2048:
        add("high", "key_size", f"RSA key of {size} bits (< 2048)")
    algo = cert.signature_hash_algorithm.name if cert.signature_hash_algorithm else "none"
    if algo in ("md5", "sha1"):
        add("high", "signature", f"signed with {algo}")
    now = dt.datetime.now(dt.UTC)
    days_left = (cert.not_valid_after_utc - now).days
    if days_left < 0:
        add("high", "expiry", "certificate expired")
    elif days_left < 30:
        add("medium", "expiry", f"certificate expires in {days_left} days")
    try:
        constraints = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
        if not constraints.ca:
            add("high", "basic_constraints", "certificate is not a CA")
    except x509.ExtensionNotFound:
        add("high", "basic_constraints", "no BasicConstraints extension")
    mode = stat.S_IMODE(key_path.stat().st_mode)
    if mode & 0o077:
        add("high", "key_permissions", f"private key readable by others (mode {oct(mode)})")
    if key.public_key().public_numbers() != public.public_numbers():  # type: ignore[union-attr]
        add("high", "key_pair", "private key does not match the certificate")
    return {
        "subject": cert.subject.rfc4514_string(),
        "key_size": size,
        "signature_hash": algo,
        "not_after": cert.not_valid_after_utc.isoformat(),
        "days_left": days_left,
        "key_mode": oct(mode),
        "findings": findings,
        "ok": not any(f["severity"] == "high" for f in findings),
    }
