"""`croupier bench sas`: poll to first response byte, p50/p99 over 10,000 polls, while the cabinet spins at full speed."""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

HELP = ("SAS: poll to first response byte, p50/p99 over 10,000 polls (general polls and meter reads) from a host in "
        "its own process over a pty, while the cabinet spins at full speed with the journal on (goal p99 < 10 ms)")

# The host's poll cycle: a general poll between long polls, as floor systems poll (each answer's length known).
_CYCLE = ((b"\x81", None), (b"\x01\x1a", 8), (b"\x81", None), (b"\x01\x1c", 36), (b"\x81", None),
          (b"\x01\x0f", 28), (b"\x81", None), (b"\x01\x19", 24))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--polls", type=int, default=10_000, help="polls to time (default 10,000)")
    parser.add_argument("--title", default="frozen-assets", help="the cabinet's title (default frozen-assets)")
    parser.add_argument("--realtime", type=int, metavar="PRIO",
                        help="run the SAS line's thread under SCHED_FIFO at PRIO ([sas] realtime; needs root)")
    parser.add_argument("--pi4-factor", type=float, default=4.0,
                        help="how much slower a Raspberry Pi 4 runs this Python than this machine, for the estimate "
                             "(default 4: a Pi 4's Cortex-A72 at 1.5 GHz against a current desktop core)")


def _poller(conn: Any, port: str, polls: int, realtime: int | None = None) -> None:
    """Child process: the host. Times each poll from its first byte written to the first byte of the answer,
    reads the whole answer, and sends the times (seconds) back. With `realtime` the host runs under SCHED_FIFO
    too, so its own wake-ups do not count against the EGM."""
    import os
    import select
    import tty

    if realtime is not None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(realtime))
        except OSError:
            pass

    fd = os.open(port, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)
    times: list[float] = []
    missed = 0
    for i in range(polls):
        poll, size = _CYCLE[i % len(_CYCLE)]
        t0 = time.perf_counter()
        os.write(fd, poll)
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            missed += 1
            continue
        first = os.read(fd, 1)
        times.append(time.perf_counter() - t0)
        need = (size or 1) - len(first)
        if size is None and first and first[0] == 0x01:  # a real-time event frame (not enabled here)
            need = 0
        deadline = time.perf_counter() + 0.5
        while need > 0 and time.perf_counter() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                need -= len(os.read(fd, need))
    os.close(fd)
    conn.send({"times": times, "missed": missed})


def _measure(tmp: str, title: str, polls: int, realtime: int | None = None) -> dict[str, Any]:
    import asyncio
    import logging
    import multiprocessing
    import socket
    from pathlib import Path

    from controller.cabinet import ATTENDANT, PLAYER, Cabinet
    from controller.config import cabinet_config_from_mapping

    quiet = logging.getLogger("croupier")
    level = quiet.level  # restored on the way out: `main` runs in-process too (the tests), its logs are the caller's
    quiet.setLevel(logging.ERROR)
    socks = [socket.socket() for _ in range(3)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    p1, p2, p3 = (s.getsockname()[1] for s in socks)
    for s in socks:
        s.close()
    data: dict[str, Any] = {
        "cabinet": {"id": "bench-sas", "title": title, "journal": f"{tmp}/bench.journal", "seed": 1,
                    "spin_seconds": 0.0, "attract_seconds": 0},
        "bus": {"publish": f"tcp://127.0.0.1:{p1}", "snapshot": f"tcp://127.0.0.1:{p2}",
                "commands": f"tcp://127.0.0.1:{p3}"},
        "sas": {"port": "pty", "address": 1, "chirp_after": 0, **({"realtime": realtime} if realtime else {})}}
    cfg = cabinet_config_from_mapping(data, Path(tmp) / "bench.toml")

    async def main() -> dict[str, Any]:
        cab = Cabinet(cfg)
        await cab.start()
        assert cab.state is not None  # start() folded the journal: set from here on
        ctx = multiprocessing.get_context("spawn")
        here, there = ctx.Pipe()
        host = ctx.Process(target=_poller, args=(there, cab.sas.pty[2], polls, realtime), daemon=True)
        host.start()
        done = asyncio.get_running_loop().run_in_executor(None, here.recv)
        games0, t0 = cab.state.games, time.perf_counter()
        while not done.done():  # the player: max bet, as fast as the cabinet takes it
            if cab.state.credits < 3 * 10:
                await cab.command(ATTENDANT, "add_credits", {"credits": 3_000})
            if cab.state.slot.pending is not None:
                await cab.command(PLAYER, "pick", {"choice": 1})
            await cab.command(PLAYER, "spin" if cab.state.slot.free else "max_bet", {})
            await cab.shown.wait()
        seconds = time.perf_counter() - t0
        result = await done
        host.join(10)
        result.update(games=cab.state.games - games0, seconds=seconds, stats=vars(cab.sas.line.stats))
        await cab.stop()
        return result

    try:
        return asyncio.run(main())
    finally:
        quiet.setLevel(level)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    import tempfile

    from controller.cli import CliError

    if args.polls < 1 or args.pi4_factor <= 0:
        raise CliError("--polls must be at least 1 and --pi4-factor positive")
    tmp = tempfile.mkdtemp(prefix="croupier-bench-sas-")
    say(f"SAS: {args.polls:,} polls (general polls, 1A, 1C, 0F, 19) over a pty from a host process, while a "
        f"{args.title} cabinet spins at full speed (journal on, fsync per game) ...")
    r = _measure(tmp, args.title, args.polls, args.realtime)
    times = r["times"]
    if not times:
        raise CliError("no poll was answered")
    p50, p99, worst = (_percentile(times, q) * 1000 for q in (50, 99, 100))
    rate = r["games"] / r["seconds"]
    late = sum(t > 0.020 for t in times)
    say(f"  first response byte: p50 {p50:.3f} ms, p99 {p99:.3f} ms, max {worst:.3f} ms (goal p99 < 10 ms); "
        f"{late} past SAS's 20 ms, {r['missed']} unanswered")
    say(f"  meanwhile {r['games']:,} games at {rate:.0f} spins/s")
    say(f"  Raspberry Pi 4 estimate (x{args.pi4_factor:g}): p50 {p50 * args.pi4_factor:.2f} ms, "
        f"p99 {p99 * args.pi4_factor:.2f} ms")
    return {"polls": args.polls, "answered": len(times), "unanswered": r["missed"], "over_20ms": late,
            "p50_ms": round(p50, 3),
            "p99_ms": round(p99, 3), "max_ms": round(worst, 3), "games": r["games"], "spins_per_s": round(rate, 1),
            "pi4_factor": args.pi4_factor, "pi4_p50_ms_estimate": round(p50 * args.pi4_factor, 2),
            "pi4_p99_ms_estimate": round(p99 * args.pi4_factor, 2), "line": r["stats"], "title": args.title,
            "realtime": args.realtime}
