"""In-process bill validator, ticket printer and ticket system for the cabinet's note and ticket tests: the ValidatorLink and PrinterLink of drivers/*/events.py, whose physical world (what is in escrow, in the stacker, printed) may live in a file so that it outlives a SIGKILLed cabinet, as a real device's does.

Events reach the cabinet on its loop's thread, in order (loop.call_soon), as the real drivers' asyncio faces hand
them. The world is written before the event is sent: a kill between the two leaves the device where it physically
is and the cabinet not told, which the restart rules (controller/cabinettito.py) must settle.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any, Callable

from controller.cabinetrecords import TicketInAuthorised, TicketInRefused, TicketOutValidation
from drivers.printer.events import PRINTER_FAULTS, PrinterCleared, PrinterFault, PrintFailed, Printed, TicketData
from drivers.validator.events import (Escrowed, PoweredUp, Rejected, Returned, Stacked, ValidatorCleared,
                                      ValidatorFault)


class World:
    """A device's physical state: a dict kept in memory, or in a JSON file replaced atomically on each change."""

    def __init__(self, path: Path | None, initial: dict[str, Any]) -> None:
        self.path = path
        self.data = json.loads(path.read_text()) if path is not None and path.exists() else initial

    def save(self) -> None:
        if self.path is not None:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.data))
            os.replace(tmp, self.path)


def _item(note_cents: int | None = None, barcode: str | None = None) -> dict[str, Any]:
    return {"cents": note_cents, "barcode": barcode}


class FakeValidator:
    """A bill validator: insert_note / insert_ticket (the player), stack / return_item / enable (the cabinet),
    fault / clear (the test). `forget`: at power up it says "none" whatever it held (it lost track); `kept_power`: it
    did not lose power (only the cabinet's process restarted), so it holds its escrow and says nothing."""

    def __init__(self, on_event: Callable[[Any], None], world: Path | None = None, *, forget: bool = False,
                 notes: tuple[int, ...] = (100, 500, 1000, 2000, 5000, 10000), kept_power: bool = False) -> None:
        self.on_event, self.notes = on_event, notes
        self.loop = asyncio.get_running_loop()
        self.world = World(world, {"escrow": None, "stacker": [], "returned": [], "last": None, "faults": []})
        self.enabled: tuple[frozenset[int], bool] = (frozenset(), False)
        self.commands: list[str] = []
        if not kept_power:  # kept_power: only the cabinet's process restarted; the validator says nothing
            self._power_up(forget)

    def _send(self, event: Any) -> None:
        self.loop.call_soon(self.on_event, event)

    def _power_up(self, forget: bool) -> None:
        w = self.world.data
        holding = "none"
        if w["escrow"] is not None:  # power came back with an item in the acceptor: it goes back to the player
            w["returned"].append(w["escrow"])
            w["last"], w["escrow"] = {"item": w["escrow"], "where": "acceptor"}, None
            holding = "acceptor"
        elif w["last"] is not None and w["last"]["where"] == "stacker":
            holding = "stacker"
        self.world.save()
        self._send(PoweredUp("none" if forget else holding))
        for code in w["faults"]:
            self._send(ValidatorFault(code))

    # the player
    def insert_note(self, cents: int) -> bool:
        w = self.world.data
        if w["escrow"] is not None or w["faults"] or cents not in self.enabled[0]:
            self._send(Rejected(f"note of {cents} cents not taken now"))
            return False
        w["escrow"] = _item(note_cents=cents)
        self.world.save()
        self._send(Escrowed(note_cents=cents))
        return True

    def insert_ticket(self, barcode: str) -> bool:
        w = self.world.data
        if w["escrow"] is not None or w["faults"] or not self.enabled[1]:
            self._send(Rejected("ticket not taken now"))
            return False
        w["escrow"] = _item(barcode=barcode)
        self.world.save()
        self._send(Escrowed(barcode=barcode))
        return True

    # the cabinet (ValidatorLink)
    def stack(self) -> None:
        self._move("stack", "stacker", Stacked)

    def return_item(self) -> None:
        self._move("return", "returned", Returned)

    def _move(self, command: str, where: str, event: type) -> None:
        self.commands.append(command)
        w = self.world.data
        item = w["escrow"]
        if item is None:
            return
        w["stacker" if where == "stacker" else "returned"].append(item)
        w["last"], w["escrow"] = {"item": item, "where": where}, None
        self.world.save()
        self._send(event(note_cents=item["cents"], barcode=item["barcode"]))

    def enable(self, notes: frozenset[int], tickets: bool) -> None:
        self.commands.append(f"enable {sorted(notes)} {tickets}")
        self.enabled = (notes, tickets)

    async def stop(self) -> None:
        pass

    # the test
    def fault(self, code: str) -> None:
        self.world.data["faults"].append(code)
        self.world.save()
        self._send(ValidatorFault(code))

    def clear(self, code: str) -> None:
        self.world.data["faults"].remove(code)
        self.world.save()
        self._send(ValidatorCleared(code))

    @property
    def stacker(self) -> list[dict[str, Any]]:
        return list(self.world.data["stacker"])


