"""Small pieces shared by the simulated tools: results, errors, option parsing."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass

BOOL_TRUE = {"1", "yes", "true", "on"}
BOOL_WORDS = BOOL_TRUE | {"0", "no", "false", "off"}


@dataclass
class Result:
    stdout: str = ""
    stderr: str = ""
    rc: int = 0


class ToolError(Exception):
    """A tool dying with a message (PVE tools print it on stderr and exit 255)."""

    def __init__(self, message: str, rc: int = 255, stdout: str = "") -> None:
        super().__init__(message)
        self.message = message if message.endswith("\n") else message + "\n"
        self.rc = rc
        self.stdout = stdout


PROGRESS: ContextVar[Callable[[str], None] | None] = ContextVar("pve_sim_progress", default=None)
"""Where a running tool writes its log as it goes (the SSH channel's stderr), when it has one."""


class Log(list[str]):
    """A tool's log lines: written to the channel as they are made when the command runs over
    SSH (so a client sees progress), else kept for the result."""

    def append(self, line: str) -> None:
        sink = PROGRESS.get()
        if sink is None:
            super().append(line)
        else:
            sink(line + "\n")


def param_error(param: str, message: str) -> ToolError:
    return ToolError(f"400 Parameter verification failed.\n{param}: {message}\n")


def parse_options(args: list[str], schema: dict[str, str], usage: str = "") -> tuple[list[str], dict[str, str]]:
    """Split PVE-style ``positional... --key value`` arguments.

    `schema` maps option name to one of ``bool``, ``int``, ``num``, ``str``.
    A boolean option may stand alone (`--purge`) or take a value (`--purge 1`).
    """
    positional: list[str] = []
    options: dict[str, str] = {}
    i = 0
    while i < len(args):
        word = args[i]
        if word.startswith("--") and len(word) > 2:
            key = word[2:]
            value: str | None = None
            if "=" in key:
                key, value = key.split("=", 1)
            if key not in schema:
                raise ToolError(f"Unknown option: {key}\n400 unable to parse option\n{usage}".rstrip())
            kind = schema[key]
            if value is None:
                nxt = args[i + 1] if i + 1 < len(args) else None
                if kind == "bool":
                    if nxt is not None and nxt.lower() in BOOL_WORDS:
                        value = nxt
                        i += 1
                    else:
                        value = "1"
                else:
                    if nxt is None:
                        raise ToolError(f"missing value for '{key}' option\n400 unable to parse option")
                    value = nxt
                    i += 1
            _check_type(key, kind, value)
            if kind == "bool":
                value = "1" if value.lower() in BOOL_TRUE else "0"
            options[key] = value
        else:
            positional.append(word)
        i += 1
    return positional, options


def _check_type(key: str, kind: str, value: str) -> None:
    if kind == "int":
        try:
            int(value)
        except ValueError:
            raise param_error(key, f"type check ('integer') failed - got '{value}'") from None
    elif kind == "num":
        try:
            float(value)
        except ValueError:
            raise param_error(key, f"type check ('number') failed - got '{value}'") from None
    elif kind == "bool" and value.lower() not in BOOL_WORDS:
        raise param_error(key, f"type check ('boolean') failed - got '{value}'")


def require_positional(positional: list[str], names: Iterable[str], usage: str) -> list[str]:
    names = list(names)
    if len(positional) < len(names):
        missing = names[len(positional)]
        raise ToolError(f"400 not enough arguments\n{usage}") if missing else ToolError(usage)
    if len(positional) > len(names):
        raise ToolError(f"400 too many arguments\n{usage}")
    return positional


def check_vmid(vmid: str) -> str:
    if not vmid.isdigit() or not (100 <= int(vmid) <= 999999999):
        raise param_error("vmid", "invalid format - value does not look like a valid VM ID")
    return str(int(vmid))


def table(rows: list[list[str]], widths: list[int]) -> str:
    """Fixed-width columns the way the PVE CLIs print them (`%-Ns` each)."""
    out = []
    for row in rows:
        out.append(" ".join(f"{cell:<{w}}" for cell, w in zip(row, widths, strict=False)))
    return "\n".join(out) + "\n"
