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
import logging
from pathlib import Path
from typing import Any

from controller.floor.wire import ChainError, ChainState, FloorRow, check_link, msg_id
from controller.journal import JournalIntegrityError

__all__ = ["check_on_start", "restore_journal", "FloorUnreachable"]

log = logging.getLogger("croupier.floor")


class FloorUnreachable(RuntimeError):
    """No floor server answered in time."""


async def _floor_last(floor: Any, timeout: float) -> tuple[int, FloorRow | None]:
    """Ask until the floor answers or `timeout` has passed: no server yet, no quorum, a stream leader being
    elected (NoResponders, 503, a nats request timeout) are all transient while the deadline lasts."""
    from controller.floor.replicator import floor_last
    from controller.floor.server import connect

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    delay = 0.05
    nc: Any = None
    try:
        while True:
            left = deadline - loop.time()
            try:
                if nc is None:
                    nc = await asyncio.wait_for(connect(
                        floor.servers, credentials=floor.credentials, name=f"croupier-{floor.machine}-start",
                        max_reconnect_attempts=1, connect_timeout=min(left, 2.0)), left)
                return await asyncio.wait_for(floor_last(nc.jetstream(timeout=min(left, 2.0)), floor.subject), left)
            except Exception as exc:  # noqa: BLE001 - every failure is "not answered yet" until the deadline
                if nc is not None and nc.is_closed:
                    nc = None  # its one reconnect failed too: connect afresh
                if loop.time() + delay >= deadline:
                    raise FloorUnreachable(f"{type(exc).__name__}: {exc}") from None
            await asyncio.sleep(delay)  # backoff between tries, bounded by the deadline
            delay = min(delay * 2, 0.5)
    finally:
        if nc is not None:
            await nc.close()


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
    from controller.journal import write_copy

    if journal.exists() or anchor.exists():
        raise FileExistsError(f"{journal if journal.exists() else anchor} exists: restore writes a replacement "
                              f"machine's journal, never over one (keep the old file for the regulator, move it "
                              f"away, then restore)")
    if not rows:
        raise JournalIntegrityError(f"the floor holds no row of {machine}: nothing to restore")
    state = ChainState(machine)
    for row in rows:
        try:
            state = check_link(state, row, msg_id(machine, row.seq))
        except ChainError as exc:
            raise JournalIntegrityError(f"the floor copy does not check: {exc}") from None
    # every MAC, under this key: the floor's copy is genuine, not merely linked
    return write_copy(journal, machine, [r.as_tuple() for r in rows], key_file=key_file, anchor=anchor)
