"""`croupier bench screens`: what the screens cost, in three parts: the bridge's fan-out (--fanout), each game's page (--pages), and N Chromium windows (the default)."""

from __future__ import annotations

import argparse
from typing import Any, Callable

HELP = ("screens: --fanout: the bridge's fan-out to N WebSocket clients in another process (publish to the last "
        "client, p50/p99, the bridge's CPU per update); --pages: one Chromium page's CPU per update for every "
        "game beside the #floor page's; by default: latency from a table's publish to the DOM of N Chromium "
        "windows (information: it measures the machine as much as this software)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    part = parser.add_mutually_exclusive_group()
    part.add_argument("--fanout", action="store_true",
                      help="the screens bridge's fan-out: --clients WebSocket clients (aiohttp, not browsers) in "
                           "another process; from the table's publish to the last client holding the update, "
                           "p50/p99 (goal p99 < 20 ms), and the bridge's CPU per update")
    part.add_argument("--pages", action="store_true",
                      help="page cost: for every game (or --games), one Chromium page's CPU per update "
                           "(Performance.getMetrics TaskDuration) beside the #floor page's (goal: <= 2x the floor)")
    parser.add_argument("--screens", type=int, default=20, help="windows: connected screens (default 20: one dealer "
                                                               "page, two spot pages, the rest player pages)")
    parser.add_argument("--clients", type=int, default=500, help="--fanout: WebSocket clients (default 500)")
    parser.add_argument("--games", default="", help="--pages: comma-separated games (default every game)")
    parser.add_argument("--updates", type=int, default=None,
                        help="table updates to measure (default 300; --pages: 60 per game)")
    parser.add_argument("--pace", type=float, default=None,
                        help="seconds between the autoplay's actions (default 0.25, a brisk dealer; --fanout 0.1; "
                             "--pages 0.05); bets still come in bursts, every player at once")
    parser.add_argument("--game", default="blackjack", help="game dealt (default blackjack; not --pages)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--size", default="1920x1080", help="each page's viewport (default 1920x1080)")
    parser.add_argument("--floor", action="store_true",
                        help="windows: every page draws only the seq it reached (#floor): the browser's and the "
                             "machine's own cost of an update, the least any page could take here")


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    from controller.cli import CliError

    if args.fanout:
        from controller.bench.screens import fanout

        return fanout.run(args, say)
    from controller.screens.browser import missing

    why = missing(playwright=False)
    if why:
        raise CliError(f"bench screens needs a browser: {why}")
    if args.pages:
        from controller.bench.screens import pages

        return pages.run(args, say)
    from controller.bench.screens import windows

    args.updates = 300 if args.updates is None else args.updates
    args.pace = 0.25 if args.pace is None else args.pace
    return windows.run(args, say)


async def play(table: Any, player: Any, updates: int, game: str = "") -> list[int]:
    """Run `player` (an Autoplay) on `table` until the table has published `updates` updates (one per group
    commit), then stop it; an autoplay that fails is raised, a table still for 30 s is an error (naming `game`).
    Returns the count of publishes in a cell that goes on counting: the figures read it once all is done."""
    import asyncio

    the = f"the {game}" if game else "the"
    published = [0]
    table.on_publish = lambda views: published.__setitem__(0, published[0] + 1)
    autoplay = asyncio.create_task(player.run())
    while published[0] < updates:
        if autoplay.done():
            autoplay.result()   # the autoplay failed: say why
            raise RuntimeError(f"{the} autoplay stopped")
        if not await table.wait_change(table.state.seq, 30):
            raise RuntimeError(f"{the} table did not move for 30 s")
    player.stop()
    await autoplay
    return published
