"""`croupier bench cabinet`: a cabinet's spins per second with the journal on, and a progressive link controller's contributions per second from 10 simulated cabinets."""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

HELP = ("slot cabinet runtime: spins/s with the journal on (fsync per game; screen reels, and the simulated panel "
        "with stepper reels), and the progressive link controller's contributions/s from 10 simulated cabinets over "
        "CURVE (goal >= 1,000/s)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spins", type=int, default=1_000, help="games in each spin run (default 1,000)")
    parser.add_argument("--contributions", type=int, default=20_000,
                        help="contributions sent to the link controller in all (default 20,000)")
    parser.add_argument("--cabinets", type=int, default=10, help="simulated cabinets on the link (default 10)")
    parser.add_argument("--window", type=int, default=8,
                        help="contributions a cabinet sends before it waits for their answers (default 8)")
    parser.add_argument("--title", default="frozen-assets", help="title of the spin runs (default frozen-assets)")


def _ports(n: int) -> list[int]:
    import socket

    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _spins(tmp: str, title: str, count: int, mechanical: bool) -> dict[str, Any]:
    """One cabinet, games as fast as the player's commands come: each game one journal commit."""
    import asyncio
    import logging
    import re
    from pathlib import Path

    from controller.cabinet import ATTENDANT, PLAYER, Cabinet
    from controller.config import cabinet_config_from_mapping
    from controller.slots import get_title

    quiet = logging.getLogger("croupier")
    level = quiet.level  # restored on the way out: `main` runs in-process too (the tests), its logs are the caller's
    quiet.setLevel(logging.ERROR)
    p1, p2, p3 = _ports(3)
    t = get_title(title)
    folder = Path(tmp) / ("mechanical" if mechanical else "screen")
    folder.mkdir()
    data: dict[str, Any] = {
        "cabinet": {"id": "bench", "title": title, "journal": str(folder / "bench.journal"), "seed": 1,
                    "spin_seconds": 0.0, "attract_seconds": 0},
        "bus": {"publish": f"tcp://127.0.0.1:{p1}", "snapshot": f"tcp://127.0.0.1:{p2}",
                "commands": f"tcp://127.0.0.1:{p3}"}}
    if t.progressive is not None:
        data["cabinet"]["progressive"] = {"mode": "standalone"}
    if mechanical:
        # The example pin map with this title's strips; the reels turn at 100,000 steps/s (a simulation: the
        # figure is the runtime's, not the motors').
        source = Path(__file__).resolve().parents[2] / "deploy" / "config" / "panel-cabinet-3reel-mechanical.toml"
        text = re.sub(r"^stops = \d+", f"stops = {t.reels[0].size}", source.read_text(), flags=re.M)
        pin_map = folder / "panel.toml"
        pin_map.write_text(re.sub(r"^rate = \d+", "rate = 100000", text, flags=re.M))
        data["panel"] = {"file": str(pin_map), "driver": "sim"}
        data["cabinet"]["reels"] = "mechanical"
    cfg = cabinet_config_from_mapping(data, folder / "bench.toml")

    async def main() -> dict[str, Any]:
        cab = Cabinet(cfg)
        await cab.start()
        assert cab.state is not None  # start() folded the journal: set from here on
        await cab.shown.wait()
        await cab.command(ATTENDANT, "add_credits", {"credits": 3 * count})
        t0 = time.perf_counter()
        for _ in range(count):
            if cab.state.slot.pending is not None:
                await cab.command(PLAYER, "pick", {"choice": 1})
            reply = await cab.command(PLAYER, "spin" if cab.state.slot.free else "max_bet", {})
            if not reply["ok"]:
                raise RuntimeError(f"bench spin refused: {reply['error']}")
            await cab.shown.wait()
        elapsed = time.perf_counter() - t0
        games = cab.state.meters.games_played
        await cab.stop()
        return {"games": games, "seconds": elapsed}

    try:
        return asyncio.run(main())
    finally:
        quiet.setLevel(level)


