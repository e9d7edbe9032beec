"""Secret settings at rest: AES-256-GCM, stored as ``enc::<base64(nonce | ciphertext)>``.

The key is derived (HKDF-SHA256) from ``API_SECRET_KEY`` when it is set, else it is a random key
generated once into ``<data_dir>/settings.key`` (mode 0600) with a warning. The setting's name is the
associated data, so a ciphertext copied onto another setting does not open. A value that does not open
with the current key (the key changed since it was stored) is a `SecretUnreadable` naming the setting,
never the value.
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from rayfleet.logs import get_logger
from rayfleet.secrets import load_or_create_key

PREFIX = "enc::"
KEY_FILE = "settings.key"
_INFO = b"rayfleet webfilter secret settings v1"
log = get_logger("webfilter")


class SecretUnreadable(ValueError):
    """A stored secret does not open with the current key."""


class SecretBox:
    def __init__(self, key: bytes, source: str) -> None:
        if len(key) != 32:
            raise ValueError("AES-256 needs a 32-byte key")
        self._aead = AESGCM(key)
        self.source = source

    @classmethod
    def derive(cls, api_secret_key: str, source: str = "API_SECRET_KEY") -> SecretBox:
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(api_secret_key.encode())
        return cls(key, source)

    @classmethod
    def for_data_dir(cls, api_secret_key: str | None, data_dir: Path) -> SecretBox:
        """From `API_SECRET_KEY`, else from the key file in `data_dir` (generated with a warning)."""
        if api_secret_key:
            return cls.derive(api_secret_key)
        path = data_dir / KEY_FILE
        text, created = load_or_create_key(path, lambda: secrets.token_hex(32).encode())
        if created:
            log.warning(
                f"API_SECRET_KEY is not set: secret settings are encrypted with a generated key kept in {path} "
                "(mode 0600); set API_SECRET_KEY on every node of a multi-node cluster"
            )
        try:
            return cls(bytes.fromhex(text.decode()), str(path))
        except ValueError:
            raise ValueError(f"{path} does not hold a 64-hex-digit key") from None

    def seal(self, name: str, plaintext: str) -> str:
        nonce = os.urandom(12)
        sealed = self._aead.encrypt(nonce, plaintext.encode(), name.encode())
        return PREFIX + base64.b64encode(nonce + sealed).decode()

    def open(self, name: str, stored: str) -> str:
        try:
            raw = base64.b64decode(stored.removeprefix(PREFIX), validate=True)
            return self._aead.decrypt(raw[:12], raw[12:], name.encode()).decode()
        except (InvalidTag, binascii.Error, ValueError):
            raise SecretUnreadable(
                f"the stored value of {name} cannot be decrypted with the current key ({self.source}): "
                "the key changed since it was stored; set the setting again"
            ) from None


def is_sealed(stored: str) -> bool:
    return stored.startswith(PREFIX)
