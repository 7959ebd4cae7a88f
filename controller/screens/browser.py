"""Headless Chromium for the screens' browser tests and `croupier bench screens`: Debian's /usr/bin/chromium, never a downloaded browser.

The tests drive it with Playwright (a test extra) through `executable_path`, so `playwright install` is
never run: the machines are offline, and the browser under test is the distribution's. `.ci/run` installs
it (`apt-get install chromium`); `CROUPIER_CHROMIUM` names another binary.

The bench drives it over the DevTools protocol itself (`Chromium`, below): Playwright turns on network
instrumentation in every page, which copies every WebSocket frame to the driver, and with twenty
screens on two cores that copying is what a bench would measure.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

__all__ = ["CHROMIUM_ARGS", "chromium_path", "missing", "browser", "wait_for", "Chromium"]

# No network beyond the loopback, nothing shared between runs: a fresh profile every launch. No omnibox
# popups: Chromium preloads two WebUI pages per window for the address bar a screen never shows, and in
# headless mode their shared renderer kept a core busy once there were a dozen windows (20 idle blank
# windows: 1.2 cores; without them: none), which every screen's updates then queued behind.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-background-timer-throttling",
                 "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
                 "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup"]


def chromium_path() -> str | None:
    named = os.environ.get("CROUPIER_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def missing(playwright: bool = True) -> str | None:
    """Why the browser cannot run here (None when it can); playwright=False: without Playwright (the bench)."""
    if playwright:
        try:
            from playwright import async_api  # noqa: F401
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


class Chromium:
    """A headless Chromium driven over the DevTools protocol with no domain enabled (no instrumentation):
    `await start()`, `await open(url, width, height)` -> target id, `await evaluate(target, js)`, `await close()`."""

    def __init__(self) -> None:
        self._proc: asyncio.subprocess.Process | None = None
        self._profile = ""
        self._n = 0
        self._replies: dict[int, asyncio.Future[Any]] = {}
        self._sessions: dict[str, str] = {}

    @property
    def profile(self) -> str:
        """This browser's fresh profile folder, named on the command line of each of its processes."""
        return self._profile

    async def start(self) -> None:
        import aiohttp

        path = chromium_path()
        if path is None:
            raise RuntimeError(missing(playwright=False) or "no Chromium")
        self._profile = tempfile.mkdtemp(prefix="croupier-chromium-")
        self._proc = await asyncio.create_subprocess_exec(
            path, "--headless", "--remote-debugging-port=0", f"--user-data-dir={self._profile}", *CHROMIUM_ARGS,
            "about:blank", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        assert self._proc.stderr is not None
        while True:
            line = (await asyncio.wait_for(self._proc.stderr.readline(), 30)).decode()
            if not line:
                raise RuntimeError("Chromium exited before it listened for DevTools")
            if line.startswith("DevTools listening on "):
                endpoint = line.split(" on ", 1)[1].strip()
                break
        self._drain = asyncio.create_task(self._proc.stderr.read())
        self._http = aiohttp.ClientSession()
        self._ws = await self._http.ws_connect(endpoint, max_msg_size=0)
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        import json

        async for msg in self._ws:
            body = json.loads(msg.data)
            future = self._replies.pop(body.get("id", -1), None)
            if future is not None and not future.done():
                if "error" in body:
                    future.set_exception(RuntimeError(f"DevTools: {body['error']}"))
                else:
                    future.set_result(body.get("result", {}))

    async def send(self, method: str, session: str | None = None, **params: Any) -> Any:
        import json

        self._n += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._replies[self._n] = future
        body: dict[str, Any] = {"id": self._n, "method": method, "params": params}
        if session:
            body["sessionId"] = session
        await self._ws.send_str(json.dumps(body))
        return await asyncio.wait_for(future, 60)

    async def open(self, url: str, width: int, height: int) -> str:
        """A new window of that size on `url`; returns its target id."""
        target = (await self.send("Target.createTarget", url=url, newWindow=True, width=width,
                                  height=height))["targetId"]
        session = (await self.send("Target.attachToTarget", targetId=target, flatten=True))["sessionId"]
        self._sessions[target] = session
        await self.send("Emulation.setDeviceMetricsOverride", session, width=width, height=height,
                        deviceScaleFactor=1, mobile=False)
        return target

    async def evaluate(self, target: str, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", self._sessions[target], expression=expression,
                                 returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"in the page: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    async def wait_for(self, target: str, expression: str, timeout: float = 30.0) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = await self.evaluate(target, expression)
            if value:
                return value
            if loop.time() > deadline:
                raise TimeoutError(f"still false after {timeout:g} s: {expression}")
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        if self._proc is None:
            return
        try:
            await asyncio.wait_for(self.send("Browser.close"), 5)
        except Exception:  # noqa: BLE001 - it is going away either way
            pass
        self._reader.cancel()
        await self._ws.close()
        await self._http.close()
        if self._proc.returncode is None:
            try:
                await asyncio.wait_for(self._proc.wait(), 10)
            except asyncio.TimeoutError:
                self._proc.kill()
                await self._proc.wait()
        self._drain.cancel()
        shutil.rmtree(self._profile, ignore_errors=True)
        self._proc = None
