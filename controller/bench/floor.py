"""`croupier bench floor`: journal rows/s into a three-node JetStream cluster from many simulated machines, and one machine's catch-up after an outage."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HELP = ("floor: journal rows/s from N simulated machines into a local three-node JetStream cluster (R3), one "
        "machine's catch-up rows/s, and rows lost or doubled (needs pip install -e '.[floor]')")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--machines", type=int, default=200, help="simulated machines streaming at once (default 200)")
    parser.add_argument("--rows", type=int, default=100, help="journal rows per machine (default 100)")
    parser.add_argument("--catchup", type=int, default=5_000,
                        help="rows one machine has queued after an outage (default 5,000)")
    parser.add_argument("--part", choices=("ingest", "progressive"), default="ingest",
                        help="ingest (default): journal rows/s; progressive: hit confirmation (floor_progressive.py)")
    from controller.bench.floor_progressive import add_arguments as progressive_arguments

    progressive_arguments(parser)


def _fill(folder: Path, ident: str, rows: int) -> Path:
    from controller.journal import Journal

    path = folder / ident / f"{ident}.journal"
    with Journal(path, ident, key_file=folder / "keys" / f"{ident}.key", anchor=folder / ident / "anchor") as j:
        for start in range(0, rows, 1000):
            j.append_many([{"kind": "spin", "n": n, "bet": 100, "win": n % 7 * 50}
                           for n in range(start, min(rows, start + 1000))])
    return path


async def _stream(journals: dict[str, Path], urls: list[str]) -> float:
    from controller.floor.replicator import Replicator
    from controller.floor.wire import subject_for

    reps = [Replicator(path, subject_for(ident), urls, timeout=10.0) for ident, path in journals.items()]
    t0 = time.perf_counter()
    tasks = [asyncio.create_task(r.run()) for r in reps]
    try:
        for rep, path in zip(reps, journals.values()):
            last = rep.reader.last_seq()
            if not await rep.wait_acked(last, 600):
                raise RuntimeError(f"{rep.machine}: only {rep.status.acked_seq} of {last} rows acknowledged")
        return time.perf_counter() - t0
    finally:
        for rep in reps:
            rep.stop()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _count(urls: list[str]) -> dict[str, int]:
    from controller.floor.server import connect
    from controller.floor.wire import STREAM, SUBJECT_PREFIX

    nc = await connect(urls, name="croupier-bench-count")
    try:
        info = await nc.jetstream(timeout=10).stream_info(STREAM, subjects_filter=SUBJECT_PREFIX + ">")
        return {s[len(SUBJECT_PREFIX):]: n for s, n in (info.state.subjects or {}).items()}
    finally:
        await nc.close()


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    from controller.cli import CliError
    from controller.floor.server import NatsCluster, wait_ready

    if getattr(args, "part", "ingest") == "progressive":
        from controller.bench.floor_progressive import run as run_progressive

        return run_progressive(args, say)
    with tempfile.TemporaryDirectory(prefix="croupier-bench-floor-") as tmp:
        folder = Path(tmp)
        try:
            cluster = NatsCluster(folder / "cluster", nodes=3)
        except FileNotFoundError as exc:
            raise CliError(str(exc)) from None
        cluster.start()
        try:
            asyncio.run(wait_ready(cluster.urls, replicas=3))
            say(f"writing {args.machines} journals of {args.rows} rows, and one of {args.catchup} ...")
            many = {f"m{i:03d}": _fill(folder / "journals", f"m{i:03d}", args.rows) for i in range(args.machines)}
            backlog = {"backlog": _fill(folder / "journals", "backlog", args.catchup)}
            ingest_s = asyncio.run(_stream(many, cluster.urls))
            total = args.machines * args.rows
            say(f"ingest: {total} rows from {args.machines} machines in {ingest_s:.2f} s: {total / ingest_s:,.0f} rows/s")
            catchup_s = asyncio.run(_stream(backlog, cluster.urls))
            say(f"catch-up: {args.catchup} rows queued on one machine in {catchup_s:.2f} s: "
                f"{args.catchup / catchup_s:,.0f} rows/s")
            counts = asyncio.run(_count(cluster.urls))
            expected = {**{m: args.rows for m in many}, "backlog": args.catchup}
            lost = sum(max(n - counts.get(m, 0), 0) for m, n in expected.items())
            doubled = sum(max(counts.get(m, 0) - n, 0) for m, n in expected.items())
            say(f"on the floor: {sum(counts.values())} rows; lost {lost}, doubled {doubled}")
        finally:
            cluster.stop()
    return {"machines": args.machines, "rows_per_machine": args.rows, "ingest_rows": total,
            "ingest_seconds": round(ingest_s, 3), "ingest_rows_per_s": round(total / ingest_s),
            "catchup_rows": args.catchup, "catchup_seconds": round(catchup_s, 3),
            "catchup_rows_per_s": round(args.catchup / catchup_s), "lost": lost, "doubled": doubled,
            "replicas": 3, "nodes": 3}
