"""Debug logging for `mem` (MEM_DEBUG, MEM_LOG_FILE) without importing `logging` at start-up.

Lines go to stderr, and are appended to MEM_LOG_FILE when it is set. The serve
token is never written: `configure` receives it and `debug` masks it.
"""

from __future__ import annotations

import os
import sys
import time

_enabled = False
_log_file = ""
_secrets: list[str] = []


def configure(enabled: bool, log_file: str = "", secrets: tuple[str, ...] = ()) -> None:
    global _enabled, _log_file
    _enabled = enabled or bool(log_file)
    _log_file = log_file
    _secrets[:] = [s for s in secrets if s]


def enabled() -> bool:
    return _enabled


def debug(message: str) -> None:
    if not _enabled:
        return
    for secret in _secrets:
        message = message.replace(secret, "***")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    line = f"{stamp}Z mem[{os.getpid()}] debug: {message}\n"
    sys.stderr.write(line)
    if _log_file:
        try:
            with open(_log_file, "a", encoding="utf-8") as fh:
                fh.write(line)
        except OSError as exc:
            sys.stderr.write(f"mem: warning: cannot write MEM_LOG_FILE: {exc.strerror}\n")
