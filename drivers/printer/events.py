"""The interface between a ticket printer driver and the cabinet: the ticket to print, the events a printer reports, the commands it takes.

Every printer driver (TCL on a serial line, the simulator behind it) keeps this interface. Events are handed to
the runtime on its loop's thread, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Union

__all__ = ["TicketData", "Printed", "PrintFailed", "PrinterFault", "PrinterCleared", "PrinterEvent", "PrinterLink",
           "PRINTER_FAULTS", "PRINTER_WARNINGS"]

# Faults lock the cabinet's ticket out until they clear; warnings are shown and logged, play goes on.
PRINTER_FAULTS = ("paper_out", "jam", "head_open", "offline")
PRINTER_WARNINGS = ("paper_low",)


@dataclass(frozen=True)
class TicketData:
    """What a cash-out ticket says (the printer's layout places it)."""
    venue: str
    address: str
    machine: str              # the cabinet's id
    asset: int                # the SAS asset number (0: none)
    number: int               # the cabinet's ticket sequence number
    cents: int
    validation: str           # 18 digits, printed as 00-0000-0000-0000-0000 and as an Interleaved 2 of 5 barcode
    printed: str              # ISO 8601 date and time of the cash out
    expires_days: int         # 0: never expires
    restricted: bool = False  # a restricted (non-cashable) ticket says so


@dataclass(frozen=True)
class Printed:
    """The ticket `number` is printed and out of the printer."""
    number: int


@dataclass(frozen=True)
class PrintFailed:
    """The ticket `number` was not printed (a fault before or while printing), and why."""
    number: int
    reason: str


@dataclass(frozen=True)
class PrinterFault:
    """A fault (PRINTER_FAULTS) or a warning (PRINTER_WARNINGS)."""
    code: str


@dataclass(frozen=True)
class PrinterCleared:
    """The fault or warning `code` is gone."""
    code: str


PrinterEvent = Union[Printed, PrintFailed, PrinterFault, PrinterCleared]


class PrinterLink(Protocol):
    """What the cabinet asks of a printer driver (each call returns at once; the outcome comes as an event)."""

    def print_ticket(self, ticket: TicketData) -> None:
        """Print this ticket; Printed or PrintFailed follows with its number."""

    async def stop(self) -> None:
        """Close the line."""
