"""The host end of a TCL printer as a pure state machine: tickets in, bytes to send and PrinterEvents out, driven by the bytes read and the time (no I/O, no clock: the driver's thread feeds both).

A job: `^C|^` (clear the latched flags, as Monaco does before every print), `^P|template|1|fields...|^`, then a
status request every `job_poll_interval`. The printer sets BUSY and clears VALIDATION_DONE as it starts, sets
VALIDATION_DONE once the barcode is on the paper, and clears BUSY when the ticket is out (the sequence Paycheck4's
emulator follows; see protocol.py). So:

- VALIDATION_DONE after the job started, then BUSY clear: Printed(number).
- A fault before VALIDATION_DONE: PrintFailed(number, code); the ticket is not printed.
- A fault after VALIDATION_DONE: the validation number is on paper, so the ticket exists (an attendant takes it
  out of a jammed printer): Printed(number), and the fault as a PrinterFault. Reporting it failed would let the
  cabinet pay the same credits twice.
- The printer restarted (RESET) or refused the job (COMMAND_ERROR, DATA_ERROR) before VALIDATION_DONE:
  PrintFailed(number, "power lost" / "rejected"); no VALIDATION_DONE within `job_timeout`: PrintFailed("timeout").
- The line silent for `offline_after` (or the port gone) before VALIDATION_DONE: PrintFailed(number, "offline").
  Here the printer may have printed it before it went quiet: the cabinet treats that validation number as spent.

Faults and warnings: which status flags are which condition follows GLI-11 (v3.0, the printer's error conditions
an EGM must detect and display: out of paper, paper low, printer jam or failure, printer disconnected); of those
only paper low lets play go on (PRINTER_WARNINGS). A hardware failure the printer reports (system, head,
voltage, temperature, cutter, firmware errors) and the printer's own offline flag are "offline": it cannot print.
A silent line is "offline" too.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from .events import (PRINTER_FAULTS, PRINTER_WARNINGS, PrinterCleared, PrinterEvent, PrinterFault, PrintFailed,
                     Printed, TicketData)
from .protocol import CLEAR, STATUS_REQUEST, Flags, ProtocolError, Status, StatusReader, encode_print

__all__ = ["HostConfig", "TclHost", "CONDITION_FLAGS", "COUNTERS", "FieldsOf", "TicketTemplate"]

log = logging.getLogger("croupier.printer")

# Each fault and warning code and the status flags that raise it.
CONDITION_FLAGS: dict[str, Flags] = {
    "paper_out": Flags.PAPER_OUT,
    "jam": Flags.PAPER_JAM,
    "head_open": Flags.PLATEN_UP | Flags.PRINTER_OPEN,
    "offline": (Flags.PRINTER_OFFLINE | Flags.SYSTEM_ERROR | Flags.HEAD_ERROR | Flags.VOLTAGE_ERROR
                | Flags.TEMPERATURE_ERROR | Flags.CUTTER_ERROR | Flags.FLASH_PROGRAM_ERROR
                | Flags.LIBRARIES_CORRUPTED),
    "paper_low": Flags.PAPER_LOW,
}
_ORDER = PRINTER_FAULTS + PRINTER_WARNINGS
COUNTERS = ("status_replies", "protocol_errors", "requests", "jobs_sent", "printed", "failed", "went_silent",
            "printer_resets")

# The template's variable fields for a ticket (controller.ticketlayout.CROUPIER_TEMPLATE.fields: a driver imports
# nothing of the controller, so the cabinet hands the layout in).
FieldsOf = Callable[[TicketData], Sequence[str]]


class TicketTemplate(Protocol):
    """The ticket layout a cabinet hands the printer's driver and simulator (controller.ticketlayout's
    CROUPIER_TEMPLATE): a ticket's template fields, the ticket back from them, its text lines."""

    def fields(self, ticket: TicketData) -> Sequence[str]: ...

    def decode(self, fields: Sequence[str]) -> TicketData: ...

    def lines(self, ticket: TicketData) -> Sequence[str]: ...


@dataclass(frozen=True)
class HostConfig:
    template: str = "C"             # the cabinet's ticket template, as loaded into the printer
    poll_interval: float = 0.5      # status request while idle (Monaco's PollingIntervalMs)
    job_poll_interval: float = 0.1  # ... while printing (Monaco's PrintingPollingIntervalMs)
    reply_timeout: float = 0.5      # a request unanswered this long is sent again
    offline_after: float = 2.0      # no status reply for this long: the printer is offline
    job_timeout: float = 30.0       # a job whose validation number is not printed by then has failed
    status_request: bytes = STATUS_REQUEST  # ENQ; b"^S|^" for a printer that wants the command form


