"""Test certificates for loopback HTTPS origins (a CA of their own, leaf certificates it signs) and a
loopback address with a free port 443 (Squid lets CONNECT reach 443 and 8443 only). Used by the TLS
interception tests and bench/webfilter_tls.py."""

from __future__ import annotations

import datetime as dt
import random
import socket
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

Key = ec.EllipticCurvePrivateKey


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def new_key() -> Key:
    return ec.generate_private_key(ec.SECP256R1())


def issue(subject: str, key: Key, issuer: tuple[x509.Certificate, Key] | None, names: list[str]) -> x509.Certificate:
    """A CA certificate (`issuer` None: self-signed) or a leaf for `names` signed by `issuer`; valid 2 days."""
    now = dt.datetime.now(dt.UTC)
    issuer_name, issuer_key = (issuer[0].subject, issuer[1]) if issuer else (_name(subject), key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=2))
    )
    if issuer is None:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    else:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def write_pair(folder: Path, tag: str, cert: x509.Certificate, key: Key) -> tuple[Path, Path]:
    """`<tag>.pem` and `<tag>.key` in `folder` (readable: test material only)."""
    cert_path, key_path = folder / f"{tag}.pem", folder / f"{tag}.key"
    cert_path.write_bytes(pem(cert))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def free_https_address() -> str:
    """A 127.x address whose TCP port 443 is free (PermissionError when this process may not bind it)."""
    for _ in range(50):
        address = f"127.44.{random.randint(1, 254)}.{random.randint(1, 254)}"
        try:
            with socket.socket() as sock:
                sock.bind((address, 443))
        except PermissionError:
            raise
        except OSError:
            continue
        return address
    raise RuntimeError("no loopback address with a free port 443")
