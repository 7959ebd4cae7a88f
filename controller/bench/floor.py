"""`croupier bench floor`: journal rows/s into a three-node JetStream cluster from many machines writing as they stream, one machine's catch-up after an outage, memory per connected machine, and a check that the floor holds every row once."""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HELP = ("floor: journal rows/s from N simulated machines writing while they stream into a local three-node "
        "JetStream cluster (R3), and with rows queued on each; one machine's catch-up after an outage; memory per "
        "connected machine; every machine's floor copy checked against its journal (needs pip install -e '.[floor]')")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--machines", type=int, default=200, help="simulated machines streaming at once (default 200)")
    parser.add_argument("--rows", type=int, default=500, help="journal rows each machine writes (default 500)")
    parser.add_argument("--group", type=int, default=10,
                        help="rows per group commit of a simulated machine (default 10)")
    parser.add_argument("--catchup", type=int, default=1_000_000,
                        help="rows one machine writes while the floor is away (default 1,000,000)")
    parser.add_argument("--part", choices=("ingest", "progressive"), default="ingest",
                        help="ingest (default): journal rows/s; progressive: hit confirmation (floor_progressive.py)")
    from controller.bench.floor_progressive import add_arguments as progressive_arguments

    progressive_arguments(parser)


# ---------------------------------------------------------------------------------------------- journals


def _journal(folder: Path, ident: str, durable: bool = True) -> Any:
    from controller.journal import Journal

    j = Journal(folder / ident / f"{ident}.journal", ident, key_file=folder / "keys" / f"{ident}.key",
                anchor=folder / ident / "anchor" if durable else None)
    if not durable:
        # Two hundred machines have two hundred SD cards, not this one disk: their commits skip the fsyncs (of
        # the journal and of an anchor) that would make this bench measure the disk, not the floor.
        assert j._db is not None
        j._db.execute("PRAGMA synchronous=OFF")
    return j


def _records(start: int, count: int) -> list[dict[str, Any]]:
    return [{"kind": "spin", "n": n, "bet": 100, "win": n % 7 * 50} for n in range(start, start + count)]


def _fill(folder: Path, ident: str, rows: int, start: int = 0, durable: bool = True) -> Path:
    """Append `rows` rows to a machine's journal (made if new) in commits of 1,000; its path."""
    with _journal(folder, ident, durable) as j:
        for at in range(start, start + rows, 1000):
            j.append_many(_records(at, min(start + rows, at + 1000) - at))
    return folder / ident / f"{ident}.journal"


def _play(folder: Path, idents: list[str], rows: int, group: int, go: Any, took: Any) -> None:
    """The simulated machines (another process): each commits `group` rows in turn until it has `rows`; `took`
    gets the seconds that took (the pace the floor had to keep)."""
    journals = [_journal(folder, ident, durable=False) for ident in idents]
    go.wait()
    t0 = time.perf_counter()
    for at in range(0, rows, group):
        for j in journals:
            j.append_many(_records(at, min(group, rows - at)))
    took.value = time.perf_counter() - t0
    for j in journals:
        j.close()


# ---------------------------------------------------------------------------------------------- memory


