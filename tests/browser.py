"""Headless Chromium for the UI tests: the system browser driven through Playwright."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, in_ci

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = ROOT / "var" / "screenshots"
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


@contextlib.asynccontextmanager
async def launched_chromium() -> AsyncIterator[Any]:
    """The system Chromium, headless, through Playwright (skipped, or failed in CI, when missing)."""
    require_chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield browser
        finally:
            await browser.close()


@dataclass
class Tab:
    """A browser tab and what went wrong in it: script errors and Content-Security-Policy refusals."""

    page: Any
    problems: list[str] = field(default_factory=list)

    def notice(self) -> Any:
        return self.page.locator("#notice")


def expect(target: Any) -> Any:
    """Playwright's waiting assertion (imported here: require_chromium skips when Playwright is missing)."""
    from playwright.async_api import expect as playwright_expect

    return playwright_expect(target)


async def open_tab(browser: Any) -> Tab:
    context = await browser.new_context(viewport={"width": 1360, "height": 900}, accept_downloads=True)
    tab = Tab(await context.new_page())
    tab.page.on("pageerror", lambda exc: tab.problems.append(f"script error: {exc}"))
    tab.page.on(
        "console",
        lambda m: tab.problems.append(m.text) if "Content Security Policy" in m.text else None,
    )
    return tab


async def screenshot(tab: Tab, name: str) -> Path:
    """The whole page saved as var/screenshots/<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    await tab.page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return path


# what no module of a page may use: markup parsing, code from strings, storage outliving the tab
UNSAFE_SINKS = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|localStorage")


async def served_modules(http: Any, csp: str) -> set[str]:
    """The ES modules a page loads from `static/app.js`, followed through their `./` imports; each must be
    served as JavaScript under `csp`, with no unsafe sink. `http` is an httpx client at the page's base."""
    seen: set[str] = set()
    todo = {"app.js"}
    while todo:
        name = todo.pop()
        seen.add(name)
        r = await http.get(f"/static/{name}")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript"), name
        assert r.headers["content-security-policy"] == csp
        assert not UNSAFE_SINKS.search(r.text), f"{name}: {UNSAFE_SINKS.search(r.text)}"
        todo |= set(re.findall(r'from "\./([\w.-]+\.js)"', r.text)) - seen
    return seen
