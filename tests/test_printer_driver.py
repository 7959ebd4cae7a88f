"""The TCL printer driver: its host state machine on scripted status replies, and the real driver over a pty to the simulated printer (a ticket end to end, each fault and warning, a fault mid-job, power lost, a silent line)."""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.ticketlayout import CROUPIER_TEMPLATE, ticket_lines
from drivers.configreader import ConfigError
from drivers.printer.aio import AsyncPrinter, printer_for
from drivers.printer.config import PrinterConfig, printer_config
from drivers.printer.driver import PrinterDriver
from drivers.printer.events import (PRINTER_FAULTS, PRINTER_WARNINGS, PrinterCleared, PrinterEvent, PrinterFault,
                                    PrintFailed, Printed, TicketData)
from drivers.printer.host import HostConfig, TclHost
from drivers.printer.protocol import CLEAR, Flags, Status, encode_print, encode_status
from drivers.printer.sim import PrinterSim, SimError
from drivers.printer.simcontrol import command

TICKET = TicketData(venue="Croupier Casino", address="1 Main Street, Reno NV", machine="CAB-1", asset=1234,
                    number=42, cents=123456, validation="001234567890123456", printed="2026-11-26T19:07:59",
                    expires_days=30)
FAST = HostConfig(poll_interval=0.02, job_poll_interval=0.01, reply_timeout=0.2, offline_after=2.0, job_timeout=5.0)
WAIT = 10.0  # seconds any one event may take on a loaded machine before the test fails


# ---- the host on scripted replies --------------------------------------------------------------------------------

IDLE = Flags.TOP_OF_FORM | Flags.VALIDATION_DONE  # after a print: the last ticket's flags are still latched


def host() -> TclHost:
    h = TclHost(CROUPIER_TEMPLATE.fields, HostConfig())
    h.opened(0.0)
    h.poll(0.0)
    return h


def reply(h: TclHost, flags: Flags, now: float) -> list[PrinterEvent]:
    h.take_output()
    return h.receive(encode_status(Status(flags)), now)


def test_a_job_is_clear_then_print_then_status_requests() -> None:
    h = host()
    assert h.take_output() == b"\x05"
    assert reply(h, IDLE, 0.01) == []
    assert h.submit(TICKET, 0.02) == []
    assert h.take_output() == CLEAR + encode_print("C", CROUPIER_TEMPLATE.fields(TICKET)) + b"\x05"


def test_the_last_jobs_validation_flag_is_not_this_ones() -> None:
    h = host()
    reply(h, IDLE, 0.0)
    h.submit(TICKET, 0.1)
    # A reply still showing the previous ticket's flags (read before the printer took the job) proves nothing.
    assert reply(h, IDLE, 0.2) == []
    assert reply(h, Flags.BUSY, 0.3) == []
    assert reply(h, Flags.BUSY | Flags.VALIDATION_DONE, 0.4) == []
    assert reply(h, IDLE | Flags.PAPER_IN_CHUTE, 0.5) == [Printed(42)]


def test_a_fault_after_the_validation_number_is_printed_still_prints_the_ticket() -> None:
    h = host()
    reply(h, IDLE, 0.0)
    h.submit(TICKET, 0.1)
    reply(h, Flags.BUSY, 0.2)
    assert reply(h, Flags.BUSY | Flags.VALIDATION_DONE | Flags.PAPER_JAM, 0.3) == [PrinterFault("jam"), Printed(42)]


@pytest.mark.parametrize("flags, reason", [
    (Flags.PAPER_JAM, "jam"), (Flags.PAPER_OUT, "paper_out"), (Flags.PLATEN_UP, "head_open"),
    (Flags.PRINTER_OPEN, "head_open"), (Flags.PRINTER_OFFLINE, "offline"), (Flags.HEAD_ERROR, "offline"),
    (Flags.RESET, "power lost"), (Flags.COMMAND_ERROR, "rejected"), (Flags.DATA_ERROR, "rejected"),
])
def test_a_job_fails_on_a_flag_before_its_validation_number(flags: Flags, reason: str) -> None:
    h = host()
    reply(h, IDLE, 0.0)
    h.submit(TICKET, 0.1)
    reply(h, Flags.BUSY, 0.2)
    events = reply(h, flags, 0.3)
    assert events[-1] == PrintFailed(42, reason)
    assert events[:-1] == ([PrinterFault(reason)] if reason in PRINTER_FAULTS else [])


