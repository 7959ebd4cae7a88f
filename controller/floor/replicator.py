"""A machine's replicator: streams its journal's committed rows, in order, to its subject on the floor, and catches up after any outage.

The local journal stays the source of truth: the replicator only reads it (its own SQLite connection,
`query_only`, on the event loop in small batches; WAL lets it read beside the runtime's one writer). It learns where
the floor stands from the floor itself, the last row on its subject, so a replicator that was killed, a
machine that was off, or a floor that lost a node all resume from the floor's last acknowledged row:

- the rows not yet on the floor go in batches, each one message (up to `batch` rows and `max_bytes`; wire.py)
  with message id `<machine>:<first seq>` and `Nats-Expected-Last-Subject-Sequence` = the stream sequence
  of the machine's message before; one message in flight at a time, its acknowledgement awaited. So the floor
  holds each row once, in order, with no gap: a message is stored whole or not at all, a second message
  starting at the same row is dropped as a copy (even one with other boundaries, re-sent after an outage,
  even while the first is still being replicated), and one that would not follow the floor's last message is
  refused (expected sequence). The expected sequence allows only one message in flight per subject (stream
  sequences are the stream's, shared by every machine: the next one cannot be known before the ack), so a
  catch-up goes at one round trip per batch, not per row;
- anything that goes wrong (no server, no quorum, a timeout, a refused expected sequence, an ack saying the
  message was a copy) drops back to asking the floor for its last row and going on from there, with a growing
  pause (at most `max_backoff`) after an error;
- a floor whose last row is not the journal's row of that seq (another MAC), or is beyond the journal's
  end, means the journal and the floor disagree: the replicator stops and says so (`diverged`); it never
  overwrites the floor.

`status.last_contact` (on the runtime's clock) is the last time the floor answered (an ack, a read of its last
row, or an idle connection still up): a site may stop play when it is too long ago (config.py `stop_play_after`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

from controller.floor.wire import (HDR_EXPECTED_SUBJECT_SEQ, HDR_MSG_ID, STREAM, FloorRow, decode_rows, encode_row,
                                   machine_of, msg_id)

__all__ = ["Replicator", "FloorStatus", "JournalReader", "floor_last", "pack", "stop_play_reason"]

log = logging.getLogger("croupier.floor")


class JournalReader:
    """Committed rows of a journal file, read beside its writer (never writes, never checkpoints)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA query_only=1")
            self._db = db
        return self._db

    def rows(self, after: int, limit: int) -> list[FloorRow]:
        """Up to `limit` rows with seq > after, in order ([] if the journal has none yet)."""
        try:
            cur = self._conn().execute(
                "SELECT seq, table_id, ts_ns, schema, record, prev_hash, hash FROM journal WHERE seq > ? "
                "ORDER BY seq LIMIT ?", (after, limit))
            return [FloorRow(*row) for row in cur]
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise

    def row(self, seq: int) -> FloorRow | None:
        found = self.rows(seq - 1, 1)
        return found[0] if found and found[0].seq == seq else None

    def last_seq(self) -> int:
        try:
            return self._conn().execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return 0
            raise

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


async def floor_last(js: Any, subject: str) -> tuple[int, FloorRow | None]:
    """The floor's last row on a subject: (its message's stream sequence, the row), or (0, None) if there is none."""
    from nats.js.errors import NotFoundError

    try:
        msg = await js.get_last_msg(STREAM, subject)
    except NotFoundError:
        return 0, None
    return msg.seq, decode_rows(msg.data or b"")[-1]


def pack(rows: list[FloorRow], max_rows: int, max_bytes: int) -> tuple[list[FloorRow], bytes]:
    """The next message: the longest run of `rows` from the first that fits `max_rows` and `max_bytes` (at least
    one row, whatever its size), and its body."""
    parts: list[bytes] = []
    size = 0
    for row in rows[:max_rows]:
        body = encode_row(row)
        if parts and size + 1 + len(body) > max_bytes:
            break
        parts.append(body)
        size += len(body) + (1 if len(parts) > 1 else 0)
    return rows[:len(parts)], b"\n".join(parts)


