"""The ID-003 host driver against the simulated validator over a real pty: notes, tickets, every fault, power loss, a
silent line; the pure status tracker under hypothesis; the asyncio face."""

from __future__ import annotations

import asyncio
import json
import pathlib
import threading
from typing import Callable, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.validator import (
    AsyncValidator, DriverTiming, Escrowed, PoweredUp, Rejected, Returned, Stacked, ValidatorCleared, ValidatorDriver,
    ValidatorFault, ValidatorSim,
)
from drivers.validator.driver import StatusTracker
from drivers.validator.protocol import NOTE_TABLES, Frame, Item, Status, escrow_data
from drivers.validator.sim import SimError

FAST = DriverTiming(poll_interval=0.02, response_timeout=0.05, offline_after=3, reconnect_interval=0.05)
WAIT = 5.0
BARCODE = "001234567890123456"


class Events:
    """The driver's events as they come, waited on with a timeout."""

    def __init__(self) -> None:
        self.seen: list[object] = []
        self._from = 0  # wait_for looks at the events since the last mark()
        self._cond = threading.Condition()

    def __call__(self, event: object) -> None:
        with self._cond:
            self.seen.append(event)
            self._cond.notify_all()

    def wait_for(self, event: object, timeout: float = WAIT) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: event in self.seen[self._from:], timeout), f"no {event} in {self.seen}"

    def wait_until(self, predicate: Callable[[list[object]], bool], timeout: float = WAIT) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: predicate(self.seen[self._from:]), timeout), self.seen

    def since(self, mark: int) -> list[object]:
        with self._cond:
            return self.seen[mark:]

    def mark(self) -> int:
        with self._cond:
            self._from = len(self.seen)
            return self._from


@pytest.fixture
def line() -> Iterator[tuple[ValidatorSim, ValidatorDriver, Events]]:
    """A validator just switched on, its driver configured to take every USD note and tickets."""
    sim = ValidatorSim("USD").start()
    events = Events()
    driver = ValidatorDriver(sim.url, events, timing=FAST).start()
    try:
        events.wait_for(PoweredUp("none"))
        driver.enable(frozenset(NOTE_TABLES["USD"].values()), True)
        assert sim.wait_until(lambda s: s.phase == "idle" and not s.device.inhibited, WAIT), sim.status()
        yield sim, driver, events
    finally:
        driver.stop()
        sim.stop()


def idle(sim: ValidatorSim) -> Callable[[ValidatorSim], bool]:
    return lambda s: s.phase == "idle"