def _rss_kib(pid: int) -> int:
    """Resident memory of a process in KiB (Linux /proc; 0 where it cannot be read)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _servers_kib(cluster: Any) -> int:
    return sum(_rss_kib(n.proc.pid) for n in cluster.nodes if n.proc is not None)


# ---------------------------------------------------------------------------------------------- phases


async def _replicate(journals: dict[str, Path], urls: list[str], last: int, started: Callable[[], None] | None = None,
                     connected: Callable[[], None] | None = None) -> float:
    """Run one replicator per journal until each has `last` rows on the floor; seconds from their start (their
    connect and first read of the floor included) or from `started`, run once every replicator has reached the
    floor (after `connected`), to the last acknowledgement."""
    from controller.floor.replicator import Replicator
    from controller.floor.wire import subject_for

    # poll=0.05: the writers are another process, so nothing wakes a replicator after a commit as a runtime does
    reps = [Replicator(path, subject_for(ident), urls, timeout=10.0, poll=0.05) for ident, path in journals.items()]
    t0 = time.perf_counter()
    tasks = [asyncio.create_task(r.run()) for r in reps]
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 120
        while not all(r.status.reachable for r in reps):
            if loop.time() > deadline:
                raise RuntimeError("the replicators did not reach the floor in 120 s")
            await asyncio.sleep(0.01)  # a bench's poll of 200 replicators' status, not a test's synchronisation
        if connected is not None:
            connected()
        if started is not None:
            t0 = time.perf_counter()
            started()
        for rep in reps:
            if not await rep.wait_acked(last, 600):
                raise RuntimeError(f"{rep.machine}: only {rep.status.acked_seq} of {last} rows acknowledged")
        return time.perf_counter() - t0
    finally:
        for rep in reps:
            rep.stop()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _verify(journals: dict[str, Path], urls: list[str]) -> dict[str, int]:
    """Every machine's floor copy against its journal: rows missing, doubled or different, and chains broken."""
    from controller.floor.ingest import IngestChecker, floor_rows
    from controller.floor.replicator import JournalReader
    from controller.floor.server import connect
    from controller.floor.wire import STREAM

    nc = await connect(urls, name="croupier-bench-verify")
    try:
        js = nc.jetstream(timeout=10)
        checker = IngestChecker(batch=256)  # the floor's own check, over the whole stream in stream order
        end = (await js.stream_info(STREAM)).state.last_seq
        task = asyncio.create_task(checker.run(js))
        ok = await checker.wait_for(lambda c: c.cursor >= end, 300)
        checker.stop()
        await asyncio.gather(task, return_exceptions=True)
        lost = doubled = different = 0
        for ident, path in journals.items():
            reader = JournalReader(path)
            local = reader.rows(0, 10**9)
            reader.close()
            copy = [row for _, row in await floor_rows(js, ident, timeout=300)]
            seqs = [r.seq for r in copy]
            doubled += len(seqs) - len(set(seqs))
            lost += len({r.seq for r in local} - set(seqs))
            different += sum(1 for a, b in zip(copy, local) if a != b) if len(copy) == len(local) else 0
        return {"lost": lost, "doubled": doubled, "different": different,
                "chains_broken": len(checker.broken) + (0 if ok else 1), "floor_rows_checked": checker.rows}
    finally:
        await nc.close()


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    from controller.cli import CliError
    from controller.floor.server import NatsCluster, wait_ready

    if getattr(args, "part", "ingest") == "progressive":
        from controller.bench.floor_progressive import run as run_progressive

        return run_progressive(args, say)
    for name in ("machines", "rows", "group", "catchup"):
        if getattr(args, name) < 1:
            raise CliError(f"--{name} must be at least 1")
    out: dict[str, Any] = {"machines": args.machines, "replicas": 3, "nodes": 3}
    with tempfile.TemporaryDirectory(prefix="croupier-bench-floor-") as tmp:
        folder = Path(tmp) / "journals"
        try:
            cluster = NatsCluster(Path(tmp) / "cluster", nodes=3)
        except FileNotFoundError as exc:
            raise CliError(str(exc)) from None
        cluster.start()
        try:
            asyncio.run(wait_ready(cluster.urls, replicas=3))
            idents = [f"m{i:03d}" for i in range(args.machines)]
            journals = {ident: folder / ident / f"{ident}.journal" for ident in idents}

            # ingest: every machine writes its rows in group commits (another process) while its replicator streams
            say(f"ingest: {args.machines} machines writing {args.rows} rows each in commits of {args.group} ...")
            fork = multiprocessing.get_context("fork")
            go, took = fork.Event(), fork.Value("d", 0.0)
            writer = fork.Process(target=_play, args=(folder, idents, args.rows, args.group, go, took))
            for ident in idents:
                _journal(folder, ident, durable=False).close()  # made (and keyed) before the replicators open them
            writer.start()
            memory: dict[str, int] = {}

            def connected() -> None:
                memory["client_kib"] = _rss_kib(os.getpid()) - memory["client_before"]
                memory["servers_kib"] = _servers_kib(cluster) - memory["servers_before"]

            import nats  # noqa: F401 - loaded before the baseline: its code is one per process, not per machine

            memory["client_before"], memory["servers_before"] = _rss_kib(os.getpid()), _servers_kib(cluster)
            try:
                ingest_s = asyncio.run(_replicate(journals, cluster.urls, args.rows, go.set, connected))
            finally:
                go.set()
                writer.join()
            total = args.machines * args.rows
            say(f"ingest: {total:,} rows in {ingest_s:.2f} s: {total / ingest_s:,.0f} rows/s (the machines took "
                f"{took.value:.2f} s to write them)")
            out.update({"rows_per_machine": args.rows, "group_commit_rows": args.group, "ingest_rows": total,
                        "ingest_seconds": round(ingest_s, 3), "ingest_rows_per_s": round(total / ingest_s),
                        "writers_seconds": round(took.value, 3)})
            # the floor's pace rather than the writers': every machine has as many rows again queued when its
            # replicator starts (a floor back after an outage)
            for ident in idents:
                _fill(folder, ident, args.rows, start=args.rows, durable=False)
            queued_s = asyncio.run(_replicate(journals, cluster.urls, 2 * args.rows))
            say(f"ingest: {total:,} rows queued on {args.machines} machines in {queued_s:.2f} s: "
                f"{total / queued_s:,.0f} rows/s")
            out.update({"ingest_queued_seconds": round(queued_s, 3), "ingest_queued_rows_per_s": round(total / queued_s)})
            out.update({"client_kib_per_machine": round(memory["client_kib"] / args.machines, 1),
                        "servers_kib_per_machine": round(memory["servers_kib"] / args.machines, 1)})
            say(f"memory per connected machine: {out['client_kib_per_machine']:,.0f} KiB in the replicators' "
                f"process, {out['servers_kib_per_machine']:,.0f} KiB across the three servers")

            # catch-up: a machine on the floor, then an outage during which it writes `catchup` rows
            say(f"catch-up: one machine writes {args.catchup:,} rows while the floor is away ...")
            backlog = {"backlog": _fill(folder, "backlog", 1000)}
            asyncio.run(_replicate(backlog, cluster.urls, 1000))
            _fill(folder, "backlog", args.catchup, start=1000)
            catchup_s = asyncio.run(_replicate(backlog, cluster.urls, 1000 + args.catchup))
            say(f"catch-up: {args.catchup:,} rows in {catchup_s:.2f} s: {args.catchup / catchup_s:,.0f} rows/s")
            out.update({"catchup_rows": args.catchup, "catchup_seconds": round(catchup_s, 3),
                        "catchup_rows_per_s": round(args.catchup / catchup_s)})

            say("checking every machine's floor copy against its journal ...")
            out.update(asyncio.run(_verify({**journals, **backlog}, cluster.urls)))
            say(f"on the floor: {out['floor_rows_checked']:,} rows checked; lost {out['lost']}, doubled "
                f"{out['doubled']}, different {out['different']}, chains broken {out['chains_broken']}")
        finally:
            cluster.stop()
    return out