def _controller(conn: Any, tmp: str, ports: list[int], cabinets: int) -> None:
    """Child process: the link controller, CURVE-authenticated, one key per cabinet."""
    import asyncio
    import logging
    from pathlib import Path

    from controller.config import progressive_config_from_mapping
    from controller.progressive import LinkController

    logging.disable(logging.WARNING)
    cfg = progressive_config_from_mapping({
        "progressive": {"id": "bench-link", "title": "light-speed", "journal": f"{tmp}/link.journal"},
        "bus": {"publish": f"tcp://127.0.0.1:{ports[0]}", "snapshot": f"tcp://127.0.0.1:{ports[1]}",
                "commands": f"tcp://127.0.0.1:{ports[2]}", "keys": f"{tmp}/keys",
                "client": [{"key": f"c{i}.key", "role": f"cabinet:c{i}"} for i in range(cabinets)]},
    }, Path(tmp) / "link.toml")

    async def main() -> None:
        link = LinkController(cfg)
        await link.start()
        conn.send("ready")
        while not conn.poll():
            await asyncio.sleep(0.05)  # the controller serves; the parent says when it is done
        conn.recv()
        state = link.state
        await link.stop()
        conn.send({"contributions": state.contributions, "pool": state.pool, "contributed": state.contributed})

    asyncio.run(main())


def _link(tmp: str, total: int, cabinets: int, window: int) -> dict[str, Any]:
    import asyncio
    import multiprocessing
    from pathlib import Path

    from controller.bus import BusEndpoints, create_keys
    from controller.config import LinkConfig
    from controller.progressive import LinkClient

    keys = Path(tmp) / "keys"
    for name in ["server"] + [f"c{i}" for i in range(cabinets)]:
        create_keys(keys, name)
    ports = _ports(3)
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_controller, args=(child, tmp, ports, cabinets))
    proc.start()
    parent.recv()
    endpoints = BusEndpoints(*(f"tcp://127.0.0.1:{p}" for p in ports))
    each = total // cabinets

    async def cabinet(i: int) -> int:
        # The cabinet's own link client (controller.progressive.LinkClient), as a Cabinet sends its unacknowledged
        # contributions: in game order, several at a time.
        config = LinkConfig("bench-link", endpoints, keys / "server.key", keys / f"c{i}.key_secret", timeout=30.0)
        client = LinkClient(f"c{i}", config, lambda up: None, lambda cents: None)
        counted = 0
        for start in range(1, each + 1, window):
            games = range(start, min(start + window, each + 1))
            counted += len(await client.contribute([(g, 3) for g in games]))
        await client.close()
        return counted

    async def main() -> tuple[int, float]:
        t0 = time.perf_counter()
        counted = await asyncio.gather(*(cabinet(i) for i in range(cabinets)))
        return sum(counted), time.perf_counter() - t0

    counted, elapsed = asyncio.run(main())
    parent.send("stop")
    link = parent.recv()
    proc.join(30)
    if link["contributions"] != counted or link["contributed"] != 3 * counted:
        raise RuntimeError(f"the controller counted {link['contributions']} contributions, the cabinets {counted}")
    return {"contributions": counted, "seconds": elapsed, "cabinets": cabinets, "window": window}


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    import tempfile

    for name in ("spins", "contributions", "cabinets", "window"):
        if getattr(args, name) < 1:
            from controller.cli import CliError

            raise CliError(f"--{name} must be at least 1")
    tmp = tempfile.mkdtemp(prefix="croupier-bench-")
    say(f"spins: {args.spins:,} {args.title} games with the journal on (fsync per game), screen reels ...")
    screen = _spins(tmp, args.title, args.spins, mechanical=False)
    say(f"  {screen['games'] / screen['seconds']:.1f} spins/s")
    say("  the same on the simulated panel with stepper reels (mock pins; displays, lamps, reels turned) ...")
    mech = _spins(tmp, args.title, args.spins, mechanical=True)
    say(f"  {mech['games'] / mech['seconds']:.1f} spins/s")
    say(f"progressive: {args.contributions:,} contributions from {args.cabinets} simulated cabinets over CURVE, "
        f"{args.window} in flight per cabinet ...")
    link = _link(tmp, args.contributions, args.cabinets, args.window)
    rate = link["contributions"] / link["seconds"]
    say(f"  {rate:,.0f} contributions/s, each journaled and published (goal >= 1,000/s)")
    return {"spins_per_s": round(screen["games"] / screen["seconds"], 1),
            "spins_per_s_mechanical_sim": round(mech["games"] / mech["seconds"], 1),
            "spins": args.spins, "title": args.title,
            "contributions_per_s": round(rate, 1), "contributions": link["contributions"], "cabinets": args.cabinets,
            "window": args.window}
