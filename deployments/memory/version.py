"""Version of the installed `mem` (the rayfleet distribution), read lazily."""

from __future__ import annotations


def version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version
    except ImportError:  # pragma: no cover - always present on Python 3.11
        return "unknown"
    try:
        return dist_version("rayfleet")
    except PackageNotFoundError:
        return "unknown"
