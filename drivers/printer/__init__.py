"""Ticket printers: what a printer tells the cabinet (events.py), the TCL command language over serial, and a simulated printer on a pty."""

from .events import (PRINTER_FAULTS, PRINTER_WARNINGS, PrinterCleared, PrinterEvent, PrinterFault, PrinterLink,
                     PrintFailed, Printed, TicketData)

__all__ = ["PRINTER_FAULTS", "PRINTER_WARNINGS", "PrinterCleared", "PrinterEvent", "PrinterFault", "PrinterLink",
           "PrintFailed", "Printed", "TicketData"]