def test_note_escrow_then_stacked_once_with_one_ack(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    sim, driver, events = line
    mark = events.mark()
    sim.insert_note(2000)
    events.wait_for(Escrowed(note_cents=2000))
    driver.stack()
    events.wait_for(Stacked(note_cents=2000))
    assert sim.wait_until(idle(sim), WAIT)
    assert events.since(mark) == [Escrowed(2000), Stacked(2000)]
    assert sim.status()["stacked"] == [Item(note_cents=2000)]
    assert sim.device.counters["acks"] == 1  # the validator heard one ACK for its VEND VALID
    assert driver.counters["acks_sent"] == 1


def test_return_from_escrow(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    sim, driver, events = line
    mark = events.mark()
    sim.insert_note(500)
    events.wait_for(Escrowed(note_cents=500))
    driver.return_item()
    events.wait_for(Returned(note_cents=500))
    assert sim.wait_until(idle(sim), WAIT)
    assert events.since(mark) == [Escrowed(500), Returned(500, None, "returned")]
    assert sim.status()["returned"] == [Item(note_cents=500)] and sim.status()["stacked"] == []


def test_ticket_escrow_carries_the_barcode(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    sim, driver, events = line
    sim.insert_ticket(BARCODE)
    events.wait_for(Escrowed(barcode=BARCODE))
    driver.stack()
    events.wait_for(Stacked(barcode=BARCODE))
    assert sim.wait_until(idle(sim), WAIT)
    assert sim.status()["stacked"] == [Item(barcode=BARCODE)]


def test_rejections_in_words(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    sim, driver, events = line
    sim.insert_note(300)  # no such note: the validator cannot tell what it is
    events.wait_for(Rejected("denomination not recognised"))
    driver.enable(frozenset({100}), False)
    assert sim.wait_until(lambda s: s.status()["notes"] == [100] and not s.status()["tickets"], WAIT)
    assert sim.wait_until(idle(sim), WAIT)
    mark = events.mark()
    sim.insert_note(2000)
    events.wait_for(Rejected("inhibited (denomination or tickets disabled)"))
    assert sim.wait_until(idle(sim), WAIT)
    sim.insert_ticket(BARCODE)  # tickets are off too
    inhibited = Rejected("inhibited (denomination or tickets disabled)")
    events.wait_until(lambda seen: seen.count(inhibited) == 2)
    assert events.since(mark) == [inhibited, inhibited]
    assert sim.device.counters["rejected"] == 3


def test_nothing_enabled_inhibits(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    sim, driver, _ = line
    driver.enable(frozenset(), False)
    assert sim.wait_until(lambda s: s.device.inhibited, WAIT)
    with pytest.raises(SimError, match="inhibited"):
        sim.insert_note(100)


@pytest.mark.parametrize("switch,code", [("set_jam", "jam"), ("set_stacker_full", "stacker_full"),
                                         ("set_stacker_open", "stacker_open"), ("set_cheat", "cheat"),
                                         ("set_failure", "failure")])
def test_fault_and_clear(line: tuple[ValidatorSim, ValidatorDriver, Events], switch: str, code: str) -> None:
    sim, _, events = line
    mark = events.mark()
    getattr(sim, switch)(True)
    events.wait_for(ValidatorFault(code))
    getattr(sim, switch)(False)
    events.wait_for(ValidatorCleared(code))
    assert events.since(mark) == [ValidatorFault(code), ValidatorCleared(code)]


def test_jam_in_escrow_keeps_the_note(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    """A fault while a note waits in escrow: the note is escrowed once, and stacks once the jam clears."""
    sim, driver, events = line
    mark = events.mark()
    sim.insert_note(10000)
    events.wait_for(Escrowed(10000))
    sim.set_jam(True)
    events.wait_for(ValidatorFault("jam"))
    sim.set_jam(False)
    events.wait_for(ValidatorCleared("jam"))
    driver.stack()
    events.wait_for(Stacked(10000))
    assert events.since(mark) == [Escrowed(10000), ValidatorFault("jam"), ValidatorCleared("jam"), Stacked(10000)]


def test_power_loss_in_escrow(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    sim, driver, events = line
    mark = events.mark()
    sim.insert_note(5000)
    events.wait_for(Escrowed(5000))
    sim.power_loss()
    events.wait_for(PoweredUp("acceptor"))
    # the driver resets it and sends the settings again: it takes notes as before; the note went back
    assert sim.wait_until(lambda s: s.phase == "idle" and not s.device.inhibited, WAIT), sim.status()
    assert sim.device.counters["returned_on_power_up"] == 1 and sim.status()["stacked"] == []
    assert events.since(mark) == [Escrowed(5000), PoweredUp("acceptor")]
    sim.insert_note(100)
    events.wait_for(Escrowed(100))


def test_power_loss_while_stacking(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    sim, driver, events = line
    mark = events.mark()
    sim.insert_note(2000)
    events.wait_for(Escrowed(2000))
    sim.set_stall(True)  # the note stops half way into the stacker
    driver.stack()
    assert sim.wait_until(lambda s: s.device.phase == "stacking", WAIT)
    sim.power_loss()
    events.wait_for(PoweredUp("stacker"))
    assert sim.wait_until(lambda s: s.phase == "idle" and not s.device.inhibited, WAIT)
    assert sim.device.counters["stacked_on_power_up"] == 1
    # the driver never saw VEND VALID: the cabinet settles the note from PoweredUp("stacker") and its journal
    assert events.since(mark) == [Escrowed(2000), PoweredUp("stacker")]


def test_power_off_long_is_offline_then_power_up(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    sim, _, events = line
    mark = events.mark()
    sim.power_off()
    events.wait_for(ValidatorFault("offline"))
    sim.power_on()
    events.wait_for(PoweredUp("none"))
    assert events.since(mark) == [ValidatorFault("offline"), ValidatorCleared("offline"), PoweredUp("none")]


def test_offline_validator(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    sim, driver, events = line
    mark = events.mark()
    sim.set_offline(True)
    events.wait_for(ValidatorFault("offline"))
    assert driver.offline
    sim.set_offline(False)
    events.wait_for(ValidatorCleared("offline"))
    assert events.since(mark) == [ValidatorFault("offline"), ValidatorCleared("offline")]
    sim.insert_note(100)  # and it works as before
    events.wait_for(Escrowed(100))


def test_stack_sent_while_offline_is_sent_again(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    """The cabinet stacks while the line is down: the command is kept and sent when the validator answers again,
    since it still holds the note in escrow."""
    sim, driver, events = line
    mark = events.mark()
    sim.insert_note(1000)
    events.wait_for(Escrowed(1000))
    sim.set_offline(True)
    driver.stack()
    assert driver.wait_counters(lambda c: c["command_failures"] >= 1, WAIT)
    sim.set_offline(False)
    events.wait_for(Stacked(1000))
    assert sim.wait_until(idle(sim), WAIT)
    assert sim.status()["stacked"] == [Item(note_cents=1000)] and sim.device.counters["acks"] == 1
    assert [e for e in events.since(mark) if not isinstance(e, (ValidatorFault, ValidatorCleared))] == [
        Escrowed(1000), Stacked(1000)]


def test_new_process_takes_over_an_escrow() -> None:
    """The host process restarts while a note waits in escrow: the new driver, told of it by the journal, does not
    report it again, and stacking it credits it."""
    sim = ValidatorSim("USD").start()
    first, second = Events(), Events()
    driver = ValidatorDriver(sim.url, first, timing=FAST).start()
    try:
        first.wait_for(PoweredUp("none"))
        driver.enable(frozenset({2000}), False)
        assert sim.wait_until(lambda s: s.phase == "idle" and not s.device.inhibited, WAIT)
        sim.insert_note(2000)
        first.wait_for(Escrowed(2000))
        driver.stop()
        driver = ValidatorDriver(sim.url, second, timing=FAST, in_escrow=Item(note_cents=2000)).start()
        assert driver.wait_counters(lambda c: c["answers"] >= 2, WAIT)
        driver.stack()
        second.wait_for(Stacked(2000))
        assert second.seen == [Stacked(2000)]
        assert sim.wait_until(lambda s: s.status()["stacked"] == [Item(note_cents=2000)], WAIT)
    finally:
        driver.stop()
        sim.stop()


def test_garbled_answers_are_survived(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    """Corrupt answers and line noise cost a poll each, below the offline threshold: no event at all."""
    sim, driver, events = line
    mark = events.mark()
    before = driver.counters["bad_frames"]
    sim.faults.corrupt = 2
    assert driver.wait_counters(lambda c: c["bad_frames"] >= before + 2, WAIT)
    sim.inject(b"\xfc\xff\x00\x13garbage")
    sim.insert_note(2000)
    events.wait_for(Escrowed(2000))
    assert events.since(mark) == [Escrowed(2000)]


def test_silent_line_from_the_start() -> None:
    sim = ValidatorSim("USD")
    sim.set_offline(True)
    sim.start()
    events = Events()
    driver = ValidatorDriver(sim.url, events, timing=FAST).start()
    try:
        events.wait_for(ValidatorFault("offline"))
        sim.set_offline(False)
        events.wait_for(PoweredUp("none"))
        assert events.seen == [ValidatorFault("offline"), ValidatorCleared("offline"), PoweredUp("none")]
    finally:
        driver.stop()
        sim.stop()


def test_async_face_hands_events_on_the_loop_in_order() -> None:
    sim = ValidatorSim("USD").start()

    async def main() -> list[object]:
        got: list[object] = []
        loop_thread = threading.get_ident()
        done = asyncio.Event()

        def on_event(event: object) -> None:
            assert threading.get_ident() == loop_thread
            got.append(event)
            if isinstance(event, PoweredUp):
                validator.enable(frozenset({2000}), False)
            elif isinstance(event, Escrowed):
                validator.stack()
            elif isinstance(event, Stacked):
                done.set()

        validator = AsyncValidator(sim.url or "", timing=FAST, on_event=on_event)
        async with validator:
            await asyncio.to_thread(sim.wait_until, lambda s: s.phase == "idle" and not s.device.inhibited, WAIT)
            sim.insert_note(2000)
            await asyncio.wait_for(done.wait(), WAIT)
        return got

    try:
        assert asyncio.run(main()) == [PoweredUp("none"), Escrowed(2000), Stacked(2000)]
    finally:
        sim.stop()


# ---- the pure tracker ------------------------------------------------------------------------------------------

USD = NOTE_TABLES["USD"]


def test_missed_vend_valid_still_credits_once() -> None:
    t = StatusTracker(USD)
    out = [t.on_status(f) for f in (Frame(Status.IDLING), Frame(Status.ESCROW, b"\x63"), Frame(Status.STACKING),
                                    Frame(Status.STACKED), Frame(Status.IDLING))]
    events = [e for evs, _ in out for e in evs]
    assert events == [Escrowed(500), Stacked(500)]


def test_escrow_gone_without_stack_is_returned_not_credited() -> None:
    t = StatusTracker(USD)
    events = [e for f in (Frame(Status.ESCROW, b"\x61"), Frame(Status.IDLING)) for e in t.on_status(f)[0]]
    assert events == [Escrowed(100), Returned(100, None, "left escrow without being stacked")]


def test_vend_valid_acked_every_time_credited_once() -> None:
    t = StatusTracker(USD)
    t.on_status(Frame(Status.ESCROW, b"\x67"))
    first = t.on_status(Frame(Status.VEND_VALID))
    second = t.on_status(Frame(Status.VEND_VALID))
    assert first == ([Stacked(10000)], ["ack"]) and second == ([], ["ack"])


def test_resumed_escrow_is_credited_not_reported_again() -> None:
    t = StatusTracker(USD)
    t.resume(Item(note_cents=2000))
    assert t.on_status(Frame(Status.ESCROW, b"\x65")) == ([], ["configure"])
    assert t.on_status(Frame(Status.VEND_VALID)) == ([Stacked(2000)], ["ack"])
    t = StatusTracker(USD)
    t.resume(Item(note_cents=2000))
    assert t.on_status(Frame(Status.STACKED)) == ([Stacked(2000)], ["configure"])


def test_resumed_escrow_gone_is_unsettled_not_returned() -> None:
    t = StatusTracker(USD)
    t.resume(Item(barcode=BARCODE))
    assert t.on_status(Frame(Status.IDLING)) == ([], ["configure"])
    assert t.counters["unsettled"] == 1


def test_vend_valid_of_an_unknown_item_is_acked_and_counted() -> None:
    t = StatusTracker(USD)
    t.on_status(Frame(Status.IDLING))
    assert t.on_status(Frame(Status.VEND_VALID)) == ([], ["ack"])
    assert t.counters["unknown_vend_valid"] == 1


def test_unknown_escrow_code_is_returned() -> None:
    t = StatusTracker(USD)
    t.on_status(Frame(Status.IDLING))
    assert t.on_status(Frame(Status.ESCROW, b"\x6a")) == ([], ["return"])


statuses = st.sampled_from([Frame(s) for s in (Status.IDLING, Status.DISABLED, Status.ACCEPTING, Status.STACKING,
                                               Status.VEND_VALID, Status.STACKED, Status.RETURNING,
                                               Status.INITIALIZE, Status.POWER_UP, Status.POWER_UP_BILL_IN_ACCEPTOR,
                                               Status.POWER_UP_BILL_IN_STACKER, Status.STACKER_OPEN,
                                               Status.JAM_IN_ACCEPTOR, Status.JAM_IN_STACKER, Status.CHEATED,
                                               Status.PAUSE, 0x99)]
                           + [Frame(Status.ESCROW, escrow_data(Item(note_cents=c), USD)) for c in (100, 2000)]
                           + [Frame(Status.ESCROW, b"\x6a"), Frame(Status.REJECTING, b"\x71")])


@given(st.lists(statuses, max_size=40))
def test_tracker_never_credits_twice(seq: list[Frame]) -> None:
    """Any run of statuses: each escrow ends in at most one Stacked or Returned, never without an Escrowed of the
    same item; faults alternate with their clearing."""
    t = StatusTracker(USD)
    open_item: tuple[int | None, str | None] | None = None
    fault: str | None = None
    for frame in seq:
        for e in t.on_status(frame)[0]:
            if isinstance(e, Escrowed):
                open_item = (e.note_cents, e.barcode)
            elif isinstance(e, (Stacked, Returned)):
                assert open_item == (e.note_cents, e.barcode)
                open_item = None
            elif isinstance(e, ValidatorFault):
                assert fault is None
                fault = e.code
            elif isinstance(e, ValidatorCleared):
                assert fault == e.code
                fault = None
            elif isinstance(e, PoweredUp):
                open_item = None


def test_text_commands(line: tuple[ValidatorSim, ValidatorDriver, Events]) -> None:
    sim, driver, events = line
    assert sim.command("note 2000") == "ok note 2000"
    events.wait_for(Escrowed(2000))
    assert sim.command("note 500").startswith("error: the validator is busy")
    driver.return_item()
    events.wait_for(Returned(2000))
    assert sim.command("stacker open") == "ok stacker open"
    events.wait_for(ValidatorFault("stacker_open"))
    assert sim.command("stacker closed") == "ok stacker closed"
    events.wait_for(ValidatorCleared("stacker_open"))
    assert sim.command("jam sideways").startswith("error: unknown command")
    assert sim.command("ticket 12").startswith("error: a ticket's barcode is 18 digits")
    status = json.loads(sim.command("status").removeprefix("ok "))
    assert status["phase"] == "idle" and status["returned"] == [str(Item(note_cents=2000))]
    assert "power off|on|cycle" in sim.command("help")


def test_start_validator_from_config() -> None:
    from drivers.validator import ValidatorConfig
    from drivers.validator.aio import start_validator

    async def main() -> list[object]:
        got: list[object] = []
        powered = asyncio.Event()

        def on_event(event: object) -> None:
            got.append(event)
            powered.set()

        assert start_validator(ValidatorConfig("none"), on_event) == (None, None)
        validator, sim = start_validator(ValidatorConfig("sim", (100,), "USD"), on_event, timing=FAST)
        assert validator is not None and sim is not None
        try:
            await asyncio.wait_for(powered.wait(), WAIT)
        finally:
            await validator.stop()
            sim.stop()
        return got

    assert asyncio.run(main()) == [PoweredUp("none")]


def test_over_tcp_and_a_port_that_cannot_open(tmp_path: pathlib.Path) -> None:
    sim = ValidatorSim("EUR")
    url = sim.listen_tcp(0)
    sim.start()
    events, missing = Events(), Events()
    driver = ValidatorDriver(url, events, country="EUR", timing=FAST).start()
    nowhere = ValidatorDriver(str(tmp_path / "ttyUSB9"), missing, timing=FAST).start()
    try:
        events.wait_for(PoweredUp("none"))
        driver.enable(frozenset({20000}), False)
        assert sim.wait_until(lambda s: s.phase == "idle" and not s.device.inhibited, WAIT)
        sim.insert_note(20000)
        events.wait_for(Escrowed(20000))
        missing.wait_for(ValidatorFault("offline"))
        assert nowhere.wait_counters(lambda c: c["open_failures"] >= 3, WAIT)
        assert missing.seen == [ValidatorFault("offline")]
    finally:
        driver.stop()
        nowhere.stop()
        sim.stop()
