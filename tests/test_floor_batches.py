"""The replicator's batches against a stand-in JetStream that loses, delays and doubles messages at every step (hypothesis): the floor copy is always the journal, row for row, once each, in order."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.floor.ingest import IngestChecker
from controller.floor.replicator import Replicator, pack
from controller.floor.wire import (HDR_EXPECTED_SUBJECT_SEQ, HDR_MSG_ID, SUBJECT_PREFIX, FloorRow, decode_rows,
                                   encode_row, subject_for)

pytestmark = pytest.mark.skipif(importlib.util.find_spec("nats") is None, reason="nats-py is not installed")

MACHINE = "m1"
SUBJECT = subject_for(MACHINE)
# What happens to a publish: acked; lost before the stream saw it; stored but its ack lost (a node died under
# it, a timeout); proposed and still replicating when the client gives up (applied at a later step); the
# replicator killed (and a new one started, with other batch sizes) right after the message was stored, or
# while it was still replicating.
OUTCOMES = ("ok", "lost", "ack_lost", "in_flight", "killed", "killed_in_flight")


def chain(n: int) -> list[FloorRow]:
    rows, prev = [], "0" * 64
    for seq in range(1, n + 1):
        mac = hashlib.sha256(f"{seq}:{prev}".encode()).hexdigest()
        rows.append(FloorRow(seq, MACHINE, seq * 1000, 2, f'{{"kind":"spin","n":{seq}}}', prev, mac))
        prev = mac
    return rows


class FakeReader:
    """A journal (JournalReader's interface) whose machine plays on: each read finds one more row of `to_come`."""

    def __init__(self, journal: list[FloorRow], to_come: list[FloorRow] | None = None) -> None:
        self.journal = journal
        self.to_come = to_come or journal

    def rows(self, after: int, limit: int) -> list[FloorRow]:
        if len(self.journal) < len(self.to_come):
            self.journal.append(self.to_come[len(self.journal)])
        return self.journal[after:after + limit]

    def row(self, seq: int) -> FloorRow | None:
        return self.journal[seq - 1] if 1 <= seq <= len(self.journal) else None

    def last_seq(self) -> int:
        return len(self.journal)

    def close(self) -> None:
        pass


class Killed(Exception):
    pass


@dataclass
class FakeFloor:
    """A JetStream stream as the replicator sees it: de-duplication by message id (applied and in-flight
    messages: the server keeps the ids of proposals under way), the expected last subject sequence checked
    against applied messages only (the worst case: a new leader forgets what was in flight), other machines
    writing the same stream between."""

    outcomes: list[str]
    interleave: list[bool]
    stored: list[tuple[int, str, bytes, str]] = field(default_factory=list)  # (stream seq, subject, body, id)
    in_flight: list[tuple[str, bytes, str]] = field(default_factory=list)
    kill: Any = None
    steps: int = 0

    def _store(self, subject: str, data: bytes, ident: str) -> int:
        seq = len(self.stored) + 1
        self.stored.append((seq, subject, data, ident))
        return seq

    def _step(self) -> None:
        """The cluster moves on: a proposal under way lands, another machine writes."""
        self.steps += 1
        if self.in_flight and self.steps % 3 == 0:  # a proposal lands a few requests later
            self._store(*self.in_flight.pop(0))
        if self.interleave and self.interleave.pop(0):
            other = FloorRow(len(self.stored) + 1, "other", 0, 2, "{}", "a" * 64, "b" * 64)
            self._store(SUBJECT_PREFIX + "other", encode_row(other), f"other:{len(self.stored)}")

    def last_on(self, subject: str) -> tuple[int, bytes] | None:
        mine = [(seq, data) for seq, subj, data, _ in self.stored if subj == subject]
        return mine[-1] if mine else None

    async def publish(self, subject: str, payload: bytes, timeout: float, headers: dict[str, str]) -> Any:
        from nats.js.api import PubAck

        self._step()
        ident = headers[HDR_MSG_ID]
        for seq, _, _, known in self.stored:
            if known == ident:
                return PubAck(stream="S", seq=seq, duplicate=True)
        if any(known == ident for _, _, known in self.in_flight):
            raise asyncio.TimeoutError("a copy of a message under way: the server holds the answer back")
        last = self.last_on(subject)
        if int(headers[HDR_EXPECTED_SUBJECT_SEQ]) != (last[0] if last else 0):
            raise RuntimeError("wrong last sequence")
        outcome = self.outcomes.pop(0) if self.outcomes else "ok"
        if outcome == "lost":
            raise asyncio.TimeoutError("lost")
        if outcome in ("in_flight", "killed_in_flight"):
            self.in_flight.append((subject, payload, ident))
            if outcome == "killed_in_flight":
                self.kill()
                raise Killed()
            raise asyncio.TimeoutError("no ack in time")
        seq = self._store(subject, payload, ident)
        if outcome == "ack_lost":
            raise ConnectionError("the node died before the ack")
        if outcome == "killed":
            self.kill()
            raise Killed()
        return PubAck(stream="S", seq=seq)

    async def get_last_msg(self, stream: str, subject: str) -> Any:
        from nats.js.errors import NotFoundError

        self._step()
        last = self.last_on(subject)
        if last is None:
            raise NotFoundError
        return type("RawMsg", (), {"seq": last[0], "data": last[1]})()


class FakeConnection:
    is_closed = False
    is_connected = True

    def __init__(self, floor: FakeFloor) -> None:
        self.floor = floor

    def jetstream(self, timeout: float) -> FakeFloor:
        return self.floor

    async def close(self) -> None:
        pass


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.integers(1, 120), grow=st.integers(0, 60), outcomes=st.lists(st.sampled_from(OUTCOMES), max_size=25),
       interleave=st.lists(st.booleans(), max_size=40),
       sizes=st.lists(st.tuples(st.integers(1, 40), st.integers(200, 4000)), min_size=1, max_size=6))
