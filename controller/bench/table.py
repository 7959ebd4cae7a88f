"""`croupier bench table`: card-to-screen latency over the whole table, rounds per second with the journal on, and peak memory."""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

HELP = ("table runtime: latency from a shoe frame's last byte to the subscriber's public update (p50/p99), "
        "baccarat rounds/s with the journal on (with and without a stalled subscriber), peak memory")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cards", type=int, default=10_000, help="cards in the latency run (default 10,000)")
    parser.add_argument("--rounds", type=int, default=500, help="baccarat rounds in the throughput runs (default 500)")
    parser.add_argument("--seed", type=int, default=1)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _config(tmp: str, seed: int, game: str = "baccarat") -> Any:
    import socket
    from pathlib import Path

    from controller.config import config_from_mapping

    ports = []
    for _ in range(3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    return config_from_mapping({
        "table": {"id": "bench", "game": game, "journal": f"{tmp}/bench.journal"},
        "shoe": {"port": "sim", "seed": seed},
        "bus": {"publish": f"tcp://127.0.0.1:{ports[0]}", "snapshot": f"tcp://127.0.0.1:{ports[1]}",
                "commands": f"tcp://127.0.0.1:{ports[2]}", "heartbeat": 0.2},
    }, Path(tmp) / "bench.toml")


def _subscriber(conn: Any, endpoint: str, topic: bytes, stall: bool) -> None:
    """Child process: a screen on loopback. It stamps each update on arrival, or (stall) stops reading.

    It reads each message's kind and seq from its head (the bus writes them first) rather than parse the
    whole view: on this 2-core machine the stand-in screen shares the cores with the table's threads, and
    parsing 10 kB of JSON a record would bill a screen's work to the table."""
    import json
    import re

    import zmq

    head = re.compile(rb'"seq": (\d+), (?:"prev": \w+, )?"ts": [^,]+, "kind": "(\w+)"')

    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.SUB)
    sock.setsockopt(zmq.SUBSCRIBE, topic)
    sock.setsockopt(zmq.RCVHWM, 10 if stall else 1_000_000)
    sock.connect(endpoint)
    sock.recv_multipart()  # a heartbeat: subscribed
    conn.send("ready")
    arrivals: dict[int, float] = {}
    if stall:
        conn.recv()  # never read again until told to stop
    else:
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        while not conn.poll():
            if poller.poll(50):
                _, body = sock.recv_multipart()
                now = time.monotonic()
                found = head.search(body, 0, 200)
                if found:
                    seq, kind = int(found[1]), found[2].decode()
                else:  # another layout: read it all
                    msg = json.loads(body)
                    seq, kind = msg["seq"], msg["kind"]
                if kind == "update":
                    arrivals.setdefault(seq, now)
        conn.recv()
    conn.send(arrivals)
    sock.close(0)


def _service(conn: Any, mode: str, count: int, seed: int) -> None:
    """Child process: the table service (simulated shoe, journal, bus) with the autoplay."""
    import asyncio
    import bisect
    import logging
    import multiprocessing
    import resource
    import tempfile

    from controller.autoplay import Autoplay
    from controller.journal import Journal
    from controller.rng import SeededRng
    from controller.table import Table

    logging.disable(logging.WARNING)
    tmp = tempfile.mkdtemp(prefix="croupier-bench-")
    cfg = _config(tmp, seed)
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    sub = ctx.Process(target=_subscriber, args=(child, cfg.bus.endpoints.publish, b"bench/public", mode == "stalled"))
    written: dict[int, float] = {}

    async def main() -> dict[str, Any]:
        table = Table(cfg)
        await table.start()
        sub.start()
        while not parent.poll():
            await asyncio.sleep(0.05)  # heartbeats flow while the screen process connects
        parent.recv()
        assert table.state is not None  # start() folded the journal: set from here on
        sim = table.sim
        if sim is not None:
            def hook(kind: str, data: bytes, when: float) -> None:
                if kind == "CardDrawn":
                    written[sim.draws] = when
            sim.write_hook = hook
        autoplay = Autoplay(table, SeededRng(seed))
        t0 = time.perf_counter()
        if mode == "latency":
            while len(written) < count:
                seq = table.state.seq
                await autoplay.step()
                if table.state.seq == seq:
                    await table.wait_change(seq, 10)
            # the dealer draws a round's first cards in one motion: the last ones may not be journaled yet
            await table.wait_for(autoplay.drawn_journaled, 10)
        else:
            autoplay.rounds = count
            await autoplay.run()
        elapsed = time.perf_counter() - t0
        await table.stop()
        return {"seconds": elapsed, "rounds": table.state.meters.rounds}

    result = asyncio.run(main())
    parent.send("stop")
    arrivals = parent.recv()
    sub.join(10)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if mode == "latency":
        with Journal(cfg.journal, cfg.table_id) as journal:
            draw_seq = {e.record["draw"][1]: e.seq for e in journal.entries() if e.record.get("draw")}
        # A card reaches the screen in the first update at or after its record (one update per group commit).
        updates = sorted(arrivals)
        lat = []
        for d, t in sorted(written.items())[:count]:  # the last motion may draw past the count: its first cards
            k = bisect.bisect_left(updates, draw_seq[d]) if d in draw_seq else len(updates)
            if k < len(updates):
                lat.append(arrivals[updates[k]] - t)
        result["latencies"] = lat
    conn.send(result)


def _run_service(mode: str, count: int, seed: int) -> dict[str, Any]:
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_service, args=(child, mode, count, seed))
    proc.start()
    result = parent.recv()
    proc.join(30)
    return result


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    say(f"latency: {args.cards:,} cards from the simulated shoe (pty) to a subscriber process on loopback ...")
    lat = _run_service("latency", args.cards, args.seed)
    ms = [x * 1000 for x in lat["latencies"]]
    say(f"  card frame written -> public update received: p50 {_percentile(ms, 0.5):.2f} ms, "
        f"p99 {_percentile(ms, 0.99):.2f} ms, max {max(ms):.2f} ms over {len(ms):,} cards (goal p99 < 5 ms)")
    say(f"throughput: {args.rounds:,} baccarat rounds with the journal on (fsync per commit), a live subscriber ...")
    live = _run_service("rounds", args.rounds, args.seed)
    say(f"  {live['rounds'] / live['seconds']:.1f} rounds/s (goal >= 200); peak memory {live['peak_rss_mb']:.1f} MB "
        f"(goal < 100 MB)")
    say("  the same with a subscriber that has stopped reading ...")
    stalled = _run_service("stalled", args.rounds, args.seed)
    say(f"  {stalled['rounds'] / stalled['seconds']:.1f} rounds/s with a stalled subscriber")
    return {
        "latency_ms": {"cards": len(ms), "p50": round(_percentile(ms, 0.5), 3), "p99": round(_percentile(ms, 0.99), 3),
                       "max": round(max(ms), 3)},
        "rounds_per_s": round(live["rounds"] / live["seconds"], 1),
        "rounds_per_s_stalled_subscriber": round(stalled["rounds"] / stalled["seconds"], 1),
        "peak_rss_mb": round(max(live["peak_rss_mb"], lat["peak_rss_mb"], stalled["peak_rss_mb"]), 1),
        "rounds": args.rounds,
    }
