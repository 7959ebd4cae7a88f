"""`croupier bench panel`: how long an input edge takes to reach the runtime's loop, and display write speed (sim pins)."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
from typing import Any, Callable

HELP = "panel speed on simulated pins: edge-to-event latency through the asyncio loop, MAX7219 chain writes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--edges", type=int, default=2000, help="button edges to time (default 2,000)")
    parser.add_argument("--shows", type=int, default=200, help="8-digit display updates to time (default 200)")


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    from controller.cli import CliError

    if args.edges < 2 or args.shows < 1:
        raise CliError("--edges must be at least 2 and --shows at least 1")
    latency = asyncio.run(_latency(args.edges))
    say(f"edge -> on_event (another thread drives the pin, the loop delivers the event): median "
        f"{latency['median_us']:.0f} us, p99 {latency['p99_us']:.0f} us over {args.edges:,} edges")
    shows = _shows(args.shows)
    say(f"display writes over mock pins (bit-banged, 8-chip chain): {shows['shows_per_second']:.0f} full "
        f"8-digit updates/s, {shows['us_per_frame']:.0f} us per 16-byte frame")
    return {"edges": args.edges, "latency": latency, "shows": args.shows, "display": shows}


async def _latency(edges: int) -> dict[str, float]:
    from drivers.panel import open_panel, panel_config_from_mapping

    # No debounce, so the figure is the hop itself: gpiozero's callback, call_soon_threadsafe, the loop.
    config = panel_config_from_mapping({"driver": "sim", "buttons": {"spin": {"pin": 4, "bounce": 0.0}}})
    delivered = threading.Event()
    stamps: list[float] = []

    def on_event(event: Any) -> None:
        stamps.append(time.perf_counter())
        delivered.set()

    with open_panel(config) as panel:
        panel.start(on_event)
        sent: list[float] = []

        def drive() -> None:
            for i in range(edges):
                delivered.clear()
                sent.append(time.perf_counter())
                panel.sim.set("spin", i % 2 == 0)
                if not delivered.wait(5.0):
                    raise RuntimeError("an edge never reached the loop")

        await asyncio.get_running_loop().run_in_executor(None, drive)
    micros = sorted((got - start) * 1e6 for start, got in zip(sent, stamps))
    return {"median_us": statistics.median(micros), "p99_us": micros[int(len(micros) * 0.99) - 1],
            "max_us": micros[-1]}


def _shows(shows: int) -> dict[str, float]:
    from drivers.panel import ManualClock, open_panel, panel_config_from_mapping

    config = panel_config_from_mapping({"driver": "sim", "displays": {"chain": [f"d{i}" for i in range(8)],
                                                                      "refresh": 0}})
    with open_panel(config, clock=ManualClock()) as panel:
        chain = panel._chain
        assert chain is not None
        frames0 = chain.frames
        t0 = time.perf_counter()
        for i in range(shows):
            panel.show("d3", "12345678" if i % 2 else "87654321")  # every digit changes
        seconds = time.perf_counter() - t0
        frames = chain.frames - frames0
        assert panel.sim.display("d3").shown == panel.shown("d3")
    return {"shows_per_second": shows / seconds, "us_per_frame": seconds / frames * 1e6, "frames": frames}
