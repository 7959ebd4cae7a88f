"""asyncio face of the ticket printer driver: the cabinet's PrinterLink, events on the loop's thread in order.

    async with AsyncPrinter(url, fields_of=CROUPIER_TEMPLATE.fields, on_event=handle) as printer:
        printer.print_ticket(ticket)      # Printed / PrintFailed, PrinterFault / PrinterCleared come to handle()

The hand-off is drivers.aio.AsyncDriver's: `on_event` runs on the loop's thread, once per event, in order.
Without `on_event` the events queue up for `async for event in printer` / `await printer.get()`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from drivers.aio import AsyncDriver

from .config import PrinterConfig
from .driver import PrinterDriver
from .events import PrinterEvent, TicketData
from .host import FieldsOf, HostConfig, TicketTemplate
from .protocol import DEFAULT_BAUDRATE
from .sim import PrinterSim

__all__ = ["AsyncPrinter", "printer_for"]


class AsyncPrinter(AsyncDriver[PrinterEvent, PrinterDriver]):
    def __init__(self, url: str, *, fields_of: FieldsOf, config: HostConfig | None = None,
                 baudrate: int = DEFAULT_BAUDRATE, rtscts: bool = False, xonxoff: bool = False,
                 on_event: Callable[[PrinterEvent], None] | None = None) -> None:
        super().__init__(on_event)
        self.url, self.fields_of, self.config = url, fields_of, config
        self.baudrate, self.rtscts, self.xonxoff = baudrate, rtscts, xonxoff

    def _driver_for(self, hand_off: Callable[[PrinterEvent], None]) -> PrinterDriver:
        return PrinterDriver(self.url, hand_off, fields_of=self.fields_of, config=self.config,
                             baudrate=self.baudrate, rtscts=self.rtscts, xonxoff=self.xonxoff)

    def print_ticket(self, ticket: TicketData) -> None:
        self._driver().print_ticket(ticket)

    @property
    def online(self) -> bool:
        return self.driver is not None and self.driver.online


def printer_for(config: PrinterConfig, template: TicketTemplate, *, on_event: Callable[[PrinterEvent], None],
                host: HostConfig | None = None, link: str | None = None
                ) -> tuple[AsyncPrinter | None, PrinterSim | None]:
    """The printer [printer] asks for: (None, None) for port = "none"; for "sim" a simulated printer, started on a
    new pty (`link`: a symlink kept to it), and the driver for it; else the driver for the device or URL. The
    driver is not started: `async with printer:` (or `printer.start()`) on the loop that takes the events; stop
    the simulator (`sim.stop()`) after the driver."""
    if not config.on:
        return None, None
    sim = None
    url = config.port
    if config.simulated:
        sim = PrinterSim(decode=template.decode, render=template.lines)
        url = sim.open_pty(link)
        sim.start()
    host = host or HostConfig()
    if host.template != config.template:
        host = replace(host, template=config.template)
    printer = AsyncPrinter(url, fields_of=template.fields, config=host, baudrate=config.baudrate,
                           rtscts=config.rtscts, xonxoff=config.xonxoff, on_event=on_event)
    return printer, sim