@dataclass
class FloorStatus:
    """Where a machine's replication stands (for the runtime, the floor page and the tests)."""

    acked_seq: int = 0            # the journal's rows 1..acked_seq are on the floor (acknowledged, R3)
    journal_seq: int = 0          # the journal's last row when last looked at
    reachable: bool = False
    last_ack: float = 0.0         # time.time() of the last acknowledgement (0: none yet)
    diverged: str | None = None   # the journal and the floor disagree: replication stopped, why
    error: str | None = None      # the last transient error
    last_contact: float = 0.0     # the replicator's clock when the floor last answered (at start: the start)
    messages: int = 0             # messages acknowledged (each one batch of rows)

    @property
    def lag(self) -> int:
        return max(self.journal_seq - self.acked_seq, 0)

    def out_for(self, now: float) -> float:
        """How long the floor has been unreachable at `now` (0 while it answers)."""
        return 0.0 if self.reachable else max(now - self.last_contact, 0.0)


def stop_play_reason(status: FloorStatus, after_minutes: float | None, now: float) -> str | None:
    """Why no new round or spin may start for want of the floor (`[floor] stop_play_after`), or None."""
    if after_minutes is None:
        return None
    out = status.out_for(now)
    if out < after_minutes * 60:
        return None
    return (f"no floor for {out / 60:.0f} min (stop_play_after = {after_minutes:g}): play stops until the floor is "
            f"back")


