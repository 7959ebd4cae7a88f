"""The cabinet's notes and tickets at run time: the bill validator's and ticket printer's events become journal records, each journaled before the device is told to act.

A note in escrow is journaled (NoteEscrow) together with the cabinet's decision (NoteStacking, or NoteReturned),
and only then is the validator told to stack or return it; it is credited by NoteStacked when the validator says it
is in the stacker. A ticket inserted is journaled (TicketInInserted) and waits for the ticket system (the SAS
host's TicketInAuthorised or TicketInRefused, written into this journal by controller/sas.py); only an authorised
ticket is stacked, and credited by TicketInStacked. A cash out by ticket journals TicketOutRequested (the credits
leave the meter), then its validation number (computed here by secure-enhanced validation when the host set a
validation id and [cabinet.tito] validation allows it, else the host's, by system validation); only a ticket whose
number is journaled is printed, and TicketOutPrinted pays it. The ticket system has [cabinet.tito] host_timeout
seconds (on the runtime's clock) to number a ticket out (else TicketOutFailed: the credits come back) or to answer
a ticket in (else TicketInRefused "no answer from the ticket system", and the ticket goes back).

Restart (the journal replayed): a note or ticket the validator held at the power loss is settled by the validator's
PoweredUp(holding): "stacker" credits it, "acceptor" returns it, "none" returns an item never told to stack, and
makes a note (or authorised ticket) that was stacking a lockup until an attendant counts the stacker (the clear
says "credit" or "no_credit", journaled with the attendant's role). A ticket out numbered and neither printed nor
failed is printed again with the SAME validation number: the host redeems a number once, so a second copy of a
ticket that did come out before the power loss cannot be paid twice. Without SAS (and without a stand-in ticket
system) tickets in are not enabled, and ticket out is off unless [cabinet.tito] validation_id gives the cabinet its
own validation id (a stand-alone site): a cash out then goes to the hopper or a hand pay.
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import logging
from typing import Any, Callable

from controller.cabinetmodel import ItemEscrowed, TicketOut, TicketValidated
from controller.cabinetrecords import (
    DeviceCleared, DeviceFault, LockupRecord, NoteEscrow, NoteInDoubt, NoteRejected, NoteReturned, NoteStacked,
    NoteStacking, SasValidationId, TicketInInserted, TicketInRefused, TicketInReturned, TicketInStacked,
    TicketOutFailed, TicketOutRequested, TicketOutValidation,
)
from controller.cabinetstate import CabinetState, money_in_blocked, notes_enabled, play_blocked, ticket_out_blocked
from controller.games.base import IllegalEvent
from controller.runtime import Batch, CommandRefused, command, int_arg
from controller.tito import credits_of, enhanced_validation, is_validation

__all__ = ["CabinetTito", "NO_ANSWER"]

log = logging.getLogger("croupier.cabinet")

NO_ANSWER = "no answer from the ticket system"
Factory = Callable[[Callable[[Any], None]], Any]


class CabinetTito:
    """The notes-and-tickets part of controller/cabinet.py's Cabinet (which sets the attributes it reads)."""

    config: Any
    state: CabinetState | None
    sas: Any
    clock: Callable[[], float]
    _tasks: list[asyncio.Task[Any]]
    _post: Callable[[Callable[[Batch], Any]], None]
    _live: CabinetState

    # Tests and the crash driver give in-process devices (drivers/validator/events.py's ValidatorLink, the
    # printer's PrinterLink) made from the cabinet's event callback; otherwise the config's ports decide.
    validator_factory: Factory | None = None
    printer_factory: Factory | None = None
    # A stand-in for the SAS ticket system (the tests' fake host, the demo's): on_written(cabinet) after each
    # commit, where it may answer a ticket in or number a ticket out as the SAS host's polls would.
    ticket_host: Any = None

    def _tito_init(self) -> None:
        self.validator: Any = None
        self.printer: Any = None
        self._validator_sim: Any = None        # port "sim": the simulated devices behind the real drivers
        self._printer_sim: Any = None
        self._enabled: tuple[frozenset[int], bool] | None = None
        self._deadlines: dict[str, tuple[Any, float]] = {}
        self._deadline_timer: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------------------------------------ life cycle

    def _start_tito(self) -> None:
        cfg, state = self.config, self._live
        machine = cfg.tito.validation_id
        if machine and cfg.sas is None and (state.validation_id is None or state.validation_id[0] != machine):
            # a stand-alone site's own validation id, journaled once (a restart keeps its sequence number)
            self._post(lambda batch: batch.add(SasValidationId(machine, 1).to_json()))
        if self.validator_factory is not None:
            self.validator = self.validator_factory(self._validator_event)
        elif cfg.validator is not None:
            from drivers.validator.aio import start_validator
            from drivers.validator.protocol import Item

            e = state.escrow  # the journal's open escrow: the driver does not report it again
            held = None if e is None or e.stage == "in_doubt" else Item(None if e.ticket else e.cents, e.validation)
            self.validator, self._validator_sim = start_validator(cfg.validator, self._validator_event,
                                                                  in_escrow=held)
        if self.printer_factory is not None:
            self.printer = self.printer_factory(self._printer_event)
        elif cfg.printer is not None:
            from controller.ticketlayout import CROUPIER_TEMPLATE
            from drivers.printer.aio import printer_for

            self.printer, self._printer_sim = printer_for(cfg.printer, CROUPIER_TEMPLATE,
                                                          on_event=self._printer_event)
            if self.printer is not None:
                self.printer.start()
        t = state.ticket_out
        if t is not None and t.validation is not None:
            self._print(t)  # numbered, neither printed nor failed: print it again, same number (see the docstring)
        elif t is not None:
            self._post(lambda batch: self._number(batch, t.number))
        e = state.escrow
        if e is not None and e.stage == "inserted":
            self._arm("ticket_in", e.validation)
        if e is not None and self.validator is not None and e.stage in ("stacking", "authorised", "refused"):
            # Only this process died (a validator that lost power says PoweredUp and settles it): what it was told
            # before may not have been said, so say it again; one that went quiet meanwhile is in doubt (escrow).
            (self.validator.return_item if e.stage == "refused" else self.validator.stack)()
            self._arm("escrow", (e.validation, e.cents, e.stage))
        self._sync_validator()

    async def _close_tito(self) -> None:
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        for device in (self.validator, self.printer, self._validator_sim, self._printer_sim):
            if device is not None:  # each driver first, then its simulator
                try:
                    stopped = device.stop()
                    if asyncio.iscoroutine(stopped):
                        await stopped
                except Exception as exc:  # noqa: BLE001 - a device that will not close must not stop the rest
                    log.warning("closing %s: %s", type(device).__name__, exc)

    def _tito_written(self) -> None:
        self._sync_validator()
        if self.ticket_host is not None:
            self.ticket_host.on_written(self)

    # ------------------------------------------------------------------------------------------ what to enable

    def ticket_system(self) -> bool:
        """Whether a ticket system (the SAS host, or a stand-in) answers tickets in and numbers tickets out."""
        return self.sas is not None or self.ticket_host is not None

    def configured_notes(self) -> frozenset[int]:
        line = self.config.validator
        return frozenset(line.notes) if line is not None else frozenset(getattr(self.validator, "notes", ()))

    def _sync_validator(self) -> None:
        """Tell the validator what it may take now (after every commit): the notes configured that are whole
        credits, less what the host disabled, and tickets when a ticket system answers; nothing while money in is
        disabled (a door, a lockup, the host)."""
        if self.validator is None or self.state is None:
            return
        state = self.state
        notes = notes_enabled(state, self.configured_notes())
        tickets = bool(state.bills[0]) and money_in_blocked(state) is None and self.ticket_system()
        if (notes, tickets) != self._enabled:
            self._enabled = (notes, tickets)
            self.validator.enable(notes, tickets)

    def _ticket_out_on(self, state: CabinetState) -> bool:
        return self.printer is not None and (self._enhanced(state) or self.ticket_system())

    def _enhanced(self, state: CabinetState) -> bool:
        return state.validation_id is not None and (self.config.tito.validation == "enhanced" or self.sas is None)

    # ------------------------------------------------------------------------------------------ deadlines

    def _arm(self, key: str, value: Any) -> None:
        timeout = self.config.tito.host_timeout
        self._deadlines[key] = (value, self.clock() + timeout)
        self._deadline_timer = asyncio.get_running_loop().call_later(timeout, self.tito_check)

    def tito_check(self) -> None:
        """Give up on the ticket system where it has not answered in time (on the runtime's clock)."""
        now = self.clock()
        for key, (value, at) in list(self._deadlines.items()):
            if now < at:
                continue
            del self._deadlines[key]
            self._post(self._gave_up(key, value))

    def _gave_up(self, key: str, value: Any) -> Callable[[Batch], None]:
        def handler(batch: Batch) -> None:
            if key == "escrow":
                self._escrow_silent(batch, value)
            elif key == "ticket_in":
                self._refuse_ticket(batch, value, NO_ANSWER)
            else:
                self._ticket_failed(batch, value, "no validation number from the ticket system")

        return handler

    def _escrow_silent(self, batch: Batch, held: tuple[str | None, int, str]) -> None:
        """After a restart the validator never said where the item it was told to stack (or return) went."""
        e = batch.state.escrow
        if e is None or (e.validation, e.cents, e.stage) != held:
            return  # settled meanwhile
        log.error("the validator never settled %s after the restart: an attendant counts the stacker", e)
        if e.stage == "refused":
            batch.add(TicketInReturned(e.validation or "", "no answer from the validator").to_json())
        elif e.ticket:
            batch.add(LockupRecord({"id": batch.state.next_lockup, "kind": "ticket_in_doubt",
                                    "text": f"ticket {e.validation} was stacking at a restart: count the stacker "
                                            "(credit, or no credit)"}).to_json())
        else:
            batch.add(NoteInDoubt(e.cents).to_json())

    def _refuse_ticket(self, batch: Batch, validation: str, reason: str) -> None:
        e = batch.state.escrow
        if e is not None and e.validation == validation and e.stage in ("inserted", "authorised"):
            log.warning("ticket %s refused: %s", validation, reason)
            batch.add(TicketInRefused(validation, reason).to_json())

    def _ticket_failed(self, batch: Batch, number: int, reason: str) -> None:
        t = batch.state.ticket_out
        if t is not None and t.number == number:
            log.warning("ticket %d not printed: %s", number, reason)
            batch.add(TicketOutFailed(number, reason).to_json())

    # ------------------------------------------------------------------------------------------ effects

    def _tito_show(self, effects: tuple[Any, ...]) -> None:
        """Act on what was just journaled: print a numbered ticket, stack an authorised one, return a refused one."""
        for eff in effects:
            if isinstance(eff, TicketValidated):
                self._deadlines.pop("ticket_out", None)
                self._print(eff.ticket)
            elif isinstance(eff, ItemEscrowed) and eff.escrow.ticket:
                e = eff.escrow
                if e.stage == "inserted":
                    self._arm("ticket_in", e.validation)
                    continue
                self._deadlines.pop("ticket_in", None)
                if e.stage == "authorised" and credits_of(e.cents, self._live.denomination) is None:
                    reason = f"{e.cents} cents is not whole credits of {self._live.denomination} cents"
                    self._post(functools.partial(self._refuse_ticket, validation=e.validation or "", reason=reason))
                elif e.stage == "authorised" and self.validator is not None:
                    self.validator.stack()
                elif e.stage == "refused" and self.validator is not None:
                    self.validator.return_item()

    def _print(self, ticket: TicketOut) -> None:
        if self.printer is None:
            self._post(lambda batch: self._ticket_failed(batch, ticket.number, "no printer"))
            return
        from drivers.printer.events import TicketData

        line = self.config.printer
        sas = self.config.sas
        printed = datetime.datetime.fromtimestamp(self.clock(), datetime.timezone.utc).isoformat(timespec="seconds")
        expires = ticket.expires if ticket.expires is not None else getattr(line, "expires_days", 30)
        assert ticket.validation is not None
        self.printer.print_ticket(TicketData(
            getattr(line, "venue", ""), getattr(line, "address", ""), self.config.cabinet_id,
            getattr(sas, "asset_number", 0) if sas is not None else 0, ticket.number, ticket.cents, ticket.validation,
            printed, expires, ticket.restricted))

    # ------------------------------------------------------------------------------------------ cash out

    def _ticket_cash_out(self, batch: Batch) -> dict[str, Any] | None:
        """Cash out by ticket where the cabinet can print one now (None: the hopper or a hand pay instead)."""
        state: CabinetState = batch.state
        if not self._ticket_out_on(state) or ticket_out_blocked(state) or play_blocked(state):
            return None
        credits, restricted = (state.cashable, False) if state.cashable > 0 else (state.restricted, True)
        cents = credits * state.denomination
        limit = getattr(self.config.printer, "ticket_limit_cents", None)
        if limit is not None and cents > limit:
            if restricted:
                raise CommandRefused(f"restricted credits over the ticket limit ({limit} cents) are played, "
                                     "not cashed")
            return None  # over the ticket limit: a hand pay
        number = state.tickets + 1
        batch.add(TicketOutRequested(credits, cents, restricted, number).to_json())
        self._number(batch, number)
        return {"ok": True, "result": {"via": "ticket", "credits": credits, "number": number,
                                       "restricted": restricted}}

    def _number(self, batch: Batch, number: int) -> None:
        """A ticket's validation number: computed now (enhanced), else the host's, within the host timeout."""
        state: CabinetState = batch.state
        t = state.ticket_out
        if t is None or t.number != number or t.validation is not None:
            return
        if self._enhanced(state):
            assert state.validation_id is not None
            machine, sequence = state.validation_id
            expires = getattr(self.config.printer, "expires_days", None)
            batch.add(TicketOutValidation(number, enhanced_validation(machine, sequence), "enhanced",
                                          expires).to_json())
        elif self.ticket_system():
            batch.after.append(lambda: self._arm("ticket_out", number))
        else:
            batch.add(TicketOutFailed(number, "no ticket system to number the ticket").to_json())

    # ------------------------------------------------------------------------------------------ simulation

    @command("insert_note", roles=("attendant", "ops"),
             help="simulation only: put a note (cents) into the simulated validator")
    def _insert_note(self, batch: Batch, role: Any, args: dict[str, Any]) -> dict[str, Any]:
        cents = int_arg(args, "cents")
        self._into_simulator(lambda: self._simulated_validator("insert_note").insert_note(cents))
        return {"ok": True, "result": {"inserted": cents}}

    @command("insert_ticket", roles=("attendant", "ops"),
             help="simulation only: put a ticket (barcode: its 18-digit number) into the simulated validator")
    def _insert_ticket(self, batch: Batch, role: Any, args: dict[str, Any]) -> dict[str, Any]:
        barcode = args.get("barcode")
        if not isinstance(barcode, str) or not is_validation(barcode):
            raise CommandRefused("insert_ticket needs a barcode: the ticket's 18 digits")
        self._into_simulator(lambda: self._simulated_validator("insert_ticket").insert_ticket(barcode))
        return {"ok": True, "result": {"inserted": barcode}}

    @staticmethod
    def _into_simulator(put: Callable[[], Any]) -> None:
        """Put an item into the simulated validator; one it will not take now (inhibited, busy, in fault) is
        refused in its words, as a real slot would not take it."""
        from drivers.validator.sim import SimError

        try:
            put()
        except SimError as exc:
            raise CommandRefused(f"the validator takes nothing now: {exc}") from None

    def _simulated_validator(self, what: str) -> Any:
        """The validator's simulator (the physical side), where there is one: a real validator takes real notes."""
        sim = self._validator_sim
        if sim is None and hasattr(self.validator, "insert_note"):
            sim = self.validator  # an in-process stand-in (tests)
        if sim is None:
            raise CommandRefused(f"{what} needs a simulated validator ([validator] port = \"sim\")")
        return sim

    # ------------------------------------------------------------------------------------------ device events

    def _device(self, handler: Callable[[Batch], Any]) -> None:
        """A device's event, as an input: one the state refuses is logged and journals nothing."""
        def run(batch: Batch) -> None:
            mark = batch.mark()
            try:
                handler(batch)
            except IllegalEvent as exc:
                batch.undo(mark)
                log.warning("device event not taken: %s", exc)

        self._post(run)

    def _validator_event(self, ev: Any) -> None:
        from drivers.validator.events import (Escrowed, PoweredUp, Rejected, Returned, Stacked, ValidatorCleared,
                                              ValidatorFault)

        if isinstance(ev, Escrowed):
            self._device(lambda batch: self._escrowed(batch, ev.note_cents, ev.barcode))
        elif isinstance(ev, Stacked):
            self._device(lambda batch: self._stacked(batch, ev.note_cents, ev.barcode))
        elif isinstance(ev, Returned):
            self._device(lambda batch: self._returned(batch, ev.note_cents, ev.barcode, ev.reason))
        elif isinstance(ev, Rejected):
            self._device(lambda batch: batch.add(NoteRejected(ev.reason).to_json()))
        elif isinstance(ev, ValidatorFault):
            log.warning("validator fault: %s", ev.code)
            self._device(lambda batch: self._fault(batch, "validator", ev.code, True))
        elif isinstance(ev, ValidatorCleared):
            self._device(lambda batch: self._fault(batch, "validator", ev.code, False))
        elif isinstance(ev, PoweredUp):
            self._enabled = None  # a validator that restarted is inhibited: tell it again, now
            self._sync_validator()
            self._device(lambda batch: self._powered_up(batch, ev.holding))

    def _escrowed(self, batch: Batch, cents: int | None, barcode: str | None) -> None:
        state: CabinetState = batch.state
        if state.escrow is not None:  # one item at a time: whatever this is goes back
            log.error("the validator escrowed a second item while the cabinet holds %s", state.escrow)
            batch.after.append(self.validator.return_item)
            return
        if cents is not None:
            refusal = self._note_refusal(state, cents)
            batch.add(NoteEscrow(cents).to_json())
            if refusal:
                batch.add(NoteReturned(cents, refusal).to_json())
                batch.after.append(self.validator.return_item)
            else:
                batch.add(NoteStacking(cents).to_json())
                batch.after.append(self.validator.stack)  # only once escrow and stacking are journaled
            return
        barcode = barcode or ""
        if not is_validation(barcode):
            batch.add(NoteRejected(f"a ticket whose barcode is not 18 digits ({barcode[:24]!r})").to_json())
            batch.after.append(self.validator.return_item)
            return
        batch.add(TicketInInserted(barcode).to_json())
        refusal = money_in_blocked(state) or (None if self.ticket_system() and state.bills[0] else
                                              "tickets are not taken here")
        if refusal:
            batch.add(TicketInRefused(barcode, refusal).to_json())  # its effect returns the ticket

    def _note_refusal(self, state: CabinetState, cents: int) -> str | None:
        if credits_of(cents, state.denomination) is None:
            return f"{cents} cents is not whole credits of {state.denomination} cents"
        if cents not in notes_enabled(state, self.configured_notes()):
            return money_in_blocked(state) or ("disabled by the floor system" if not state.bills[0] else
                                               f"a note of {cents} cents is not enabled")
        return None

    def _stacked(self, batch: Batch, cents: int | None, barcode: str | None) -> None:
        e = batch.state.escrow
        if e is None or e.stage == "in_doubt":
            log.warning("the validator stacked an item the cabinet does not hold in escrow (%s, %s)", cents, barcode)
            return
        if cents is not None and not e.ticket:
            batch.add(NoteStacked(cents, cents // batch.state.denomination).to_json())
        elif barcode is not None and e.validation == barcode:
            batch.add(TicketInStacked(barcode, e.cents, e.cents // batch.state.denomination, e.restricted).to_json())
        else:
            log.error("the validator stacked %s, the cabinet held %s", cents or barcode, e)

    def _returned(self, batch: Batch, cents: int | None, barcode: str | None, reason: str) -> None:
        e = batch.state.escrow
        if e is None or e.stage == "in_doubt":
            return
        if cents is not None and not e.ticket:
            batch.add(NoteReturned(e.cents, reason).to_json())
        elif e.ticket and (barcode is None or barcode == e.validation):
            batch.add(TicketInReturned(e.validation or "", reason).to_json())

    def _powered_up(self, batch: Batch, holding: str) -> None:
        """The validator restarted: its faults are what it reports from now on, and the item the cabinet holds in
        escrow is settled by where the validator says it went."""
        for device, code in batch.state.device_faults:
            if device == "validator":
                batch.add(DeviceCleared("validator", code).to_json())
        e = batch.state.escrow
        if e is None or e.stage == "in_doubt":
            return
        d = batch.state.denomination
        if e.ticket:
            v = e.validation or ""
            if holding == "stacker" and e.stage == "authorised":
                batch.add(TicketInStacked(v, e.cents, e.cents // d, e.restricted).to_json())
            elif holding == "none" and e.stage == "authorised":
                batch.add(LockupRecord({"id": batch.state.next_lockup, "kind": "ticket_in_doubt",
                                        "text": f"ticket {v} was stacking at a power loss: count the stacker "
                                                "(credit, or no credit)"}).to_json())
            else:  # never authorised (or refused): not in the stacker by the cabinet's word, so it went back
                batch.add(TicketInReturned(v, "power lost").to_json())
        elif holding == "stacker":
            batch.add(NoteStacked(e.cents, e.cents // d).to_json())
        elif holding == "none" and e.stage == "stacking":
            batch.add(NoteInDoubt(e.cents).to_json())
        else:
            batch.add(NoteReturned(e.cents, "power lost").to_json())

    def _printer_event(self, ev: Any) -> None:
        from drivers.printer.events import PrintFailed, Printed, PrinterCleared, PrinterFault

        if isinstance(ev, Printed):
            self._device(lambda batch: self._printed(batch, ev.number))
        elif isinstance(ev, PrintFailed):
            self._device(lambda batch: self._ticket_failed(batch, ev.number, ev.reason))
        elif isinstance(ev, PrinterFault):
            log.warning("printer: %s", ev.code)
            self._device(lambda batch: self._fault(batch, "printer", ev.code, True))
        elif isinstance(ev, PrinterCleared):
            self._device(lambda batch: self._fault(batch, "printer", ev.code, False))

    @staticmethod
    def _fault(batch: Batch, device: str, code: str, on: bool) -> None:
        """A device's fault (or warning) as it changes: a report of what the journal already says is not journaled
        again (a printer's line coming up reports every status)."""
        if ((device, code) in batch.state.device_faults) != on:
            batch.add((DeviceFault if on else DeviceCleared)(device, code).to_json())

    def _printed(self, batch: Batch, number: int) -> None:
        from controller.cabinetrecords import TicketOutPrinted

        t = batch.state.ticket_out
        if t is not None and t.number == number and t.validation is not None:
            batch.add(TicketOutPrinted(number).to_json())
        else:
            log.info("printer: ticket %d printed again (already paid, or not this one)", number)