def test_the_floor_copy_is_the_journal_whatever_is_lost_delayed_or_killed(
        rows: int, grow: int, outcomes: list[str], interleave: list[bool], sizes: list[tuple[int, int]]) -> None:
    everything = chain(rows + grow)
    journal = everything[:rows]
    floor = FakeFloor(list(outcomes), list(interleave))

    async def scenario() -> None:
        generation = 0
        while True:
            batch, max_bytes = sizes[generation % len(sizes)]
            generation += 1
            rep = Replicator(Path("unused"), SUBJECT, ["nats://unused"], batch=batch, max_bytes=max_bytes, poll=0.001,
                             max_backoff=0.0005, connector=lambda: _connected(floor))
            rep.reader = FakeReader(journal, everything)  # the machine plays on while the floor misbehaves
            task = asyncio.create_task(rep.run())
            floor.kill = task.cancel  # a replicator killed mid-batch: the next one starts from the floor
            acked = asyncio.create_task(rep.wait_acked(len(everything), 30))
            await asyncio.wait({task, acked}, return_when=asyncio.FIRST_COMPLETED)
            assert task.done() or acked.result(), f"no progress in 30 s: {rep.status}"
            rep.stop()
            acked.cancel()
            await asyncio.gather(task, acked, return_exceptions=True)
            assert rep.status.diverged is None, rep.status.diverged
            if rep.status.acked_seq == len(everything):
                return
            assert generation < 50, "the replicator never finished"

    asyncio.run(scenario())
    while floor.in_flight:  # whatever was still under way lands too, unchecked
        floor._store(*floor.in_flight.pop(0))
    mine = [(seq, data) for seq, subject, data, _ in floor.stored if subject == SUBJECT]
    copy = [row for _, data in mine for row in decode_rows(data)]
    assert copy == everything  # every row, once, in order
    checker = IngestChecker()
    for seq, subject, data, ident in floor.stored:
        if subject == SUBJECT:
            checker.take(seq, subject, data, ident)
    assert not checker.broken and checker.chains[MACHINE].seq == len(everything)


async def _connected(floor: FakeFloor) -> FakeConnection:
    return FakeConnection(floor)


def test_pack_fills_a_message_up_to_its_row_and_byte_limits_and_never_leaves_a_row_behind() -> None:
    rows = chain(10)
    size = len(encode_row(rows[0]))
    sent, body = pack(rows, 4, 10**6)
    assert sent == rows[:4] and decode_rows(body) == rows[:4]
    sent, body = pack(rows, 100, 3 * size + 2)  # three rows and their two newlines
    assert sent == rows[:3] and len(body) == 3 * size + 2
    sent, body = pack(rows, 100, 1)  # one row bigger than the limit still goes, alone
    assert sent == rows[:1] and body == encode_row(rows[0])


def test_the_floor_counts_as_away_from_its_last_answer_on_the_replicators_clock() -> None:
    now = [1000.0]
    floor = FakeFloor([], [])
    up = asyncio.Event()

    async def connector() -> FakeConnection:
        if not up.is_set():
            raise ConnectionError("no servers available for connection")
        return FakeConnection(floor)

    async def scenario() -> None:
        rep = Replicator(Path("unused"), SUBJECT, ["nats://unused"], max_backoff=0.001, connector=connector,
                         clock=lambda: now[0])
        rep.reader = FakeReader(chain(5))
        task = asyncio.create_task(rep.run())
        try:
            assert not await rep.wait_acked(1, 0.05)
            assert not rep.status.reachable and "no servers" in (rep.status.error or "")
            assert rep.status.out_for(1600.0) == 600.0  # away since the replicator started
            now[0] = 5000.0
            up.set()
            assert await rep.wait_acked(5, 10)
            assert rep.status.reachable and rep.status.last_contact == 5000.0 and rep.status.out_for(9999.0) == 0.0
            assert rep.status.messages == 1  # five rows, one message
        finally:
            rep.stop()
            await task

    asyncio.run(scenario())