class Replicator:
    """Streams one journal to its subject. `await run()` until `stop()`; call `wake()` after each commit."""

    def __init__(self, journal: Path, subject: str, servers: list[str] | tuple[str, ...], *,
                 credentials: Path | None = None, batch: int = 1024, max_bytes: int = 256 * 1024, poll: float = 0.5,
                 timeout: float = 2.0, max_backoff: float = 2.0, clock: Callable[[], float] = time.time,
                 connector: Callable[[], Awaitable[Any]] | None = None) -> None:
        self.machine = machine_of(subject)
        self.subject = subject
        self.servers = list(servers)
        self.credentials = credentials
        self.reader = JournalReader(journal)
        # max_bytes stays well under NATS's default max_payload (1 MiB), headers included
        self.batch, self.max_bytes, self.poll, self.timeout, self.max_backoff = batch, max_bytes, poll, timeout, max_backoff
        self.clock = clock
        self._connector = connector  # tests: a stand-in for controller.floor.server.connect
        self.status = FloorStatus(last_contact=clock())
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._acked_changed = asyncio.Event()
        self._stream_seq = 0  # the stream sequence of the floor's row acked_seq

    def wake(self) -> None:
        """New rows were committed (the runtime calls this after each group commit; polling covers the rest)."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def _stopping(self) -> bool:
        # A cancel (the runtime's stop) that nats-py swallowed inside a connect still counts on the task.
        task = asyncio.current_task()
        return self._stop.is_set() or (task is not None and task.cancelling() > 0)

    async def wait_acked(self, seq: int, timeout: float) -> bool:
        """Wait until rows 1..seq are on the floor; False on timeout (or if replication diverged)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.status.acked_seq < seq and self.status.diverged is None:
            self._acked_changed.clear()
            left = deadline - loop.time()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self._acked_changed.wait(), left)
            except asyncio.TimeoutError:
                return False
        return self.status.acked_seq >= seq

    def _contact(self) -> None:
        self.status.reachable, self.status.error = True, None
        self.status.last_contact = self.clock()

    async def _connect(self) -> Any:
        if self._connector is not None:
            return await self._connector()
        from controller.floor.server import connect

        # A bounded try (each server twice), never cancelled midway: nats-py's connect may not end when
        # cancelled. A connection that gave up reconnecting is made again by run().
        return await connect(self.servers, credentials=self.credentials, name=f"croupier-{self.machine}",
                             max_reconnect_attempts=1)

    async def run(self) -> None:
        """Replicate until stopped or diverged; the floor being away is waited out, never fatal."""
        backoff = min(0.05, self.max_backoff)
        nc = None
        try:
            while not self._stopping():
                try:
                    if nc is None or nc.is_closed:
                        nc = await self._connect()
                    js = nc.jetstream(timeout=self.timeout)
                    while not self._stopping():
                        await self._sync(js)
                        if self.status.diverged:
                            log.critical("floor replication of %s stopped: %s", self.machine, self.status.diverged)
                            return
                        backoff = min(0.05, self.max_backoff)
                        await self._stream(js, nc)  # returns to resync after an ack that says "a copy"
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the floor is away or refused a row: resync and go on
                    self.status.reachable = False
                    self.status.error = f"{type(exc).__name__}: {exc}"
                    log.warning("floor replication of %s paused: %s", self.machine, self.status.error)
                    try:
                        await asyncio.wait_for(self._stop.wait(), backoff)
                    except asyncio.TimeoutError:
                        pass
                    backoff = min(backoff * 2, self.max_backoff)
        finally:
            if nc is not None:
                try:
                    await nc.close()
                except Exception:  # noqa: BLE001 - closing a connection to a dead floor
                    pass
            self.reader.close()

    async def _sync(self, js: Any) -> None:
        """Learn the floor's last row of this machine and check it against the journal."""
        stream_seq, row = await floor_last(js, self.subject)
        self._contact()
        self.status.journal_seq = self.reader.last_seq()
        if row is None:
            self._stream_seq = 0
            self._set_acked(0)
            return
        mine = self.reader.row(row.seq)
        if mine is None:
            self.status.diverged = (f"the floor holds row {row.seq} of {self.machine}, but the journal ends at row "
                                    f"{self.status.journal_seq}: the journal is behind the floor")
        elif mine != row:
            self.status.diverged = (f"the floor's row {row.seq} of {self.machine} is not the journal's row {row.seq} "
                                    f"(another MAC or content): the journal and the floor disagree")
        else:
            self._stream_seq = stream_seq
            self._set_acked(row.seq)

    def _set_acked(self, seq: int) -> None:
        self.status.acked_seq = seq
        self._acked_changed.set()

    async def _stream(self, js: Any, nc: Any) -> None:
        while not self._stopping():
            self._wake.clear()
            # read on the loop, not in a thread: a stop may close the reader, never under a read (a batch of a
            # local WAL database takes about a millisecond)
            rows = self.reader.rows(self.status.acked_seq, self.batch)
            if not rows:
                self.status.journal_seq = self.status.acked_seq
                if getattr(nc, "is_connected", False):  # idle: the connection's pings say the floor is there
                    self._contact()
                else:
                    self.status.reachable = False
                try:
                    await asyncio.wait_for(self._wake.wait(), self.poll)
                except asyncio.TimeoutError:
                    pass
                continue
            self.status.journal_seq = max(self.status.journal_seq, rows[-1].seq)
            while rows:
                sent, body = pack(rows, self.batch, self.max_bytes)
                headers = {HDR_MSG_ID: msg_id(self.machine, sent[0].seq),
                           HDR_EXPECTED_SUBJECT_SEQ: str(self._stream_seq)}
                ack = await js.publish(self.subject, body, timeout=self.timeout, headers=headers)
                if ack.duplicate:
                    # a message starting at this row is on the floor (or on its way) already, with boundaries
                    # that may differ from these: learn what the floor holds from the floor
                    log.info("floor replication of %s: message %s was a copy; resyncing", self.machine,
                             headers[HDR_MSG_ID])
                    return
                self._stream_seq = ack.seq
                self.status.last_ack = time.time()
                self.status.messages += 1
                self._contact()
                self._set_acked(sent[-1].seq)
                rows = rows[len(sent):]
                if self._stopping():
                    return


def main(argv: list[str] | None = None) -> int:
    """Run one replicator in its own process (the fault tests SIGKILL it; a machine runs it inside its runtime)."""
    p = argparse.ArgumentParser(prog="python -m controller.floor.replicator")
    p.add_argument("--journal", required=True, type=Path)
    p.add_argument("--subject", required=True)
    p.add_argument("--servers", required=True, help="comma-separated NATS URLs")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    rep = Replicator(args.journal, args.subject, args.servers.split(","))

    async def go() -> None:
        import signal

        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, rep.stop)
        await rep.run()

    asyncio.run(go())
    return 3 if rep.status.diverged else 0


if __name__ == "__main__":
    raise SystemExit(main())
