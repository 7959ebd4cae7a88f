"""Simulated TCL ticket printer on a pseudo-terminal: answers status requests, prints templates (keeping each ticket), and faults on command.

    sim = PrinterSim(decode=CROUPIER_TEMPLATE.decode, render=CROUPIER_TEMPLATE.lines)
    url = sim.open_pty()                  # the host opens this path, as it would /dev/ttyUSB0
    sim.start()
    AsyncPrinter(url, fields_of=CROUPIER_TEMPLATE.fields, ...)   # the real driver, over the real pty
    sim.set_paper_low(True); sim.set_jam(True); sim.fail_next_job("jam"); sim.power(False)
    sim.last_tickets(5)                   # what it printed: fields, the ticket decoded, its text lines

A print goes the way protocol.py describes: BUSY set with VALIDATION_DONE and TOP_OF_FORM cleared; after
`print_seconds / 2` the barcode is printed (VALIDATION_DONE; the ticket is kept); after `print_seconds` the ticket
is out (BUSY cleared, TOP_OF_FORM set, PAPER_IN_CHUTE until `print_seconds` later). `fail_next_job(fault)` stops
the next job half way, before its validation number, with that fault. Nothing here is random: the same commands
at the same moments give the same flags. Layout (decode, render) is handed in: a driver imports nothing of the
controller, the cabinet hands in controller.ticketlayout.CROUPIER_TEMPLATE's.
"""

from __future__ import annotations

import logging
import select
import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from drivers.simport import PtyEnd

from .events import TicketData
from .protocol import (LATCHED, Clear, CommandReader, Flags, Flush, FormFeed, Print, ProtocolError, Status,
                       StatusRequest, Unknown, encode_status)

__all__ = ["PrinterSim", "SimTicket", "SimError", "JOB_FAULTS"]

log = logging.getLogger("croupier.printer.sim")
JOB_FAULTS = ("jam", "paper_out", "head_open", "offline", "power")
_FAULT_FLAG = {"jam": Flags.PAPER_JAM, "paper_out": Flags.PAPER_OUT, "head_open": Flags.PLATEN_UP,
               "offline": Flags.PRINTER_OFFLINE}
_STOPS_PRINTING = Flags.PAPER_JAM | Flags.PAPER_OUT | Flags.PLATEN_UP | Flags.PRINTER_OFFLINE | Flags.PRINTER_OPEN
_TICK = 0.005


class SimError(RuntimeError):
    """A request the simulated printer refuses (an unknown fault, ...)."""


@dataclass(frozen=True)
class SimTicket:
    """A ticket the simulated printer printed: the template and fields it was sent, the ticket they decode to
    (None without a decoder, or if they do not decode: `error` says why) and its text lines."""
    template: str
    fields: tuple[str, ...]
    ticket: TicketData | None
    lines: tuple[str, ...]
    error: str | None = None


