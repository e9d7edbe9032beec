"""Demo secrets: generated once into ``var/secrets.env`` (mode 0600), then reused.

Each component reads its secret from the environment (the file's names are the
environment variable names), so a production deployment sets them however it
likes and never needs this file.
"""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Callable
from pathlib import Path

DEFAULT_PATH = Path("var/secrets.env")

SECRET_NAMES: dict[str, Callable[[], str]] = {
    "API_SECRET_KEY": lambda: secrets.token_hex(24),
    "LXC_API_KEY": lambda: secrets.token_hex(24),
    "AUTOSCALE_API_KEY": lambda: secrets.token_hex(24),
    "MANAGEMENT_API_KEY": lambda: secrets.token_hex(24),
    # HMAC key that signs the mitigation fleet's webhooks (X-Signature)
    "MITIGATION_WEBHOOK_SECRET": lambda: secrets.token_hex(32),
    "LLM_PROXY_API_KEYS": lambda: "sk-rf-" + secrets.token_hex(20),
    "LLM_PROXY_ADMIN_KEYS": lambda: "sk-rf-admin-" + secrets.token_hex(20),
    # Fernet key that encrypts the gateway registry's upstream API keys at rest
    "LLM_PROXY_REGISTRY_KEY": lambda: base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
    # HMAC key that signs the gateway's control-plane sessions (the same on every node)
    "LLM_PROXY_SESSION_KEY": lambda: secrets.token_hex(32),
    # HMAC key of the gateway's audit chain
    "LLM_PROXY_AUDIT_KEY": lambda: secrets.token_hex(32),
    "TASKNET_NODE_TOKENS": lambda: ",".join(f"n{i}:" + secrets.token_hex(24) for i in range(1, 6)),
    "WEBFILTER_ADMIN_PASSWORD": lambda: "Wf-" + secrets.token_urlsafe(18) + "-9",
}


def read_secrets(path: str | Path = DEFAULT_PATH) -> dict[str, str]:
    """Parse ``NAME=value`` lines; blank lines and ``#`` comments are ignored."""
    p = Path(path)
    if not p.exists():
        return {}
    out: dict[str, str] = {}
    for line in p.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.partition("=")
        out[name.strip()] = value.strip()
    return out


def write_secrets(values: dict[str, str], path: str | Path = DEFAULT_PATH) -> None:
    """Write atomically with mode 0600 whatever the umask."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        body = "".join(f"{k}={v}\n" for k, v in values.items())
        os.write(fd, b"# rayfleet demo secrets: generated on first start, reused after\n")
        os.write(fd, body.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, p)


def ensure_secrets(path: str | Path = DEFAULT_PATH) -> dict[str, str]:
    """Return the demo secrets, generating the missing ones (existing ones are kept)."""
    current = read_secrets(path)
    missing = {name: make() for name, make in SECRET_NAMES.items() if not current.get(name)}
    if missing or not Path(path).exists():
        current.update(missing)
        write_secrets(current, path)
    else:
        os.chmod(path, 0o600)
    return current


def load_or_create_key(path: str | Path, generate: Callable[[], bytes]) -> tuple[bytes, bool]:
    """The key kept in `path`, generated once with `generate()` (mode 0600) when the file is missing.

    The file is created with ``O_EXCL``, so replicas racing on first start all end up
    reading the one key that won. Returns ``(key, created)`` so callers can warn once.
    """
    p = Path(path)
    created = False
    if not p.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(generate())
            created = True
    return p.read_bytes().strip(), created
