"""`croupier bench screens --pages`: for every game, one Chromium page's CPU per update (DevTools Performance.getMetrics deltas) beside a `#floor` page's on the same table.

Per game: a table dealt by the autoplay, its bridge, and two player pages in one headless Chromium, each in
a browser context of its own (so each has a renderer process of its own and the metrics are its own): the
game's page and the same page drawing only the seq it reached (`#floor`: the WebSocket, the JSON.parse of
the same messages, one text node). The figures are the renderer's CPU (ProcessTime: every thread of it,
main thread, compositor, raster; the ratio is taken on it) and the main thread's task, script, style and
layout durations (wall time: on a loaded machine they count the waits for a core too), divided by the updates
the page received. The goal: no game's page above twice its floor.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any, Callable

from controller.screens.browser import wait_for

TOKEN = "bench-dealer-token-0123456789"
GOAL_RATIO = 2
# Performance.getMetrics names: seconds, as the renderer counts them.
METRICS = {"ProcessTime": "cpu_ms_per_update", "ThreadTime": "main_thread_cpu_ms_per_update",
           "TaskDuration": "task_ms_per_update", "ScriptDuration": "script_ms_per_update",
           "RecalcStyleDuration": "style_ms_per_update", "LayoutDuration": "layout_ms_per_update"}


class _Page:
    """A player page in a browser context of its own, with the Performance domain on."""

    def __init__(self, chromium: Any) -> None:
        self.chromium = chromium
        self.context = self.session = ""

    async def open(self, url: str, width: int, height: int) -> None:
        send = self.chromium.send
        self.context = (await send("Target.createBrowserContext"))["browserContextId"]
        target = (await send("Target.createTarget", url=url, newWindow=True, width=width, height=height,
                             browserContextId=self.context))["targetId"]
        self.session = (await send("Target.attachToTarget", targetId=target, flatten=True))["sessionId"]
        await send("Emulation.setDeviceMetricsOverride", self.session, width=width, height=height,
                   deviceScaleFactor=1, mobile=False)
        await send("Performance.enable", self.session)

    async def evaluate(self, expression: str) -> Any:
        result = await self.chromium.send("Runtime.evaluate", self.session, expression=expression,
                                          returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"in the page: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, timeout: float) -> Any:
        return await wait_for(self, expression, timeout, every=0.05)

    async def metrics(self) -> dict[str, float]:
        got = await self.chromium.send("Performance.getMetrics", self.session)
        return {m["name"]: float(m["value"]) for m in got["metrics"]}

    async def close(self) -> None:
        if self.context:
            await self.chromium.send("Target.disposeBrowserContext", browserContextId=self.context)


def _per_update(before: dict[str, float], after: dict[str, float], updates: int) -> dict[str, float | None]:
    out = {key: round((after[name] - before[name]) * 1000 / updates, 3) if name in after and name in before
           else None for name, key in METRICS.items()}
    cpu, main = out["cpu_ms_per_update"], out["main_thread_cpu_ms_per_update"]
    # The renderer's other threads: the compositor and the raster workers (software raster, no GPU).
    out["other_threads_cpu_ms_per_update"] = round(max(0.0, cpu - main), 3) if cpu is not None and main is not None \
        else None
    return out


async def _game(chromium: Any, game: str, args: argparse.Namespace, width: int, height: int,
                say: Callable[[str], None]) -> dict[str, Any]:
    import tempfile

    from controller.autoplay import Autoplay
    from controller.bench.screens import play
    from controller.bench.table import _config as table_config
    from controller.rng import SeededRng
    from controller.screens.bridge import Bridge, source_for_table
    from controller.table import Table

    with tempfile.TemporaryDirectory(prefix="croupier-bench-pages-") as tmp:
        cfg = table_config(tmp, args.seed, game)
        table = Table(cfg)
        await table.start()
        assert table.state is not None  # start() folded the journal: set from here on
        bridge = Bridge([source_for_table(cfg)], dealer_token=TOKEN, host="127.0.0.1", port=0,
                        heartbeat=cfg.bus.heartbeat)
        pages = {"page": _Page(chromium), "floor": _Page(chromium)}
        try:
            await bridge.start()
            url = f"http://127.0.0.1:{bridge.port}/table/bench"
            for name, page in pages.items():
                await page.open(url + ("#floor" if name == "floor" else ""), width, height)
            for page in pages.values():
                await page.wait_for("window.croupier && window.croupier.snapshots > 0", 60)
            player = Autoplay(table, SeededRng(args.seed + 1), pace=args.pace)
            for _ in range(3):
                await player.step()   # warm up: first renders, the JIT
            seq = table.state.seq
            for page in pages.values():
                await page.wait_for(f"window.croupier.seq >= {seq}", 30)
            before = {name: (await page.metrics(), await page.evaluate("window.croupier.updates"))
                      for name, page in pages.items()}
            await play(table, player, args.updates, game)
            last = table.state.seq
            figures: dict[str, Any] = {}
            for name, page in pages.items():
                await page.wait_for(f"window.croupier.seq >= {last}", 60)
                after = await page.metrics()
                stats = await page.evaluate("({updates: window.croupier.updates, "
                                            "resnapshots: window.croupier.gaps + window.croupier.silences})")
                updates = stats["updates"] - before[name][1]
                if updates < 1:
                    raise RuntimeError(f"the {game} {name} page received no update")
                figures[name] = {"updates": updates, "resnapshots": stats["resnapshots"],
                                 **_per_update(before[name][0], after, updates)}
        finally:
            for page in pages.values():
                await page.close()
            await bridge.close()
            await table.stop()
    page, floor = figures["page"], figures["floor"]
    ratio = round(page["cpu_ms_per_update"] / floor["cpu_ms_per_update"], 2) \
        if page["cpu_ms_per_update"] and floor["cpu_ms_per_update"] else None
    row = {"game": game, **page, "floor": floor, "ratio_to_floor": ratio}
    say(f"{game:20} {page['updates']:4} updates   page {page['cpu_ms_per_update']:6.2f} ms CPU "
        f"(raster {page['other_threads_cpu_ms_per_update']:5.2f}; wall: script {page['script_ms_per_update']:5.2f}, style {page['style_ms_per_update']:5.2f}, "
        f"layout {page['layout_ms_per_update']:5.2f})   floor {floor['cpu_ms_per_update']:5.2f} ms   "
        f"x{ratio}{'  OVER' if ratio is not None and ratio > GOAL_RATIO else ''}")
    return row


async def _measure(args: argparse.Namespace, games: list[str], say: Callable[[str], None]) -> dict[str, Any]:
    from controller.screens.browser import Chromium

    width, height = (int(x) for x in args.size.split("x"))
    chromium = Chromium()
    rows = []
    started = time.perf_counter()
    try:
        await chromium.start()
        for game in games:
            rows.append(await _game(chromium, game, args, width, height, say))
    finally:
        await chromium.close()
    floors = sorted(r["floor"]["cpu_ms_per_update"] for r in rows)
    return {
        "part": "pages", "size": args.size, "pace_s": args.pace, "updates_per_game": args.updates,
        "measured_s": round(time.perf_counter() - started, 1),
        "pages": rows,
        "floor_cpu_ms_per_update_median": floors[len(floors) // 2],
        "over_goal": [r["game"] for r in rows if r["ratio_to_floor"] is not None and r["ratio_to_floor"] > GOAL_RATIO],
        "goal_ratio": GOAL_RATIO,
    }


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    from controller.cli import CliError
    from controller.games import game_names

    args.updates = 60 if args.updates is None else args.updates
    args.pace = 0.05 if args.pace is None else args.pace
    known = game_names()
    games = [g.strip() for g in args.games.split(",") if g.strip()] if args.games else known
    unknown = [g for g in games if g not in known]
    if unknown:
        raise CliError(f"--games: no game {', '.join(unknown)} (games: {', '.join(known)})")
    if args.updates < 10:
        raise CliError("--updates at least 10")
    say(f"one player page per game ({args.size}) beside its #floor page, {args.updates} updates each; "
        "CPU per update: the page's renderer process (Performance.getMetrics ProcessTime)")
    figures = asyncio.run(_measure(args, games, say))
    over = figures["over_goal"]
    say(f"goal: no page above {GOAL_RATIO}x its floor: {'met' if not over else 'NOT met by ' + ', '.join(over)}")
    return figures
