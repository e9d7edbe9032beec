"""Certificates of a node's TLS listener: checking a pair, the combined PEM HAProxy reads, a demo pair.

HAProxy's `crt` takes one file holding the certificate (and its chain) followed by the private
key. The node writes it 0600 in its own folder; the key never leaves this module in a message:
every error names what is wrong (which file, which check), never the key's bytes.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


class CertificateError(ValueError):
    """A certificate or key that cannot be served: the message never holds key material."""


@dataclass(frozen=True)
class CertificatePair:
    """A checked certificate chain and its private key, both PEM text."""

    cert_pem: str
    key_pem: str

    @property
    def combined(self) -> str:
        """What HAProxy's `crt` and `set ssl cert` take: the chain, then the key."""
        return self.cert_pem.strip() + "\n" + self.key_pem.strip() + "\n"

    def info(self) -> dict[str, str]:
        return certificate_info(self.cert_pem)


def _leaf(cert_pem: str) -> x509.Certificate:
    try:
        chain = x509.load_pem_x509_certificates(cert_pem.encode())
    except ValueError:
        raise CertificateError("the certificate is not a PEM X.509 certificate") from None
    return chain[0]


def check_pair(cert_pem: str, key_pem: str) -> CertificatePair:
    """The pair, once the key is an unencrypted PEM private key whose public half is the certificate's."""
    leaf = _leaf(cert_pem)
    try:
        key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    except (ValueError, TypeError):
        raise CertificateError("the key is not an unencrypted PEM private key") from None
    if not isinstance(key, PrivateKey):
        raise CertificateError("the key must be RSA or ECDSA")
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    encoding = serialization.Encoding.DER
    if key.public_key().public_bytes(encoding, public) != leaf.public_key().public_bytes(encoding, public):
        raise CertificateError("the key does not match the certificate")
    if leaf.not_valid_after_utc <= datetime.datetime.now(datetime.UTC):
        raise CertificateError(f"the certificate expired on {leaf.not_valid_after_utc.isoformat()}")
    return CertificatePair(cert_pem.strip() + "\n", key_pem.strip() + "\n")


def load_pair(cert_file: str, key_file: str) -> CertificatePair:
    """The checked pair of two files; CertificateError names the file that cannot be read."""
    texts = []
    for label, name in (("cert_file", cert_file), ("key_file", key_file)):
        try:
            texts.append(Path(name).read_text(encoding="ascii"))
        except (OSError, UnicodeDecodeError) as exc:
            raise CertificateError(f"{label} {name!r} cannot be read: {type(exc).__name__}") from None
    return check_pair(texts[0], texts[1])


def certificate_info(cert_pem: str) -> dict[str, str]:
    """Public facts of the leaf certificate (what the API may show)."""
    leaf = _leaf(cert_pem)
    return {
        "serial": format(leaf.serial_number, "X"),
        "subject": leaf.subject.rfc4514_string(),
        "not_after": leaf.not_valid_after_utc.isoformat(),
        "sha256": leaf.fingerprint(hashes.SHA256()).hex(),
    }


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` readable by its owner only, replacing it in one step."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(text)
    os.chmod(tmp, 0o600)
    tmp.replace(path)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def issue(
    common_name: str,
    hosts: list[str],
    issuer: tuple[x509.Certificate, PrivateKey] | None = None,
    is_ca: bool = False,
    days: int = 30,
    rsa_bits: int | None = None,
) -> tuple[x509.Certificate, PrivateKey]:
    """A certificate for `hosts` (DNS names or IP addresses), self-signed or signed by `issuer`; its key
    is P-256, or RSA of `rsa_bits`."""
    key: PrivateKey = rsa.generate_private_key(65537, rsa_bits) if rsa_bits else ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    signer_cert, signer_key = issuer if issuer is not None else (None, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(signer_cert.subject if signer_cert is not None else _name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=is_ca, path_length=None), critical=True)
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(signer_key, hashes.SHA256()), key


def pem_of(cert: x509.Certificate, key: PrivateKey) -> CertificatePair:
    cert_pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return CertificatePair(cert_pem, key_pem)


DEMO_HOSTS = ["localhost", "127.0.0.1", "::1"]


def demo_pair() -> CertificatePair:
    """A self-signed certificate for localhost, 127.0.0.1 and ::1 (`tls: {demo: true}`): for trying
    TLS out; clients must be told to trust it (or not to verify)."""
    return pem_of(*issue("rayfleet mitigation demo", DEMO_HOSTS))


def read_ca_file(name: str) -> list[x509.Certificate]:
    """The CA certificates of a PEM file (at least one); CertificateError when there are none."""
    try:
        text = Path(name).read_bytes()
    except OSError as exc:
        raise CertificateError(f"{name!r} cannot be read: {type(exc).__name__}") from None
    try:
        return x509.load_pem_x509_certificates(text)
    except ValueError:
        raise CertificateError(f"{name!r} holds no PEM certificate") from None
