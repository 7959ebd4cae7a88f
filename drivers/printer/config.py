"""The cabinet's [printer] section: where the ticket printer is and what its tickets say, read into a frozen PrinterConfig (pure; errors name the key).

    [printer]
    port = "sim"                  # "sim" (the simulated printer on a pty), "none", a device path, a pyserial URL
    venue = "Croupier Casino"
    address = "1 Main Street, Reno NV"
    expires_days = 30             # 0: tickets never expire
    ticket_limit_cents = 300000   # a cash out above this is a hand pay, not a ticket
    baudrate = 9600               # optional: the line (TCL printers ship at 9600 8N1; see driver.py)
    flow = "none"                 # optional: "none", "rtscts" or "xonxoff"
    template = "C"                # optional: the ticket template's id in the printer
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from drivers.configreader import ConfigError, DeviceLine, Section, shown

from .protocol import DEFAULT_BAUDRATE

__all__ = ["PrinterConfig", "printer_config", "ConfigError", "BAUDRATES", "FLOWS"]

BAUDRATES = (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200)
FLOWS = ("none", "rtscts", "xonxoff")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+|/\S+", re.ASCII)
MAX_EXPIRES_DAYS = 3650


@dataclass(frozen=True)
class PrinterConfig(DeviceLine):
    venue: str = ""
    address: str = ""
    expires_days: int = 30         # 0: never
    ticket_limit_cents: int = 1_000_000
    baudrate: int = DEFAULT_BAUDRATE
    flow: str = "none"
    template: str = "C"

    @property
    def rtscts(self) -> bool:
        return self.flow == "rtscts"

    @property
    def xonxoff(self) -> bool:
        return self.flow == "xonxoff"


def printer_config(mapping: Any, where: str) -> PrinterConfig:
    """Read a [printer] table (`where` names it in errors, e.g. "cabinet.toml[printer]"); a missing table is
    `{}`: no printer. Raises ConfigError (controller.config's) naming the key; unknown keys are refused."""
    s = Section(mapping, where)
    port = s.get("port", str, "none")
    if port not in ("sim", "none") and not _URL.fullmatch(port):
        raise ConfigError(f"{s.key('port')}: \"sim\", \"none\", a device path (/dev/...) or a pyserial URL "
                          f"(socket://host:port, rfc2217://...), got {shown(port)}")
    venue = s.get("venue", str, "")
    address = s.get("address", str, "")
    for key, text in (("venue", venue), ("address", address)):
        if len(text) > 64 or any(not ch.isprintable() for ch in text):
            raise ConfigError(f"{s.key(key)}: one line of at most 64 printable characters, got {shown(text)}")
    if port != "none" and not venue.strip():
        raise ConfigError(f"{s.key('venue')}: a ticket names its venue: give one (or port = \"none\")")
    expires = s.get("expires_days", int, 30)
    if not 0 <= expires <= MAX_EXPIRES_DAYS:
        raise ConfigError(f"{s.key('expires_days')}: 0 (never) to {MAX_EXPIRES_DAYS} days, got {expires}")
    limit = s.get("ticket_limit_cents", int, 1_000_000)
    if not 1 <= limit <= 10 ** 11:
        raise ConfigError(f"{s.key('ticket_limit_cents')}: 1 to 100000000000 cents, got {limit}")
    baudrate = s.get("baudrate", int, DEFAULT_BAUDRATE)
    if baudrate not in BAUDRATES:
        raise ConfigError(f"{s.key('baudrate')}: one of {', '.join(map(str, BAUDRATES))}, got {baudrate}")
    flow = s.get("flow", str, "none")
    if flow not in FLOWS:
        raise ConfigError(f"{s.key('flow')}: one of {', '.join(FLOWS)}, got {shown(flow)}")
    template = s.get("template", str, "C")
    if not re.fullmatch(r"[0-9A-Za-z]", template):
        raise ConfigError(f"{s.key('template')}: one letter or digit (the template's id in the printer), "
                          f"got {shown(template)}")
    s.done()
    return PrinterConfig(port, venue, address, expires, limit, baudrate, flow, template)
