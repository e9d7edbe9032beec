"""Where rayfleet keeps its files: `RAYFLEET_HOME` (default: the working directory)."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """The project directory that relative config and data paths are resolved against."""
    return Path(os.environ.get("RAYFLEET_HOME") or os.getcwd()).resolve()


def resolve(path: str | Path) -> Path:
    """`path` made absolute against :func:`home` (absolute paths are kept)."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else home() / p


def var_dir(*parts: str) -> Path:
    """A folder under ``<home>/var``, created on first use."""
    d = home().joinpath("var", *parts)
    d.mkdir(parents=True, exist_ok=True)
    return d
