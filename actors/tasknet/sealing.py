"""Tool credentials sealed to each participant of a channel (X25519 + HKDF-SHA256 + AES-256-GCM).

Only the participants' private keys open a sealed credential; nothing public derives
the key (the anchor derived it from the channel id and the node id, both public).
"""

from __future__ import annotations

import base64
import os

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

RAW = serialization.Encoding.Raw


def _key(shared: bytes, context: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=context.encode()).derive(shared)


class SealKey:
    def __init__(self, seed: bytes) -> None:
        self._private = X25519PrivateKey.from_private_bytes(seed[:32])
        self.public = base64.b64encode(
            self._private.public_key().public_bytes(RAW, serialization.PublicFormat.Raw)
        ).decode()

    def open(self, blob: str, context: str) -> bytes:
        raw = base64.b64decode(blob)
        ephemeral, nonce, ciphertext = raw[:32], raw[32:44], raw[44:]
        shared = self._private.exchange(X25519PublicKey.from_public_bytes(ephemeral))
        return AESGCM(_key(shared, context)).decrypt(nonce, ciphertext, context.encode())


def seal(recipient_public: str, plaintext: bytes, context: str) -> str:
    ephemeral = X25519PrivateKey.generate()
    shared = ephemeral.exchange(X25519PublicKey.from_public_bytes(base64.b64decode(recipient_public)))
    nonce = os.urandom(12)
    ciphertext = AESGCM(_key(shared, context)).encrypt(nonce, plaintext, context.encode())
    eph_raw = ephemeral.public_key().public_bytes(RAW, serialization.PublicFormat.Raw)
    return base64.b64encode(eph_raw + nonce + ciphertext).decode()
