"""The console page opened in headless Chromium (the tier-2 page test and the tier-3 one share it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.browser import ARGS, CHROMIUM, require_chromium
from tests.conftest import ROOT

SCREENSHOTS = ROOT / "var" / "screenshots"


@contextmanager
def console_page(url: str) -> Iterator[tuple[Any, list[str]]]:
    """(the page at ``url``, the script errors it raised so far); skips (fails in CI) without Chromium."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(url)
            yield page, errors
        finally:
            browser.close()


def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True)
