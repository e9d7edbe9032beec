"""A node's Ed25519 identity: the node id is derived from the public key."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey


def node_id_of(public_key_b64: str) -> str:
    """`tn` + the first 32 hex digits of SHA-256 over the raw public key."""
    raw = base64.b64decode(public_key_b64, validate=True)
    return "tn" + hashlib.sha256(raw).hexdigest()[:32]


def verify(public_key_b64: str, message: bytes, signature_b64: str) -> bool:
    """True when `signature_b64` is the key's Ed25519 signature of `message`."""
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key_b64, validate=True))
        key.verify(base64.b64decode(signature_b64, validate=True), message)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


class Identity:
    """A private key and what derives from it."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        raw = private_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.public_key = base64.b64encode(raw).decode()
        self.node_id = node_id_of(self.public_key)

    @classmethod
    def generate(cls) -> Identity:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def load_or_create(cls, path: Path) -> Identity:
        """The key at `path` (raw 32 bytes, mode 0600), created on first use."""
        if path.exists():
            return cls(Ed25519PrivateKey.from_private_bytes(path.read_bytes()))
        identity = cls.generate()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, identity.private_bytes())
        finally:
            os.close(fd)
        return identity

    def private_bytes(self) -> bytes:
        return self._key.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )

    def sign(self, message: bytes) -> str:
        return base64.b64encode(self._key.sign(message)).decode()

    def secret_seed(self, purpose: str) -> bytes:
        """A secret derived from the private key for one purpose (ring key, sealing key)."""
        return hashlib.sha256(b"tasknet:" + purpose.encode() + b":" + self.private_bytes()).digest()