class PrinterSim:
    """Thread-safe: every public method may be called from any thread."""

    def __init__(self, *, decode: Callable[[Sequence[str]], TicketData] | None = None,
                 render: Callable[[TicketData], Sequence[str]] | None = None, print_seconds: float = 0.05,
                 version: str = "CRP-0.1.0", keep: int = 100) -> None:
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self.decode, self.render = decode, render
        self.print_seconds, self.version, self.keep = print_seconds, version, keep
        self.flags = Flags.RESET | Flags.TOP_OF_FORM | Flags.VALIDATION_DONE  # a printer just powered up
        self.powered = True
        self.template = " "
        self._fail_next: str | None = None
        self._job: tuple[Print, float, str | None] | None = None  # the command, its start, the fault to stop it
        self._validated = False
        self._chute_until: float | None = None
        self.tickets: list[SimTicket] = []
        self.printed = 0  # tickets printed since start (self.tickets keeps the last `keep`)
        self.counters = dict.fromkeys(("status_requests", "commands", "bad_commands", "jobs", "aborted_jobs"), 0)
        self._reader = CommandReader()
        self._end: PtyEnd | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    # ---- life cycle ----------------------------------------------------------------------------------------

    def open_pty(self, link: str | None = None) -> str:
        """Serve on a new pseudo-terminal; returns the path the host opens (`link`, a symlink to it, if given)."""
        with self._lock:
            self._end = PtyEnd(link)
            return self._end.url

    def start(self) -> PrinterSim:
        if self._end is None:
            raise SimError("open_pty() first")
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="printer-sim", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        with self._lock:
            if self._end is not None:
                self._end.close()
                self._end = None

    def __enter__(self) -> PrinterSim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- controls ------------------------------------------------------------------------------------------

    def set_paper_low(self, on: bool) -> None:
        self._set(Flags.PAPER_LOW, on)

    def set_paper_out(self, on: bool) -> None:
        self._set(Flags.PAPER_OUT, on)

    def set_jam(self, on: bool) -> None:
        self._set(Flags.PAPER_JAM, on)

    def set_head_open(self, on: bool) -> None:
        self._set(Flags.PLATEN_UP, on)

    def set_offline(self, on: bool) -> None:
        """The printer's own offline flag (it still answers; power(False) makes it silent)."""
        self._set(Flags.PRINTER_OFFLINE, on)

    def power(self, on: bool) -> None:
        """Off: the printer answers nothing and a job in progress is lost (printed only if its validation number
        already was). On: it comes back as after a power cycle, RESET set, faults it had kept."""
        with self._lock:
            if on and not self.powered:
                kept = self.flags & (Flags.PAPER_LOW | Flags.PAPER_OUT | Flags.PAPER_JAM | Flags.PLATEN_UP)
                self.flags = kept | Flags.RESET | Flags.TOP_OF_FORM
                self._reader = CommandReader()
            if not on and self._job is not None:
                self._abort()
            self.powered = on
            self._changed.notify_all()

    def fail_next_job(self, fault: str) -> None:
        """The next job stops half way, before its validation number is printed, with `fault` (JOB_FAULTS)."""
        if fault not in JOB_FAULTS:
            raise SimError(f"fail_next_job: one of {', '.join(JOB_FAULTS)}, got {fault!r}")
        with self._lock:
            self._fail_next = fault

    def _set(self, flag: Flags, on: bool) -> None:
        with self._lock:
            self.flags = (self.flags | flag) if on else (self.flags & ~flag)
            if on and flag & _STOPS_PRINTING and self._job is not None and not self._validated:
                self._abort()
            self._changed.notify_all()

    # ---- what it printed -----------------------------------------------------------------------------------

    def last_tickets(self, n: int = 10) -> list[SimTicket]:
        with self._lock:
            return list(self.tickets[-n:]) if n > 0 else []

    def wait_printed(self, count: int, timeout: float) -> bool:
        """Wait until `count` tickets have been printed since start."""
        with self._changed:
            return self._changed.wait_for(lambda: self.printed >= count, timeout)

    def status(self) -> dict[str, object]:
        with self._lock:
            return {"powered": self.powered, "flags": [f.name for f in Flags if f and f in self.flags],
                    "printing": self._job is not None, "printed": self.printed, "fail_next": self._fail_next,
                    **self.counters}

    # ---- the device ----------------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                end = self._end
            if end is None:
                return
            try:
                ready, _, _ = select.select([end.master], [], [], _TICK)
            except (OSError, ValueError):
                return
            data = end.read() if ready else b""
            with self._lock:
                now = time.monotonic()
                reply = self._handle(data, now) if data else b""
                self._advance(now)
                if reply and self.powered:
                    end.write(reply)

    def _handle(self, data: bytes, now: float) -> bytes:
        if not self.powered:
            return b""  # no power: the bytes fall on the floor
        reply = b""
        for command in self._reader.feed(data):
            if isinstance(command, StatusRequest):
                self.counters["status_requests"] += 1
                reply += encode_status(Status(self.flags, "0", self.version, self.template))
                continue
            self.counters["commands"] += 1
            if isinstance(command, (ProtocolError, Unknown)):
                self.counters["bad_commands"] += 1
                log.warning("printer sim: bad command %s", command)
                self.flags |= Flags.COMMAND_ERROR
            elif isinstance(command, Clear):
                self.flags &= ~LATCHED
                if command.what in ("j", "a"):
                    self.flags &= ~Flags.PAPER_JAM
            elif isinstance(command, Print):
                self._start(command, now)
            elif isinstance(command, (Flush, FormFeed)) and self._job is not None and not self._validated:
                self._abort()
        return reply

    def _start(self, command: Print, now: float) -> None:
        if self._job is not None or self.flags & _STOPS_PRINTING:
            self.flags |= Flags.COMMAND_ERROR  # busy or unable: the job is refused
            return
        self.counters["jobs"] += 1
        fault, self._fail_next = self._fail_next, None
        self._job, self._validated, self._chute_until = (command, now, fault), False, None
        self.flags = (self.flags | Flags.BUSY) & ~(Flags.VALIDATION_DONE | Flags.TOP_OF_FORM | Flags.PAPER_IN_CHUTE)

    def _advance(self, now: float) -> None:
        if self._chute_until is not None and now >= self._chute_until:
            self.flags &= ~Flags.PAPER_IN_CHUTE
            self._chute_until = None
        if self._job is None:
            return
        command, started, fault = self._job
        if not self._validated and now >= started + self.print_seconds / 2:
            if fault == "power":
                self.power(False)
                return
            if fault is not None:
                self.flags |= _FAULT_FLAG[fault]
                self._abort()
                return
            self._validated = True
            self.flags |= Flags.VALIDATION_DONE | Flags.BARCODE_ACCESSED
            self._keep(command)
        if self._validated and now >= started + self.print_seconds:
            self._job = None
            self.template = command.template
            self.flags = (self.flags & ~Flags.BUSY) | Flags.TOP_OF_FORM | Flags.PAPER_IN_CHUTE
            self._chute_until = now + self.print_seconds
            self._changed.notify_all()

    def _abort(self) -> None:
        self.counters["aborted_jobs"] += 1
        self._job = None
        self.flags &= ~Flags.BUSY
        self._changed.notify_all()

    def _keep(self, command: Print) -> None:
        ticket: TicketData | None = None
        lines: tuple[str, ...] = ()
        error = None
        if self.decode is not None:
            try:
                ticket = self.decode(command.fields)
                lines = tuple(self.render(ticket)) if self.render is not None else ()
            except ValueError as exc:
                error = str(exc)
                log.warning("printer sim: the fields do not decode: %s", exc)
        self.tickets.append(SimTicket(command.template, command.fields, ticket, lines, error))
        del self.tickets[:-self.keep]
        self.printed += 1
        self._changed.notify_all()

