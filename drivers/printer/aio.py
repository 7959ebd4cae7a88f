"""asyncio face of the ticket printer driver: the cabinet's PrinterLink, events on the loop's thread in order.

    async with AsyncPrinter(url, fields_of=CROUPIER_TEMPLATE.fields, on_event=handle) as printer:
        printer.print_ticket(ticket)      # Printed / PrintFailed, PrinterFault / PrinterCleared come to handle()

The driver's thread hands each event to the loop with `loop.call_soon_threadsafe`, so `on_event` runs on the
loop's thread, once per event, in order (as drivers.shoe.aio does). Without `on_event` the events queue up for
`async for event in printer` / `await printer.get()`.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Callable

from .config import PrinterConfig
from .driver import PrinterDriver
from .events import PrinterEvent, TicketData
from .host import FieldsOf, HostConfig, TicketTemplate
from .protocol import DEFAULT_BAUDRATE
from .sim import PrinterSim

__all__ = ["AsyncPrinter", "printer_for"]


class AsyncPrinter:
    def __init__(self, url: str, *, fields_of: FieldsOf, config: HostConfig | None = None,
                 baudrate: int = DEFAULT_BAUDRATE, rtscts: bool = False, xonxoff: bool = False,
                 on_event: Callable[[PrinterEvent], None] | None = None) -> None:
        self.url, self.fields_of, self.config = url, fields_of, config
        self.baudrate, self.rtscts, self.xonxoff = baudrate, rtscts, xonxoff
        self.on_event = on_event
        self.driver: PrinterDriver | None = None
        self.events: asyncio.Queue[PrinterEvent] = asyncio.Queue()

    def start(self) -> AsyncPrinter:
        """Start the driver; call it from the running loop that takes the events."""
        loop = asyncio.get_running_loop()
        put = self.on_event or self.events.put_nowait
        self.driver = PrinterDriver(self.url, lambda event: loop.call_soon_threadsafe(put, event),
                                    fields_of=self.fields_of, config=self.config, baudrate=self.baudrate,
                                    rtscts=self.rtscts, xonxoff=self.xonxoff).start()
        return self

    def print_ticket(self, ticket: TicketData) -> None:
        if self.driver is None:
            raise RuntimeError("AsyncPrinter is not started")
        self.driver.print_ticket(ticket)

    async def stop(self) -> None:
        if self.driver is not None:
            await asyncio.to_thread(self.driver.stop)

    async def __aenter__(self) -> AsyncPrinter:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def get(self) -> PrinterEvent:
        return await self.events.get()

    def __aiter__(self) -> AsyncPrinter:
        return self

    async def __anext__(self) -> PrinterEvent:
        return await self.events.get()

    @property
    def online(self) -> bool:
        return self.driver is not None and self.driver.online

    @property
    def counters(self) -> dict[str, int]:
        return self.driver.counters if self.driver else {}


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