class FakePrinter:
    """A ticket printer: print_ticket (the cabinet); fault / clear (the test). A fault makes the next tickets fail."""

    def __init__(self, on_event: Callable[[Any], None], world: Path | None = None) -> None:
        self.on_event = on_event
        self.loop = asyncio.get_running_loop()
        self.world = World(world, {"printed": [], "faults": []})
        self.tickets: list[TicketData] = []
        for code in PRINTER_FAULTS:  # what it reports when its line comes up
            self._send(PrinterFault(code) if code in self.world.data["faults"] else PrinterCleared(code))

    def _send(self, event: Any) -> None:
        self.loop.call_soon(self.on_event, event)

    def print_ticket(self, ticket: TicketData) -> None:
        self.tickets.append(ticket)
        w = self.world.data
        if w["faults"]:
            self._send(PrintFailed(ticket.number, w["faults"][0].replace("_", " ")))
            return
        w["printed"].append({"number": ticket.number, "validation": ticket.validation, "cents": ticket.cents,
                             "restricted": ticket.restricted})
        self.world.save()
        self._send(Printed(ticket.number))

    async def stop(self) -> None:
        pass

    def fault(self, code: str) -> None:
        self.world.data["faults"].append(code)
        self.world.save()
        self._send(PrinterFault(code))

    def clear(self, code: str) -> None:
        self.world.data["faults"].remove(code)
        self.world.save()
        self._send(PrinterCleared(code))

    @property
    def printed(self) -> list[dict[str, Any]]:
        return list(self.world.data["printed"])


class FakeTicketHost:
    """The ticket system as the SAS host plays it: it learns the tickets the cabinet printed from its journal (as
    the host does from the cabinet's validation records), numbers tickets out by system validation, and answers a
    ticket in: authorised once if it knows it unredeemed, else refused. `answer` False: it stays silent."""

    def __init__(self, *, answer: bool = True, validate: bool = True) -> None:
        self.answer, self.validate = answer, validate
        self.issued: dict[str, tuple[int, bool]] = {}
        self.redeemed: set[str] = set()
        self._numbers: dict[int, tuple[int, bool]] = {}
        self._validations: dict[int, str] = {}
        self._seq = 0

    def on_written(self, cab: Any) -> None:
        """Answer each ticket in and number each ticket out it reads in the journal (a late answer to what the
        cabinet has moved on from is refused by its fold, and changes nothing)."""
        # A new host (a restart of the crash test's life) first reads what came before, answering none of it: a
        # late answer to an old request could otherwise meet a copy of the same ticket inserted again.
        answering = self._seq > 0
        for entry in cab.journal.entries(after=self._seq):
            self._seq = entry.seq
            r = entry.record
            kind = (r["kind"], r.get("what"))
            if kind == ("ticket_out", "requested"):
                self._numbers[r["number"]] = (r["cents"], r["restricted"])
                if self.validate and answering:
                    self._post(cab, TicketOutValidation(r["number"], f"01{r['number']:016d}", "system").to_json())
            elif kind == ("ticket_out", "validation"):
                self._validations[r["number"]] = r["validation"]
            elif kind == ("ticket_out", "printed"):
                self.issued[self._validations[r["number"]]] = self._numbers[r["number"]]
            elif kind == ("ticket_in", "stacked"):
                self.redeemed.add(r["validation"])
            elif kind == ("ticket_in", "inserted") and self.answer and answering:
                v = r["validation"]
                if v in self.issued and v not in self.redeemed:
                    cents, restricted = self.issued[v]
                    self._post(cab, TicketInAuthorised(v, cents, restricted, 0).to_json())
                else:
                    self._post(cab, TicketInRefused(v, "unknown or already redeemed", 0x80).to_json())

    def _post(self, cab: Any, record: dict[str, Any]) -> None:
        cab._post(lambda batch: self._write(batch, record))

    @staticmethod
    def _write(batch: Any, record: dict[str, Any]) -> None:
        from controller.games.base import IllegalEvent

        try:
            batch.add(record)
        except IllegalEvent:
            pass  # the cabinet moved on (a timeout came first): the host's late answer is refused, as over SAS
