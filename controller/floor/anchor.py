"""The floor as a journal's anchor off the machine: the check on start (a journal behind the floor refuses to run) and restore from the floor.

The local anchor (controller/journal.py) catches a journal that lost rows, but not a journal restored
together with the anchor it matched (an old SD card image). The floor's last acknowledged row of the machine
catches that: on start, a journal that does not hold that row, or holds another row at that seq, is
refused (JournalIntegrityError: `croupier run` exits 2). A floor that cannot be reached on start is waited
for `timeout` seconds and then said in the log: the machine runs on its local anchor, as without a floor.

`restore_journal` writes a replacement machine's journal from the floor: the rows exactly as they were (their
MACs included), then every MAC is verified under the machine's journal key (the key of the machine it
replaces, from its backup; the floor never holds it) before the journal and its anchor are put in place.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import hmac
import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

from controller.floor.wire import ChainError, ChainState, FloorRow, check_link, msg_id
from controller.journal import JOURNAL_SCHEMA, Journal, JournalIntegrityError, JournalKeyError

__all__ = ["check_on_start", "restore_journal", "FloorUnreachable"]

log = logging.getLogger("croupier.floor")


class FloorUnreachable(RuntimeError):
    """No floor server answered in time."""


async def _floor_last(floor: Any, timeout: float) -> tuple[int, FloorRow | None]:
    from controller.floor.replicator import floor_last
    from controller.floor.server import connect

    async def ask() -> tuple[int, FloorRow | None]:
        nc = await connect(floor.servers, credentials=floor.credentials, name=f"croupier-{floor.machine}-start",
                           max_reconnect_attempts=1, connect_timeout=min(timeout, 2.0))
        try:
            return await floor_last(nc.jetstream(timeout=timeout), floor.subject)
        finally:
            await nc.close()

    try:
        return await asyncio.wait_for(ask(), timeout)
    except Exception as exc:  # noqa: BLE001 - no server, no quorum, no stream yet: all "unreachable" here
        raise FloorUnreachable(f"{type(exc).__name__}: {exc}") from None


def _in_thread(coro: Any) -> Any:
    """Run a coroutine to completion from sync code that may itself be inside an event loop (a runtime's start)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def check_on_start(floor: Any, journal: Path, last_seq: int, timeout: float = 5.0) -> str:
    """Compare a journal with the floor's last acknowledged row of its machine before it runs; a status line, or
    JournalIntegrityError when the journal is behind the floor or disagrees with it."""
    from controller.floor.replicator import JournalReader

    try:
        _, row = _in_thread(_floor_last(floor, timeout))
    except FloorUnreachable as exc:
        log.warning("floor unreachable on start (%s): %s runs on its local anchor and replicates once the floor "
                    "answers", exc, floor.machine)
        return f"floor unreachable on start ({exc})"
    if row is None:
        return "the floor holds no row of this machine yet"
    if row.seq > last_seq:
        raise JournalIntegrityError(
            f"journal {journal} ends at row {last_seq}, but the floor acknowledged row {row.seq} of {floor.machine}: "
            f"rows {last_seq + 1} to {row.seq} are missing (an older copy of the journal and its anchor?); "
            f"`croupier floor restore {floor.machine}` rebuilds it from the floor")
    reader = JournalReader(journal)
    try:
        mine = reader.row(row.seq)
    finally:
        reader.close()
    if mine != row:
        raise JournalIntegrityError(f"journal {journal} row {row.seq} is not the row the floor acknowledged for "
                                    f"{floor.machine} (the journal was replaced or rewritten)")
    return f"the floor holds rows 1..{row.seq} of {floor.machine}; the journal has {last_seq}"


def restore_journal(rows: list[FloorRow], machine: str, journal: Path, key_file: Path, anchor: Path) -> int:
    """Write `journal` (and its anchor) from the floor's rows of `machine`; returns the row count. Refuses to
    overwrite an existing journal or anchor, a chain that does not check, and rows that do not verify under the key."""
    from controller.journal import _DDL, _Anchor, _key_id, _read_key  # the journal's own format, written verbatim

    for path in (journal, anchor):
        if path.exists():
            raise FileExistsError(f"{path} exists: restore writes a replacement machine's journal, never over one "
                                  f"(keep the old file for the regulator, move it away, then restore)")
    if not rows:
        raise JournalIntegrityError(f"the floor holds no row of {machine}: nothing to restore")
    state = ChainState(machine)
    for row in rows:
        try:
            state = check_link(state, row, msg_id(machine, row.seq))
        except ChainError as exc:
            raise JournalIntegrityError(f"the floor copy does not check: {exc}") from None
    key = _read_key(key_file)
    if key is None:
        raise JournalKeyError(f"journal key {key_file} is missing: a restored journal verifies only under the key "
                              f"of the machine it replaces (restore that key from its backup first)")
    journal.parent.mkdir(parents=True, exist_ok=True)
    tmp = journal.with_name(f".{journal.name}.restore-{os.getpid()}")
    for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
        leftover.unlink(missing_ok=True)
    db = sqlite3.connect(str(tmp), isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        with db:
            db.execute("BEGIN")
            for statement in _DDL.split(";"):  # not executescript: it would commit this transaction first
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('table_id', ?), ('schema', ?), ('key_id', ?)",
                       (machine, str(JOURNAL_SCHEMA), _key_id(key)))
            db.executemany("INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?)", [r.as_tuple() for r in rows])
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    try:
        # every MAC, under this key: the floor's copy is genuine, not merely linked
        with Journal(tmp, machine, key_file=key_file, anchor=None, readonly=True) as check:
            count = check.last_seq
    except JournalIntegrityError:
        for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
            leftover.unlink(missing_ok=True)
        raise
    os.replace(tmp, journal)
    _Anchor(anchor, machine, hmac.new(key, digestmod=hashlib.sha256)).create(rows[-1].seq, rows[-1].mac)
    return count