@dataclass
class _Job:
    ticket: TicketData
    sent_at: float
    started: bool = False    # a reply after the job showed BUSY or VALIDATION_DONE cleared
    validated: bool = False  # ... then VALIDATION_DONE: the validation number is on paper


@dataclass
class TclHost:
    fields_of: FieldsOf
    config: HostConfig = field(default_factory=HostConfig)

    def __post_init__(self) -> None:
        self.counters: dict[str, int] = dict.fromkeys(COUNTERS, 0)
        self.status: Status | None = None
        self._reader = StatusReader()
        self._out = bytearray()
        self._queue: deque[tuple[TicketData, float]] = deque()  # each ticket and when it came
        self._job: _Job | None = None
        self._reported: set[str] = set()       # the conditions last handed on
        self._flag_codes: set[str] = set()     # the conditions the last status showed
        self._silent = True                    # no status since the port opened (or the line went quiet)
        self._open = False
        self._since = 0.0                      # when the line last answered (or opened)
        self._asked_at: float | None = None    # when the unanswered request went out
        self._next_poll = 0.0

    # ---- the line ------------------------------------------------------------------------------------------

    def opened(self, now: float) -> None:
        self._open, self._since, self._asked_at, self._next_poll = True, now, None, now
        self._reader = StatusReader()

    def closed(self, reason: str, now: float) -> list[PrinterEvent]:
        """The port is gone (unplugged, or never opened): the printer is offline at once."""
        if self._open:
            log.warning("printer line closed: %s", reason)
        self._open = False
        return self._go_silent()

    def stopped(self, now: float) -> list[PrinterEvent]:
        """The driver stops: the ticket being printed and those queued get their outcome ("stopped" for a ticket
        whose validation number is not printed); no fault is reported for a printer the cabinet let go."""
        self._open = False
        job, self._job = self._job, None
        events: list[PrinterEvent] = []
        if job is not None:
            events.append(self._printed(job.ticket) if job.validated else self._failed(job.ticket, "stopped"))
        return events + [self._failed(t, "stopped") for t in self._drain()]

    def take_output(self) -> bytes:
        out, self._out = bytes(self._out), bytearray()
        return out

    @property
    def online(self) -> bool:
        return not self._silent

    @property
    def busy(self) -> bool:
        """A job is being printed or waits."""
        return self._job is not None or bool(self._queue)

    # ---- the cabinet's side --------------------------------------------------------------------------------

    def submit(self, ticket: TicketData, now: float) -> list[PrinterEvent]:
        """Queue a ticket; a failure known at once (a ticket the layout refuses, a printer offline or in a fault)
        comes back now, else the outcome comes from receive/poll."""
        try:
            self.fields_of(ticket)
        except ValueError as exc:
            log.error("ticket %s cannot be printed: %s", ticket.number, exc)
            return [self._failed(ticket, f"layout: {exc}")]
        if not self._open:
            return [self._failed(ticket, "offline")]
        self._queue.append((ticket, now))
        return self.poll(now)

    # ---- bytes and time ------------------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> list[PrinterEvent]:
        events: list[PrinterEvent] = []
        for item in self._reader.feed(data):
            if isinstance(item, ProtocolError):
                self.counters["protocol_errors"] += 1
                log.warning("printer: %s", item)
            else:
                events += self._on_status(item, now)
        return events + self.poll(now)

    def poll(self, now: float) -> list[PrinterEvent]:
        cfg = self.config
        events: list[PrinterEvent] = []
        if not self._open:
            return events
        if not self._silent and now - self._since >= cfg.offline_after:
            log.warning("printer silent for %.1f s: offline", now - self._since)
            self.counters["went_silent"] += 1
            events += self._go_silent()
        elif self._silent and now - self._since >= cfg.offline_after and "offline" not in self._reported:
            log.warning("printer has not answered since the port opened: offline")
            events += self._go_silent()
        job = self._job
        if job is not None and now - job.sent_at >= cfg.job_timeout:
            self._job = None
            if job.validated:  # its validation number is printed: the ticket exists, however long busy stays
                log.warning("ticket %s: printed, the printer still busy after %.0f s", job.ticket.number,
                            cfg.job_timeout)
                events.append(self._printed(job.ticket))
            else:
                log.error("ticket %s: no validation number printed after %.0f s", job.ticket.number,
                          cfg.job_timeout)
                events.append(self._failed(job.ticket, "timeout"))
        while self._queue and now - self._queue[0][1] >= cfg.job_timeout:  # a printer busy all along
            ticket, _ = self._queue.popleft()
            log.error("ticket %s: the printer stayed busy for %.0f s", ticket.number, cfg.job_timeout)
            events.append(self._failed(ticket, "timeout"))
        if self._job is None and self._queue:
            events += self._start_next(now)
        if self._asked_at is not None and now - self._asked_at >= cfg.reply_timeout:
            self._asked_at = None  # lost: ask again
        if self._asked_at is None and now >= self._next_poll:
            self._out += cfg.status_request
            self.counters["requests"] += 1
            self._asked_at = now
            self._next_poll = now + (cfg.job_poll_interval if self._job else cfg.poll_interval)
        return events

    def next_deadline(self) -> float:
        """When poll() next has something to do (the driver sleeps on the line until then)."""
        return self._next_poll

    # ---- inside ----------------------------------------------------------------------------------------------

    def _start_next(self, now: float) -> list[PrinterEvent]:
        if self._silent:
            if "offline" not in self._reported:
                return []  # the port just opened: wait for the first status (or offline_after)
            return [self._failed(t, "offline") for t in self._drain()]
        faults = [code for code in PRINTER_FAULTS if code in self._reported]
        if faults:
            return [self._failed(t, faults[0]) for t in self._drain()]
        if self._asked_at is not None or (self.status is not None and Flags.BUSY in self.status):
            return []  # send the job between a reply and the next request, to a printer not busy
        ticket, _ = self._queue.popleft()
        try:
            frame = encode_print(self.config.template, self.fields_of(ticket))
        except ValueError as exc:
            return [self._failed(ticket, f"layout: {exc}")]
        self._out += CLEAR + frame
        self.counters["jobs_sent"] += 1
        self._job = _Job(ticket, now)
        self._next_poll = now  # ask at once: the reply comes after the job's bytes on the line
        return []

    def _drain(self) -> list[TicketData]:
        tickets = [ticket for ticket, _ in self._queue]
        self._queue.clear()
        return tickets

    def _on_status(self, status: Status, now: float) -> list[PrinterEvent]:
        self.counters["status_replies"] += 1
        self.status = status
        self._since, self._asked_at = now, None
        self._silent = False
        flags = status.flags
        self._flag_codes = {code for code, mask in CONDITION_FLAGS.items() if flags & mask}
        events = self._report(self._flag_codes)
        job = self._job
        if job is None:
            return events
        if not job.started and (Flags.BUSY in status or Flags.VALIDATION_DONE not in status):
            job.started = True
        if job.started and not job.validated and Flags.VALIDATION_DONE in status:
            job.validated = True
        faults = [code for code in PRINTER_FAULTS if code in self._flag_codes]
        if job.validated:
            if faults or Flags.BUSY not in status:
                self._job = None
                events.append(self._printed(job.ticket))
        elif faults:
            self._job = None
            events.append(self._failed(job.ticket, faults[0]))
        elif Flags.RESET in status:
            self.counters["printer_resets"] += 1
            self._job = None
            events.append(self._failed(job.ticket, "power lost"))
        elif flags & (Flags.COMMAND_ERROR | Flags.DATA_ERROR):
            self._job = None
            events.append(self._failed(job.ticket, "rejected"))
        return events

    def _go_silent(self) -> list[PrinterEvent]:
        self._silent, self._asked_at, self.status = True, None, None
        events = self._report(self._flag_codes | {"offline"})
        job, self._job = self._job, None
        if job is not None:
            events.append(self._printed(job.ticket) if job.validated else self._failed(job.ticket, "offline"))
        events += [self._failed(t, "offline") for t in self._drain()]
        return events

    def _report(self, codes: set[str]) -> list[PrinterEvent]:
        if self._silent:
            codes = codes | {"offline"}
        events: list[PrinterEvent] = []
        for code in _ORDER:
            if code in codes and code not in self._reported:
                log.warning("printer: %s", code)
                events.append(PrinterFault(code))
            elif code in self._reported and code not in codes:
                log.info("printer: %s cleared", code)
                events.append(PrinterCleared(code))
        self._reported = set(codes)
        return events

    def _printed(self, ticket: TicketData) -> Printed:
        self.counters["printed"] += 1
        return Printed(ticket.number)

    def _failed(self, ticket: TicketData, reason: str) -> PrintFailed:
        self.counters["failed"] += 1
        log.warning("ticket %s not printed: %s", ticket.number, reason)
        return PrintFailed(ticket.number, reason)
