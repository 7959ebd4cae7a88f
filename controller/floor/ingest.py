"""The floor's ingest check: reads the journal stream in stream order and checks every machine's chain as it arrives (wire.check_message).

It keeps its own cursor (the last stream sequence checked) and reads with a short-lived pull consumer that
starts after it; any failure (a node gone, no quorum, a timeout) drops the consumer and makes a new one from
the cursor, so nothing is skipped or checked twice. A message may carry many rows (wire.py); each is checked. A machine whose chain breaks is listed in `broken` with
the reason; its later rows are not checked (the chain has no defined next link), the others go on.
It starts from the stream's beginning (later work: keep the per-machine state on the floor).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from controller.floor.server import drop_reader, reader, wait_progress
from controller.floor.wire import (HDR_MSG_ID, STREAM, SUBJECT_PREFIX, ChainError, ChainState, FloorRow,
                                   FloorWireError, check_message, decode_rows, machine_of)

__all__ = ["IngestChecker", "floor_rows"]

log = logging.getLogger("croupier.floor")


@dataclass
class IngestChecker:
    """`await run(js)` until `stop()`; `chains[machine]` is the last checked link, `broken[machine]` why one broke."""

    batch: int = 512
    chains: dict[str, ChainState] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)
    cursor: int = 0  # the last stream sequence checked
    checked: int = 0  # messages checked
    rows: int = 0     # rows checked
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _progress: asyncio.Event = field(default_factory=asyncio.Event)

    def stop(self) -> None:
        self._stop.set()

    def take(self, stream_seq: int, subject: str, data: bytes, header_id: str | None) -> None:
        """Check one message of the stream (pure apart from this checker's own state)."""
        if stream_seq <= self.cursor:
            return
        self.cursor = stream_seq
        self.checked += 1
        try:
            machine = machine_of(subject)
        except FloorWireError as exc:
            self.broken[subject] = str(exc)
            return
        if machine in self.broken:
            return
        try:
            rows = decode_rows(data)
            self.chains[machine] = check_message(self.chains.get(machine, ChainState(machine)), rows, header_id)
            self.rows += len(rows)
        except (FloorWireError, ChainError) as exc:
            self.broken[machine] = f"stream seq {stream_seq}: {exc}"
            log.critical("floor ingest: %s: %s", machine, self.broken[machine])

    async def wait_for(self, predicate: Any, timeout: float) -> bool:
        """Wait until predicate(self) holds, tested after each batch; False on timeout."""
        return await wait_progress(self._progress, lambda: predicate(self), timeout)

    async def run(self, js: Any, fetch_timeout: float = 0.5) -> None:
        while not self._stop.is_set():
            sub = None
            try:
                sub = await reader(js, STREAM, SUBJECT_PREFIX + ">", self.cursor + 1)
                while not self._stop.is_set():
                    try:
                        msgs = await sub.fetch(self.batch, timeout=fetch_timeout)
                    except asyncio.TimeoutError:
                        self._progress.set()
                        continue
                    for msg in msgs:
                        meta = msg.metadata
                        self.take(meta.sequence.stream, msg.subject, msg.data,
                                  (msg.headers or {}).get(HDR_MSG_ID))
                    self._progress.set()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the floor lost a node or quorum: a new consumer from the cursor
                log.warning("floor ingest: consumer lost at stream seq %d: %r", self.cursor, exc)
                self._progress.set()  # waiters re-test their conditions through an outage too
                try:
                    await asyncio.wait_for(self._stop.wait(), 0.2)
                except asyncio.TimeoutError:
                    pass
            finally:
                await drop_reader(sub)


async def floor_rows(js: Any, machine: str, timeout: float = 30.0) -> list[tuple[int, FloorRow]]:
    """Every row the floor holds for a machine, in stream order, as (stream seq of its message, row): the floor
    copy of its journal (restore and the tests read it). A consumer lost on the way (a node restarting, a leader moving) is
    made again after the last row read, until `timeout`."""
    subject = SUBJECT_PREFIX + machine
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    out: list[tuple[int, FloorRow]] = []
    messages = 0
    expected: int | None = None  # messages on the subject
    while True:
        sub = None
        try:
            if expected is None:
                info = await js.stream_info(STREAM, subjects_filter=subject)
                expected = (info.state.subjects or {}).get(subject, 0)
            if messages >= expected:
                return out
            sub = await reader(js, STREAM, subject, out[-1][0] + 1 if out else 1)
            while messages < expected and loop.time() <= deadline:
                try:
                    msgs = await sub.fetch(min(128, expected - messages), timeout=1.0)
                except asyncio.TimeoutError:
                    break  # rows are there but none came: the consumer may have gone with a node; make it again
                for m in msgs:
                    seq = m.metadata.sequence.stream
                    out.extend((seq, row) for row in decode_rows(m.data))
                    messages += 1
        except FloorWireError:
            raise
        except Exception as exc:  # noqa: BLE001 - the floor is settling (a nats timeout too): read on from the last row
            if loop.time() > deadline:
                raise TimeoutError(f"read {messages} floor messages of {machine} in {timeout:g} s: {exc!r}") from None
            await asyncio.sleep(0.1)  # backoff before a new consumer, bounded by the deadline
        finally:
            await drop_reader(sub)
        if loop.time() > deadline and (expected is None or messages < expected):
            raise TimeoutError(f"read {messages} of {expected} floor messages of {machine} in {timeout:g} s")
