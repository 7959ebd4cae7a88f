"""Headless Chromium for the screens' browser tests and `croupier bench screens`: Debian's /usr/bin/chromium driven by Playwright, never a downloaded browser.

Playwright (a test extra) drives any Chromium through `executable_path`, so `playwright install` is never
run: the machines are offline, and the browser under test is the distribution's. `.ci/run` installs it
(`apt-get install chromium`); `CROUPIER_CHROMIUM` names another binary.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

__all__ = ["CHROMIUM_ARGS", "chromium_path", "missing", "browser", "wait_for"]

# No network beyond the loopback, nothing shared between runs: a fresh profile every launch.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-background-timer-throttling",
                 "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"]


def chromium_path() -> str | None:
    named = os.environ.get("CROUPIER_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def missing() -> str | None:
    """Why the browser cannot run here (None when it can)."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if chromium_path() is None:
        return ("Chromium is not installed (.ci/run installs Debian's: apt-get install chromium; or set "
                "CROUPIER_CHROMIUM)")
    return None


@asynccontextmanager
async def browser(**context: Any) -> AsyncIterator[Any]:
    """A headless Chromium with a fresh profile; yields a Playwright browser context."""
    from playwright.async_api import async_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError(missing() or "no Chromium")
    profile = tempfile.mkdtemp(prefix="croupier-chromium-")
    try:
        async with async_playwright() as pw:
            ctx = await pw.chromium.launch_persistent_context(profile, executable_path=path, headless=True,
                                                              args=CHROMIUM_ARGS, **context)
            try:
                yield ctx
            finally:
                await ctx.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


async def wait_for(page: Any, expression: str, timeout: float = 10.0, every: float = 0.02) -> Any:
    """Evaluate `expression` in the page until it is truthy; its value, or TimeoutError.

    Playwright's own wait_for_function evaluates a string with eval(), which the pages' Content Security
    Policy forbids (rightly); page.evaluate goes through the debugger protocol, which the policy allows.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await page.evaluate(expression)
        if value:
            return value
        if loop.time() > deadline:
            raise TimeoutError(f"still false after {timeout:g} s: {expression}")
        await asyncio.sleep(every)
