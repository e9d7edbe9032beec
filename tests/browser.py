"""Headless Chromium for the UI tests: the system browser driven through Playwright."""

from __future__ import annotations

import os

import pytest

from tests.conftest import in_ci

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> None:
    """Skip (fail in CI) when Playwright or the system Chromium is missing."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError as exc:
        message = f"playwright is not installed: {exc}"
    else:
        if os.path.exists(CHROMIUM):
            return
        message = f"{CHROMIUM} missing (scripts/system-deps.sh installs the chromium package)"
    pytest.fail(message) if in_ci() else pytest.skip(message)