def test_a_job_that_never_prints_times_out_and_a_silent_line_fails_the_job() -> None:
    h = host()
    reply(h, IDLE, 0.0)
    h.submit(TICKET, 0.1)
    reply(h, Flags.BUSY, 0.2)
    assert h.poll(30.2) == [PrinterFault("offline"), PrintFailed(42, "offline")]
    h2 = host()
    reply(h2, IDLE, 0.0)
    h2.submit(TICKET, 0.1)
    for t in range(1, 31):
        reply(h2, Flags.BUSY, t)
    assert h2.poll(30.1) == [PrintFailed(42, "timeout")]


def test_tickets_fail_at_once_while_a_fault_stands_and_paper_low_is_only_a_warning() -> None:
    h = host()
    assert reply(h, IDLE | Flags.PAPER_LOW, 0.0) == [PrinterFault("paper_low")]
    assert h.submit(TICKET, 0.1) == []
    assert reply(h, IDLE | Flags.PAPER_LOW | Flags.PAPER_OUT, 0.2) == [PrinterFault("paper_out"),
                                                                       PrintFailed(42, "paper_out")]
    assert h.submit(replace(TICKET, number=43), 0.3) == [PrintFailed(43, "paper_out")]
    assert reply(h, IDLE, 0.4) == [PrinterCleared("paper_out"), PrinterCleared("paper_low")]


def test_a_printed_ticket_on_a_printer_that_stays_busy_is_printed_at_the_timeout() -> None:
    h = host()
    reply(h, IDLE, 0.0)
    h.submit(TICKET, 0.1)
    reply(h, Flags.BUSY, 0.2)
    for t in range(1, 30):
        assert reply(h, Flags.BUSY | Flags.VALIDATION_DONE, t) == []
    assert reply(h, Flags.BUSY | Flags.VALIDATION_DONE, 30.1) == [Printed(42)]


def test_a_ticket_waiting_on_a_printer_busy_all_along_times_out() -> None:
    h = host()
    reply(h, Flags.BUSY, 0.0)
    assert h.submit(TICKET, 0.1) == []
    assert b"^P|" not in h.take_output()
    for t in range(1, 30):
        assert reply(h, Flags.BUSY, t) == []
    assert reply(h, Flags.BUSY, 30.1) == [PrintFailed(42, "timeout")]


def test_stopping_gives_each_ticket_its_outcome_and_reports_no_fault() -> None:
    h = host()
    reply(h, IDLE, 0.0)
    h.submit(TICKET, 0.1)
    reply(h, Flags.BUSY | Flags.VALIDATION_DONE, 0.2)
    h.submit(replace(TICKET, number=43), 0.3)
    assert h.stopped(0.4) == [Printed(42), PrintFailed(43, "stopped")]
    h2 = host()
    reply(h2, IDLE, 0.0)
    h2.submit(TICKET, 0.1)
    assert h2.stopped(0.2) == [PrintFailed(42, "stopped")]


def test_a_ticket_the_layout_refuses_fails_naming_the_field() -> None:
    failed = host().submit(replace(TICKET, validation="123"), 0.0)
    assert len(failed) == 1 and isinstance(failed[0], PrintFailed)
    assert failed[0].reason.startswith("layout: validation: 18 digits")


step = st.one_of(st.tuples(st.just("status"), st.sampled_from([
    IDLE, Flags.BUSY, Flags.BUSY | Flags.VALIDATION_DONE, Flags.NONE, Flags.PAPER_JAM, Flags.PAPER_LOW,
    Flags.PAPER_OUT | Flags.BUSY, Flags.RESET, Flags.COMMAND_ERROR, Flags.PLATEN_UP | Flags.VALIDATION_DONE])),
    st.tuples(st.just("submit"), st.integers(1, 5)), st.tuples(st.just("wait"), st.floats(0.0, 3.0)),
    st.tuples(st.just("noise"), st.binary(max_size=8)))


