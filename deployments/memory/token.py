"""The REST server's token: MEM_SERVE_TOKEN, else `<db-dir>/serve-token`, generated once.

The file is written atomically with mode 0600 whatever the umask: a private
temporary file is filled, fsynced, then hard-linked to its final name. The link
fails if another process created the token first, in which case that token
is used, so two servers started at once agree on one token.
"""

from __future__ import annotations

import os
import secrets
import stat

from deployments.memory.errors import StorageError

TOKEN_FILE = "serve-token"


def token_path(db_dir: str) -> str:
    return os.path.join(db_dir, TOKEN_FILE)


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        token = fh.read().strip()
    if not token:
        raise StorageError(f"token file {path} is empty; delete it to generate a new token")
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:
        os.chmod(path, 0o600)
    return token


def _create(path: str) -> str:
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)
    token = secrets.token_hex(24)
    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (token + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return _read(path)
    finally:
        os.unlink(tmp)
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return token


def resolve_token(env_token: str, db_dir: str) -> tuple[str, str]:
    """(token, source) with source `env`, `file` or `generated`."""
    if env_token:
        return env_token, "env"
    path = token_path(db_dir)
    try:
        if os.path.exists(path):
            return _read(path), "file"
        token = _create(path)
    except OSError as exc:
        raise StorageError(f"cannot read or create {path}: {exc.strerror or exc}") from exc
    return token, "generated"
