"""`croupier bench screens` (its 20-window run, as information): update latency from the bus to the DOM of N screens in headless Chromium (p50/p99), beside the bus-to-bridge part."""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any, Callable

TOKEN = "bench-dealer-token-0123456789"


def _cpu_seconds(marker: str) -> float | None:
    """CPU time (user + system) of the running processes whose command line holds `marker` (Chromium's
    profile folder: the browser and every renderer, GPU and utility process it started); None without /proc."""
    if not os.path.isdir("/proc/self"):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() not in f.read():
                    continue
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _measure(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    import tempfile

    from controller.autoplay import Autoplay
    from controller.bench.screens import play
    from controller.bench.table import _config as table_config
    from controller.rng import SeededRng
    from controller.screens.bridge import Bridge, source_for_table
    from controller.screens.browser import Chromium
    from controller.table import Table

    width, height = (int(x) for x in args.size.split("x"))
    with tempfile.TemporaryDirectory(prefix="croupier-bench-screens-") as tmp:
        cfg = table_config(tmp, args.seed, args.game)
        table = Table(cfg)
        await table.start()
        assert table.state is not None  # start() folded the journal: set from here on
        bridge = Bridge([source_for_table(cfg)], dealer_token=TOKEN, host="127.0.0.1", port=0,
                        heartbeat=cfg.bus.heartbeat)
        await bridge.start()
        base = f"http://127.0.0.1:{bridge.port}"
        paths = [f"/dealer/bench?token={TOKEN}", "/table/bench/spot/1", "/table/bench/spot/2"]
        paths = (paths + ["/table/bench"] * args.screens)[:args.screens]
        if args.floor:
            paths = [path + "#floor" for path in paths]
        chromium = Chromium()
        try:
            await chromium.start()
            started = time.perf_counter()
            pages = [await chromium.open(base + path, width, height) for path in paths]
            for page in pages:
                await chromium.wait_for(page, "window.croupier && window.croupier.snapshots > 0", timeout=60)
            say(f"{len(pages)} screens ({width}x{height}) connected in {time.perf_counter() - started:.1f} s "
                f"({bridge.screens()} WebSockets on the bridge)")
            await Autoplay(table, SeededRng(args.seed)).step()   # warm up: first renders, JIT
            for page in pages:
                await chromium.evaluate(page, "window.croupier.latencies = []")
            for feed in bridge.feeds.values():
                feed.bus_latency.clear()
            first = table.state.seq + 1
            cpu0 = _cpu_seconds(chromium.profile)
            player = Autoplay(table, SeededRng(args.seed + 1), pace=args.pace)
            t0 = time.perf_counter()
            published = await play(table, player, args.updates)
            elapsed = time.perf_counter() - t0
            last = table.state.seq
            cpu1 = _cpu_seconds(chromium.profile)
            samples: list[tuple[int, float]] = []
            gaps = silences = 0
            for page in pages:
                await chromium.wait_for(page, f"window.croupier.seq >= {last}", timeout=60)
                stats = await chromium.evaluate(page, "({lat: window.croupier.latencies, gaps: window.croupier.gaps, "
                                                      "silences: window.croupier.silences})")
                samples += [(int(seq), float(ms)) for seq, ms in stats["lat"] if first <= seq <= last]
                gaps, silences = gaps + stats["gaps"], silences + stats["silences"]
        finally:
            bus = [x * 1000 for f in bridge.feeds.values() if f.view == "public" for x in f.bus_latency]
            await chromium.close()
            await bridge.close()
            await table.stop()

    latencies = [ms for _, ms in samples]
    worst: dict[int, float] = {}
    for seq, ms in samples:
        worst[seq] = max(worst.get(seq, 0.0), ms)
    updates = published[0]
    # What the screens cost the machine: Chromium's CPU (all its processes) per screen and update.
    cpu_ms = round((cpu1 - cpu0) * 1000 / (updates * len(paths)), 1) if cpu0 is not None and cpu1 is not None else None
    return {
        "part": "windows", "game": args.game, "screens": len(paths), "size": args.size, "floor": args.floor, "pace_s": args.pace,
        "updates": updates,
        "updates_per_s": round(updates / elapsed, 1), "samples": len(latencies), "resnapshots": gaps + silences,
        "gaps": gaps, "silences": silences,
        "dom_p50_ms": round(_percentile(latencies, 0.5), 2), "dom_p99_ms": round(_percentile(latencies, 0.99), 2),
        "dom_max_ms": round(max(latencies), 2),
        "last_screen_p50_ms": round(_percentile(list(worst.values()), 0.5), 2),
        "last_screen_p99_ms": round(_percentile(list(worst.values()), 0.99), 2),
        "bus_to_bridge_p50_ms": round(_percentile(bus, 0.5), 2) if bus else None,
        "bus_to_bridge_p99_ms": round(_percentile(bus, 0.99), 2) if bus else None,
        "chromium_cpu_ms_per_screen_update": cpu_ms,
        # No goal: on a 2-core machine N browsers measure the machine (issue 38); --fanout and --pages have theirs.
    }


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    from controller.cli import CliError

    if args.screens < 1 or args.updates < 10:
        raise CliError("--screens at least 1 and --updates at least 10")
    figures = asyncio.run(_measure(args, say))
    say(f"{figures['screens']} screens{' drawing only the seq (--floor)' if args.floor else ''}, "
        f"{figures['updates']} updates of a {figures['game']} table ({figures['updates_per_s']}/s), "
        f"{figures['samples']} screen updates measured, {figures['resnapshots']} resnapshots")
    say(f"bus -> DOM, every screen:       p50 {figures['dom_p50_ms']:.1f} ms   p99 {figures['dom_p99_ms']:.1f} ms   "
        f"max {figures['dom_max_ms']:.1f} ms   (information: no goal)")
    say(f"bus -> DOM, last of the screens: p50 {figures['last_screen_p50_ms']:.1f} ms   "
        f"p99 {figures['last_screen_p99_ms']:.1f} ms")
    if figures["chromium_cpu_ms_per_screen_update"] is not None:
        per = figures["chromium_cpu_ms_per_screen_update"]
        say(f"Chromium CPU:                    {per:.1f} ms per screen and update, "
            f"{per * figures['screens'] * figures['updates_per_s'] / 1000:.2f} of this machine's {os.cpu_count()} cores")
    if figures["bus_to_bridge_p50_ms"] is not None:
        say(f"bus -> bridge:                   p50 {figures['bus_to_bridge_p50_ms']:.2f} ms   "
            f"p99 {figures['bus_to_bridge_p99_ms']:.2f} ms")
    return figures