@given(st.lists(step, max_size=40))
def test_every_ticket_gets_exactly_one_outcome_and_faults_alternate(steps: list[tuple[str, object]]) -> None:
    h = TclHost(CROUPIER_TEMPLATE.fields, HostConfig(job_timeout=4.0))
    h.opened(0.0)
    now, submitted, events = 0.0, [], []
    for kind, arg in steps:
        if kind == "status":
            assert isinstance(arg, Flags)
            events += h.receive(encode_status(Status(arg)), now)
        elif kind == "submit":
            submitted.append(len(submitted) + 1)
            events += h.submit(replace(TICKET, number=len(submitted)), now)
        elif kind == "noise":
            assert isinstance(arg, bytes)
            events += h.receive(arg, now)
        else:
            assert isinstance(arg, float)
            now += arg
            events += h.poll(now)
    events += h.closed("the test ends", now + 60)
    outcomes = [e.number for e in events if isinstance(e, (Printed, PrintFailed))]
    assert sorted(outcomes) == submitted
    for code in PRINTER_FAULTS + PRINTER_WARNINGS:
        changes = [type(e) for e in events if isinstance(e, (PrinterFault, PrinterCleared)) and e.code == code]
        assert changes == [PrinterFault, PrinterCleared] * (len(changes) // 2) + [PrinterFault] * (len(changes) % 2)


# ---- the driver over a pty to the simulated printer --------------------------------------------------------------

class Events:
    """The events a driver hands on, waited on with a timeout (never slept on)."""

    def __init__(self) -> None:
        self.items: list[PrinterEvent] = []
        self.threads: set[int] = set()
        self._cond = threading.Condition()

    def __call__(self, event: PrinterEvent) -> None:
        with self._cond:
            self.items.append(event)
            self.threads.add(threading.get_ident())
            self._cond.notify_all()

    def wait(self, event: PrinterEvent, after: int = 0, timeout: float = WAIT) -> int:
        """The index of the first `event` at or after `after`; fails the test if it does not come in time."""
        def found() -> int | None:
            return next((i for i in range(after, len(self.items)) if self.items[i] == event), None)
        with self._cond:
            assert self._cond.wait_for(lambda: found() is not None, timeout), f"no {event} in {self.items[after:]}"
            index = found()
            assert index is not None
            return index


@pytest.fixture
def line():
    sim = PrinterSim(decode=CROUPIER_TEMPLATE.decode, render=CROUPIER_TEMPLATE.lines)
    url = sim.open_pty()
    sim.start()
    events = Events()
    driver = PrinterDriver(url, events, fields_of=CROUPIER_TEMPLATE.fields, config=FAST).start()
    assert driver.wait_counters(lambda c: c["status_replies"] >= 1, WAIT)
    yield sim, driver, events
    driver.stop()
    sim.stop()


def test_a_ticket_is_printed_end_to_end_over_the_pty(line) -> None:
    sim, driver, events = line
    driver.print_ticket(TICKET)
    events.wait(Printed(42))
    printed = sim.last_tickets(1)[0]
    assert printed.ticket == TICKET and printed.template == "C" and printed.error is None
    assert list(printed.lines) == ticket_lines(TICKET)
    assert not any(isinstance(e, (PrinterFault, PrintFailed)) for e in events.items)


@pytest.mark.parametrize("code, on, off", [
    ("paper_out", lambda s: s.set_paper_out(True), lambda s: s.set_paper_out(False)),
    ("jam", lambda s: s.set_jam(True), lambda s: s.set_jam(False)),
    ("head_open", lambda s: s.set_head_open(True), lambda s: s.set_head_open(False)),
    ("offline", lambda s: s.set_offline(True), lambda s: s.set_offline(False)),
    ("paper_low", lambda s: s.set_paper_low(True), lambda s: s.set_paper_low(False)),
])
def test_each_fault_and_warning_is_reported_and_cleared(line, code, on, off) -> None:
    sim, driver, events = line
    on(sim)
    start = events.wait(PrinterFault(code))
    driver.print_ticket(TICKET)
    if code in PRINTER_FAULTS:  # a lockup: no ticket while it stands
        events.wait(PrintFailed(42, code), start)
    else:                       # a warning: play and tickets go on
        events.wait(Printed(42), start)
    off(sim)
    events.wait(PrinterCleared(code), start)
    driver.print_ticket(replace(TICKET, number=43))
    events.wait(Printed(43), start)


@pytest.mark.parametrize("fault", ["jam", "paper_out", "head_open", "offline"])
def test_a_fault_mid_job_fails_the_ticket(line, fault: str) -> None:
    sim, driver, events = line
    sim.fail_next_job(fault)
    driver.print_ticket(TICKET)
    index = events.wait(PrintFailed(42, fault))
    assert events.items[index - 1] == PrinterFault(fault)
    assert sim.printed == 0 and sim.counters["aborted_jobs"] == 1


def test_power_lost_mid_print_fails_the_ticket_and_the_printer_comes_back(line) -> None:
    sim, driver, events = line
    sim.fail_next_job("power")
    driver.print_ticket(TICKET)
    index = events.wait(PrintFailed(42, "offline"))
    assert events.items[index - 1] == PrinterFault("offline") and sim.printed == 0
    sim.power(True)
    events.wait(PrinterCleared("offline"), index)
    driver.print_ticket(replace(TICKET, number=43))
    events.wait(Printed(43), index)
    assert sim.last_tickets(1)[0].ticket == replace(TICKET, number=43)


def test_a_silent_line_is_offline(line) -> None:
    sim, driver, events = line
    sim.power(False)
    start = events.wait(PrinterFault("offline"))
    assert not driver.online
    driver.print_ticket(TICKET)
    events.wait(PrintFailed(42, "offline"), start)
    sim.power(True)
    events.wait(PrinterCleared("offline"), start)


def test_a_port_that_cannot_open_is_offline(tmp_path) -> None:
    events = Events()
    driver = PrinterDriver(str(tmp_path / "no-printer"), events, fields_of=CROUPIER_TEMPLATE.fields, config=FAST,
                           reconnect_interval=0.05).start()
    try:
        events.wait(PrinterFault("offline"))
        driver.print_ticket(TICKET)
        events.wait(PrintFailed(42, "offline"))
        assert driver.wait_counters(lambda c: c["open_failures"] >= 2, WAIT)
        assert events.items.count(PrinterFault("offline")) == 1  # once, not at every retry
    finally:
        driver.stop()


def test_the_asyncio_face_hands_events_on_the_loop_thread_in_order() -> None:
    sim = PrinterSim(decode=CROUPIER_TEMPLATE.decode, render=CROUPIER_TEMPLATE.lines)
    url = sim.open_pty()
    sim.start()

    async def run() -> tuple[list[PrinterEvent], set[int], int]:
        seen: list[PrinterEvent] = []
        threads: set[int] = set()
        done = asyncio.Event()

        def on_event(event: PrinterEvent) -> None:
            seen.append(event)
            threads.add(threading.get_ident())
            if isinstance(event, (Printed, PrintFailed)) and event.number == 3:
                done.set()

        async with AsyncPrinter(url, fields_of=CROUPIER_TEMPLATE.fields, config=FAST, on_event=on_event) as printer:
            for n in (1, 2, 3):
                printer.print_ticket(replace(TICKET, number=n))
            await asyncio.wait_for(done.wait(), WAIT)
        return seen, threads, threading.get_ident()

    try:
        seen, threads, loop_thread = asyncio.run(run())
    finally:
        sim.stop()
    assert [e for e in seen if isinstance(e, Printed)] == [Printed(1), Printed(2), Printed(3)]
    assert threads == {loop_thread}
    assert [t.ticket.number for t in sim.last_tickets(3) if t.ticket] == [1, 2, 3]


def test_printer_for_the_config() -> None:
    assert printer_for(PrinterConfig(), CROUPIER_TEMPLATE, on_event=lambda e: None) == (None, None)
    cfg = printer_config({"port": "sim", "venue": "Croupier Casino", "template": "7"}, "c.toml[printer]")

    async def run() -> list[PrinterEvent]:
        seen: list[PrinterEvent] = []
        done = asyncio.Event()

        def on_event(event: PrinterEvent) -> None:
            seen.append(event)
            if isinstance(event, (Printed, PrintFailed)):
                done.set()

        printer, sim = printer_for(cfg, CROUPIER_TEMPLATE, on_event=on_event, host=FAST)
        assert printer is not None and sim is not None
        try:
            async with printer:
                printer.print_ticket(TICKET)
                await asyncio.wait_for(done.wait(), WAIT)
        finally:
            sim.stop()
        assert sim.last_tickets(1)[0].template == "7" and sim.last_tickets(1)[0].ticket == TICKET
        return seen

    assert asyncio.run(run()) == [Printed(42)]


def test_the_sims_text_controls() -> None:
    sim = PrinterSim()
    assert command(sim, "paper low") == "ok paper low" and Flags.PAPER_LOW in sim.flags
    assert command(sim, "paper out") == "ok paper out" and Flags.PAPER_OUT in sim.flags
    assert command(sim, "paper ok") == "ok paper ok" and not sim.flags & (Flags.PAPER_OUT | Flags.PAPER_LOW)
    assert command(sim, "head open") == "ok head open" and Flags.PLATEN_UP in sim.flags
    assert command(sim, "power off") == "ok power off" and not sim.powered
    assert command(sim, "fail-next power") == "ok the next job fails: power"
    assert command(sim, "jam sideways").startswith("error: jam sideways")
    assert command(sim, "dance").startswith("error: unknown command 'dance'")
    with pytest.raises(SimError, match="fail_next_job: one of"):
        sim.fail_next_job("fire")


# ---- [printer] ---------------------------------------------------------------------------------------------------

def test_printer_config() -> None:
    assert printer_config({}, "c.toml[printer]") == PrinterConfig()
    assert not PrinterConfig().on
    cfg = printer_config({"port": "sim", "venue": "Croupier Casino", "address": "1 Main St", "expires_days": 0,
                          "ticket_limit_cents": 300000, "baudrate": 38400, "flow": "rtscts", "template": "7"},
                         "c.toml[printer]")
    assert cfg == PrinterConfig("sim", "Croupier Casino", "1 Main St", 0, 300000, 38400, "rtscts", "7")
    assert cfg.on and cfg.simulated and cfg.rtscts and not cfg.xonxoff
    assert printer_config({"port": "socket://127.0.0.1:7000", "venue": "V"}, "p").port == "socket://127.0.0.1:7000"
    assert printer_config({"port": "/dev/ttyUSB0", "venue": "V"}, "p").port == "/dev/ttyUSB0"


@pytest.mark.parametrize("table, error", [
    ({"port": "COM6", "venue": "V"}, "c.toml[printer].port: "),
    ({"port": 3}, "c.toml[printer].port: expected text"),
    ({"port": "sim"}, "c.toml[printer].venue: a ticket names its venue"),
    ({"venue": "a\nb"}, "c.toml[printer].venue: one line"),
    ({"expires_days": -1}, "c.toml[printer].expires_days: 0 (never) to 3650"),
    ({"ticket_limit_cents": 0}, "c.toml[printer].ticket_limit_cents: 1 to"),
    ({"ticket_limit_cents": True}, "c.toml[printer].ticket_limit_cents: expected a whole number"),
    ({"baudrate": 14400}, "c.toml[printer].baudrate: one of"),
    ({"flow": "dtr"}, "c.toml[printer].flow: one of none, rtscts, xonxoff"),
    ({"template": "^"}, "c.toml[printer].template: one letter or digit"),
    ({"ports": "sim"}, "c.toml[printer].ports: unknown key"),
])
def test_printer_config_errors_name_the_key(table: dict[str, object], error: str) -> None:
    with pytest.raises(ConfigError, match="^" + re.escape(error)):
        printer_config(table, "c.toml[printer]")
