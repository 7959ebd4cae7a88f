"""Host driver for a TCL ticket printer: one thread owns the serial port (any pyserial URL), reopens it, and runs the pure TclHost over it.

    driver = PrinterDriver("/dev/ttyUSB0", on_event, fields_of=CROUPIER_TEMPLATE.fields)
    driver.start()
    driver.print_ticket(ticket)     # returns at once; Printed or PrintFailed follows
    driver.stop()

`on_event` runs on the driver's thread, once per event, in order, and must not block (drivers.printer.aio wraps it
for an asyncio runtime). The line: 9600 8N1 with no handshake by default, as Monaco drives FutureLogic, JCM and
Nanoptix TCL printers (SupportedDevices.xml; see protocol.py); `baudrate`, `rtscts` and `xonxoff` for a printer
set otherwise (a faster rate, hardware handshake: whatever the printer's own settings say).
"""

from __future__ import annotations

import logging
import queue
import time
from typing import Callable

import serial

from drivers.serialdevice import SerialDevice

from .events import PrinterEvent, TicketData
from .host import FieldsOf, HostConfig, TclHost
from .protocol import DEFAULT_BAUDRATE

__all__ = ["PrinterDriver", "DEFAULT_BAUDRATE"]

log = logging.getLogger("croupier.printer")
_READ_TIMEOUT = 0.01


class PrinterDriver(SerialDevice[PrinterEvent]):
    """A TCL printer on a serial line; implements the cabinet's PrinterLink (print_ticket) from any thread. Started
    and stopped as drivers.serialdevice.SerialDevice; on stop a ticket still queued or printing gets its outcome
    (PrintFailed "stopped" unless its validation number is printed). Its counters: drivers.printer.host.COUNTERS
    plus callback_errors, open_failures, internal_errors."""

    def __init__(self, url: str, on_event: Callable[[PrinterEvent], object], *, fields_of: FieldsOf,
                 config: HostConfig | None = None, baudrate: int = DEFAULT_BAUDRATE, rtscts: bool = False,
                 xonxoff: bool = False, reconnect_interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__("printer", url, on_event, log)
        self.baudrate, self.rtscts, self.xonxoff = baudrate, rtscts, xonxoff
        self.reconnect_interval = reconnect_interval
        self._clock = clock
        self._host = TclHost(fields_of, config or HostConfig())
        self._tickets: queue.SimpleQueue[TicketData] = queue.SimpleQueue()
        self._snapshot = dict(self._host.counters)
        self._extra = {"callback_errors": 0, "open_failures": 0, "internal_errors": 0}

    def print_ticket(self, ticket: TicketData) -> None:
        """Print this ticket; Printed or PrintFailed follows with its number (within one read, 10 ms)."""
        self._tickets.put(ticket)

    @property
    def online(self) -> bool:
        return self._host.online

    # ---- the thread ----------------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._serve(self.reconnect_interval)
        finally:
            self._close(None)
            self._dispatch(self._take_tickets() + self._host.stopped(self._clock()))
            self._publish()

    def _connect(self) -> serial.Serial:
        port = serial.serial_for_url(self.url, baudrate=self.baudrate, timeout=_READ_TIMEOUT, write_timeout=1.0,
                                     rtscts=self.rtscts, xonxoff=self.xonxoff)
        self._host.opened(self._clock())
        return port

    def _open_failed(self, exc: Exception) -> None:
        self._extra["open_failures"] += 1
        self._dispatch(self._host.closed(f"cannot open the port {self.url}: {exc}", self._clock()))
        self._dispatch(self._take_tickets())

    def _step(self, port: serial.Serial) -> None:
        host = self._host
        events = self._take_tickets()
        data = self._read(port)
        now = self._clock()
        events += host.receive(data, now) if data else host.poll(now)
        self._dispatch(events)
        out = host.take_output()
        if out:
            port.write(out)

    def _take_tickets(self) -> list[PrinterEvent]:
        events: list[PrinterEvent] = []
        while True:
            try:
                ticket = self._tickets.get_nowait()
            except queue.Empty:
                return events
            events += self._host.submit(ticket, self._clock())

    def _close(self, reason: str | None) -> None:
        """Close the port; with a reason the printer is offline (None: the driver stops, see TclHost.stopped)."""
        self._close_port()
        if reason is not None:
            self._dispatch(self._host.closed(reason, self._clock()))

    def _count(self, name: str) -> None:
        self._extra[name] += 1

    def _publish(self) -> None:
        counters = dict(self._host.counters)
        counters.update(self._extra)
        self._publish_counters(counters)
