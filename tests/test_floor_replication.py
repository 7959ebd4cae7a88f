"""Journal replication on a real three-node JetStream cluster (tests/floor_cluster.py): nothing lost or doubled through node kills, a frozen node, a floor outage and a killed replicator."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.floor.ingest import IngestChecker, floor_rows
from controller.floor.replicator import JournalReader, Replicator
from controller.floor.server import NatsCluster, connect
from controller.floor.wire import subject_for
from controller.journal import Journal
from tests.floor_cluster import floor_cluster  # noqa: F401 - the module's cluster fixture

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


class Machine:
    """A simulated table: its own keyed, anchored journal, written by controller/journal.py in group commits."""

    def __init__(self, folder: Path, ident: str) -> None:
        self.ident = ident
        self.path = folder / ident / f"{ident}.journal"
        self.journal = Journal(self.path, ident, key_file=folder / "keys" / f"{ident}.key",
                               anchor=folder / ident / f"{ident}.anchor")
        self.n = 0

    def commit(self) -> None:
        size = 1 + self.n % 3  # 1, 2 or 3 records a group commit
        self.journal.append_many([{"kind": "spin", "machine": self.ident, "n": self.n + i, "bet": 100 + i}
                                  for i in range(size)])
        self.n += size

    @property
    def last_seq(self) -> int:
        return self.journal.last_seq


async def play(machines: list[Machine], stop: asyncio.Event) -> None:
    """Every machine keeps committing, whatever the floor does (the pace of a busy floor, not a synchronisation)."""
    while not stop.is_set():
        for m in machines:
            m.commit()
        await asyncio.sleep(0.01)


async def until(checker: IngestChecker, predicate: Any, timeout: float, what: str, cluster: NatsCluster) -> None:
    """Wait for a condition, tested each time the checker reads a batch, times out or loses its consumer."""
    if not await checker.wait_for(lambda _: predicate(), timeout):
        raise AssertionError(f"timed out after {timeout:g} s waiting for {what}\n{cluster.log_tail(8)}")


def start_replicator_process(m: Machine, cluster: NatsCluster) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "controller.floor.replicator", "--journal", str(m.path),
                             "--subject", subject_for(m.ident), "--servers", ",".join(cluster.urls)], cwd=ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_nothing_is_lost_or_doubled_through_node_kills_a_frozen_node_an_outage_and_a_killed_replicator(
        floor_cluster: NatsCluster, tmp_path: Path) -> None:  # noqa: F811
    cluster = floor_cluster
    machines = [Machine(tmp_path, f"m{i}") for i in range(50)]
    in_process, separate = machines[:-1], machines[-1]  # the last one's replicator runs (and is killed) on its own

    async def scenario() -> None:
        stop_play = asyncio.Event()
        player = asyncio.create_task(play(machines, stop_play))
        reps = [Replicator(m.path, subject_for(m.ident), cluster.urls, timeout=1.0, max_backoff=0.5)
                for m in in_process]
        tasks = [asyncio.create_task(r.run()) for r in reps]
        proc = start_replicator_process(separate, cluster)
        nc = await connect(cluster.urls, name="croupier-test-checker")
        checker = IngestChecker()
        checking = asyncio.create_task(checker.run(nc.jetstream(timeout=2.0)))

        def floor_seq(m: Machine) -> int:
            chain = checker.chains.get(m.ident)
            return chain.seq if chain else 0

        def everyone_past(marks: dict[str, int], by: int) -> bool:
            return all(floor_seq(m) >= marks[m.ident] + by for m in machines)

        try:
            await until(checker, lambda: everyone_past({m.ident: 0 for m in machines}, 20), 30, "first rows",
                        cluster)

            cluster.kill(0)  # one node dies: the other two keep a quorum
            marks = {m.ident: floor_seq(m) for m in machines}
            await until(checker, lambda: everyone_past(marks, 20), 40, "replication with a node dead", cluster)

            os.kill(proc.pid, signal.SIGKILL)  # a machine's replicator dies mid-stream
            proc.wait(timeout=10)
            cluster.pause(1)  # a second node freezes: no quorum, the floor is unreachable
            marks = {m.ident: m.last_seq for m in machines}
            await until(checker, lambda: all(m.last_seq >= marks[m.ident] + 30 for m in machines), 30,
                        "play going on without the floor", cluster)
            await until(checker, lambda: all(not r.status.reachable and r.status.error for r in reps), 30,
                        "every replicator to find the floor unreachable", cluster)
            assert all(r.status.acked_seq < m.last_seq for r, m in zip(reps, in_process))  # rows wait on the machine
            assert not checker.broken

            cluster.resume(1)
            cluster.start(0)
            proc = start_replicator_process(separate, cluster)
            marks = {m.ident: m.last_seq for m in machines}  # rows written during the outage must all arrive
            await until(checker, lambda: everyone_past(marks, 1), 60, "catch-up after the outage", cluster)

            stop_play.set()
            await player
            await until(checker, lambda: all(floor_seq(m) == m.last_seq for m in machines), 60, "the last rows",
                        cluster)
            assert all(r.status.acked_seq == m.last_seq and r.status.diverged is None
                       for r, m in zip(reps, in_process))
            assert not checker.broken, checker.broken

            js = nc.jetstream(timeout=5.0)
            for m in machines:
                reader = JournalReader(m.path)
                local = reader.rows(0, 10**9)
                reader.close()
                copy = await floor_rows(js, m.ident)
                stream_seqs = [s for s, _ in copy]  # one per row: a message's rows share its stream sequence
                assert list(dict.fromkeys(stream_seqs)) == sorted(set(stream_seqs)) and stream_seqs == sorted(stream_seqs)
                assert [row for _, row in copy] == local, f"{m.ident}: the floor copy differs from its journal"
                assert len(local) == m.last_seq > 100
        finally:
            stop_play.set()
            checker.stop()
            for r in reps:
                r.stop()
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)
            await asyncio.gather(player, checking, *tasks, return_exceptions=True)
            await nc.close()
            for m in machines:
                m.journal.close()

    asyncio.run(scenario())


def test_a_journal_behind_the_floor_stops_replication_and_says_so(floor_cluster: NatsCluster,  # noqa: F811
                                                                  tmp_path: Path) -> None:
    """A machine whose journal lost rows the floor holds (an old SD card image) never overwrites the floor."""
    machine = Machine(tmp_path / "a", "behind")
    for _ in range(5):
        machine.commit()

    async def scenario() -> None:
        rep = Replicator(machine.path, subject_for("behind"), floor_cluster.urls)
        task = asyncio.create_task(rep.run())
        assert await rep.wait_acked(machine.last_seq, 30)
        rep.stop()
        await task
        first = machine.last_seq
        machine.journal.close()
        # the same machine id, a journal that ends earlier: an older copy of the card
        older = Machine(tmp_path / "b", "behind")
        older.commit()
        again = Replicator(older.path, subject_for("behind"), floor_cluster.urls)
        await asyncio.wait_for(again.run(), 30)  # returns by itself: replication stopped
        older.journal.close()
        assert again.status.diverged is not None
        assert again.status.diverged == (f"the floor holds row {first} of behind, but the journal ends at row 1: "
                                         f"the journal is behind the floor")
        nc = await connect(floor_cluster.urls)
        assert len(await floor_rows(nc.jetstream(), "behind")) == first
        await nc.close()

    asyncio.run(scenario())
