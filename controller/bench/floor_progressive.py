"""`croupier bench floor --part progressive`: a progressive hit on the floor's JetStream, from publishing it to the cabinet's award read back (p50/p99), on a local three-node cluster under contributions.

The figure is what a cabinet waits between its hit (journaled) and the award it can journal and pay:
the hit acknowledged by the stream's quorum (R3), then read back in stream order by the cabinet's own fold.
Ten cabinets on one link keep contributing while one at a time hits; two readers fold the same stream.
At the end the readers must agree, every hit must be paid once, and the pool must balance to the cent.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # for the annotations only: like every bench, this one imports the floor when it runs
    from controller.floor.progressive import FloorLinkClient, PoolReader

HELP = ("floor progressive: hit to confirmed award p50/p99 on a local three-node JetStream cluster (R3) while "
        "cabinets contribute, two readers agreeing (also `croupier bench floor --part progressive`)")
LINK = "bench-link"
RESET = 50_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hits", type=int, default=500, help="progressive: hits timed (default 500)")
    parser.add_argument("--cabinets", type=int, default=10, help="progressive: cabinets on the link (default 10)")
    parser.add_argument("--rate", type=float, default=20.0,
                        help="progressive: contributions/s from each other cabinet meanwhile (default 20)")


def _on_link(up_event: asyncio.Event) -> Callable[[bool], None]:
    """A cabinet's link callback that keeps `up_event` set while its link is up."""
    def on_link(ok: bool) -> None:
        if ok:
            up_event.set()
        else:
            up_event.clear()
    return on_link


async def _bench(urls: list[str], hits: int, cabinets: int, rate: float) -> dict[str, Any]:
    from controller.config import LinkConfig
    from controller.floor.config import FloorConfig
    from controller.floor.progressive import FloorLinkClient, PoolReader
    from controller.floor.wire import subject_for

    readers = [PoolReader(LINK, urls, create_stream=3), PoolReader(LINK, urls[::-1])]
    link = LinkConfig(LINK, None, heartbeat=0.5, timeout=5.0, engine="floor")
    floor = FloorConfig(tuple(urls), subject_for("bench"))
    up = {f"c{i}": asyncio.Event() for i in range(cabinets)}
    clients = [FloorLinkClient(name, link, floor, RESET, _on_link(event), lambda cents: None)
               for name, event in up.items()]
    try:
        return await _measure(readers, clients, up, hits, rate)
    finally:
        for r in readers:
            await r.close()
        for c in clients:
            await c.close()


async def _measure(readers: list[PoolReader], clients: list[FloorLinkClient], up: dict[str, asyncio.Event],
                   hits: int, rate: float) -> dict[str, Any]:
    from controller.bus import CommandError

    for r in readers:
        await r.start()
    for c in clients:
        c.start()
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in up.values())), 30)
    stop = asyncio.Event()
    games = {c.cabinet_id: 0 for c in clients}
    contributed = 0

    async def contribute(c: FloorLinkClient) -> None:
        nonlocal contributed
        while not stop.is_set():
            games[c.cabinet_id] += 1
            game = games[c.cabinet_id]
            cents = 3 + game % 5
            while True:
                try:
                    await c.contribute([(game, cents)])
                    break
                except CommandError:
                    await asyncio.sleep(0.05)  # backoff, as the cabinet's link loop
            contributed += cents
            await asyncio.sleep(1 / rate)  # a cabinet's pace of qualifying games, not a synchronisation

    background = [asyncio.create_task(contribute(c)) for c in clients[1:]]
    timed = clients[0]
    samples: list[float] = []
    try:
        for _ in range(hits):
            games[timed.cabinet_id] += 1
            game = games[timed.cabinet_id]
            t0 = time.perf_counter()
            await timed.hit(game, 25)
            samples.append((time.perf_counter() - t0) * 1000)
    finally:
        stop.set()
        await asyncio.gather(*background, return_exceptions=True)
    last = max(c.follower.state.seq for c in clients)
    for r in readers:
        if not await r.wait_for(lambda s: s.seq >= last, 30):
            raise RuntimeError(f"a reader stopped at stream seq {r.state.seq} of {last}")
    a, b = (r.state for r in readers)
    out = {"agree": a == b, "paid_once": a.hits == hits and len(a.awards) == hits,
           "balanced": a.pool == RESET * (1 + a.hits) + contributed - a.paid and a.contributed == contributed,
           "contributions": a.contributions, "samples": samples}
    return out


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    from controller.cli import CliError
    from controller.floor.server import NatsCluster, wait_ready

    if args.hits < 1 or args.cabinets < 2 or not args.rate > 0:
        raise CliError("--hits: at least 1; --cabinets: at least 2 (one hits, the others contribute); --rate: above 0")
    with tempfile.TemporaryDirectory(prefix="croupier-bench-progressive-") as tmp:
        try:
            cluster = NatsCluster(Path(tmp) / "cluster", nodes=3)
        except FileNotFoundError as exc:
            raise CliError(str(exc)) from None
        cluster.start()
        quiet = logging.getLogger("croupier.progressive")
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # a line per hit from each reader and the cabinet: not a bench's output
        try:
            asyncio.run(wait_ready(cluster.urls, replicas=3))
            say(f"{args.hits} progressive hits, {args.cabinets - 1} cabinets contributing meanwhile, two readers ...")
            out = asyncio.run(_bench(cluster.urls, args.hits, args.cabinets, args.rate))
        finally:
            quiet.setLevel(level)
            cluster.stop()
    samples = out.pop("samples")
    p50, p99 = statistics.median(samples), _percentile(samples, 0.99)
    say(f"hit to confirmed award: p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {max(samples):.2f} ms "
        f"({out['contributions']} contributions meanwhile); readers agree: {out['agree']}, "
        f"each hit paid once: {out['paid_once']}, pool balanced: {out['balanced']}")
    return {"part": "progressive", "hits": args.hits, "cabinets": args.cabinets, "contribution_rate": args.rate,
            "replicas": 3, "nodes": 3,
            "hit_p50_ms": round(p50, 3), "hit_p99_ms": round(p99, 3), "hit_max_ms": round(max(samples), 3),
            "contributions": out["contributions"], "readers_agree": out["agree"], "paid_once": out["paid_once"],
            "balanced": out["balanced"]}
