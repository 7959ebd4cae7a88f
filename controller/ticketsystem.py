"""A small ticket validation system on the SAS host's side, for the demo and the tests: it numbers tickets out (system validation), learns each ticket printed, and redeems a ticket once.

It speaks to the EGM only through the technician's host (controller/sas_host.py), written from the protocol apart
from the EGM's side.
"""

from __future__ import annotations

import termios
import threading
from dataclasses import dataclass
from typing import Any

from controller.sas_host import HostError, SasHost

__all__ = ["Ticket", "TicketSystem", "serve_tickets"]


@dataclass
class Ticket:
    cents: int
    restricted: bool
    state: str = "issued"       # issued, pending (authorised, not yet stacked), redeemed


class TicketSystem:
    """A small ticket validation system on the host: it answers the EGM's system validation requests (57/58) with
    numbers of its own, records each printed ticket (3D, then 4D), and redeems a ticket once (67, 70, 71; 68 then
    71's status): unknown and redeemed tickets are refused."""

    def __init__(self, host: SasHost, system_id: int = 1, rng: Any = None) -> None:
        from controller.rng import system_rng

        if not 1 <= system_id <= 99:
            raise ValueError(f"system id must be 1..99, got {system_id}")
        self.host = host
        self.system_id = system_id
        self.rng = rng or system_rng()
        self.tickets: dict[str, Ticket] = {}
        self.issued: dict[str, int] = {}    # validation numbers given by 58, not yet seen printed: their cents
        self.log: list[str] = []

    def poll(self, limit: int = 50) -> list[int]:
        """General polls until the EGM has nothing to report, acting on each exception; the codes, in order."""
        codes = []
        for _ in range(limit):
            code, _ = self.host.general_poll()
            if code == 0:
                break
            codes.append(code)
            self.handle(code)
        return codes

    def handle(self, code: int) -> None:
        h = self.host
        if code == 0x57:
            kind, cents = h.pending_cashout()
            if kind == 0x80:
                return
            number = 1 + self.rng.randbelow(10 ** 16 - 1)
            if h.receive_validation(self.system_id, number) == 0:
                self.issued[f"{self.system_id:02d}{number:016d}"] = cents
                self.log.append(f"validation {self.system_id:02d}{number:016d} for {cents} cents")
        elif code == 0x3D:
            info = h.validation_info(0)
            if info is not None:
                self.issued.pop(info["validation"], None)
                self.tickets[info["validation"]] = Ticket(info["cents"], info["type"] == 0x01)
                self.log.append(f"printed {info['validation']}: {info['cents']} cents")
        elif code == 0x67:
            validation = h.ticket_validation_data()
            if validation is None:
                return
            t = self.tickets.get(validation)
            if t is None:
                h.redeem_ticket(0x82, 0, validation)  # not in this system
                self.log.append(f"refused {validation}: unknown")
            elif t.state != "issued":
                h.redeem_ticket(0x84 if t.state == "redeemed" else 0x83, 0, validation)
                self.log.append(f"refused {validation}: {t.state}")
            else:
                h.redeem_ticket(0x01 if t.restricted else 0x00, t.cents, validation,
                                "00000030" if t.restricted else None)
                t.state = "pending"
                self.log.append(f"authorised {validation}: {t.cents} cents")
        elif code == 0x68:
            status = h.ticket_status()
            t = self.tickets.get(status["validation"] or "")
            if t is not None and t.state == "pending":
                t.state = "redeemed" if status["status"] in (0x00, 0x01, 0x02) else "issued"
                self.log.append(f"{t.state} {status['validation']}")


def serve_tickets(port: str, address: int = 1, every: float = 0.2, echo: Any = None) -> tuple[Any, Any]:
    """Run a TicketSystem as the host of the SAS line at `port` on a thread of its own (the demo's floor): it
    polls every `every` seconds until the returned event is set or the line goes away; `echo` gets each thing it
    does, in words. Returns (the stop event, the thread)."""
    stop = threading.Event()

    def loop() -> None:
        host = SasHost(port, address, timeout=0.2, retries=2)
        system = TicketSystem(host)
        told = 0
        try:
            while not stop.wait(every):
                try:
                    system.poll()
                except HostError:
                    continue  # the EGM did not answer this time: poll again
                for line in system.log[told:]:
                    if echo is not None:
                        echo(f"ticket system: {line}")
                told = len(system.log)
        except (OSError, termios.error):
            pass  # the cabinet closed its line
        finally:
            host.close()

    thread = threading.Thread(target=loop, name="ticket-system", daemon=True)
    thread.start()
    return stop, thread
