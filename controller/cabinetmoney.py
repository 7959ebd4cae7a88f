"""The fold of a cabinet's notes and tickets (bill validator, ticket printer, ticket system) and what blocks play, money in and ticket out: pure, over controller/cabinetmodel.py's state; controller/cabinetstate.py's `step` folds these records through MONEY_FOLDS.

Money in by note or ticket is credited only by its `stacked` record; money out by ticket leaves the meter at the
request and is paid (metered) only by its `printed` record, or comes back by its `failed` one. The balance holds
after every record: a ticket requested and not printed is still owed (CabinetState.pending).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from controller.cabinetmodel import (
    DEVICE_LOCKUPS, LOCKUPS, MONEY_SHOWN, CabinetState, Credited, Escrow, ItemEscrowed, Lockup, LockupCleared,
    LockupRaised, NoteTaken, TicketOut, TicketPaid, TicketValidated, _bump,
)
from controller.cabinetrecords import (
    DeviceCleared, DeviceFault, NoteEscrow, NoteInDoubt, NoteRejected, NoteReturned, NoteStacked, NoteStacking,
    SasBills, SasValidationId, TicketInAuthorised, TicketInInserted, TicketInRefused, TicketInReturned,
    TicketInStacked, TicketOutFailed, TicketOutPrinted, TicketOutRequested, TicketOutValidation,
)
from controller.games.base import IllegalEvent
from controller.tito import credits_of, enhanced_validation, is_validation, next_sequence

__all__ = ["MONEY_FOLDS", "play_blocked", "money_in_blocked", "ticket_out_blocked", "notes_enabled",
           "in_doubt_cleared", "devices", "game_lockup"]

Fold = Callable[[CabinetState, Any], tuple[CabinetState, list[Any]]]


def _illegal(reason: str) -> IllegalEvent:
    return IllegalEvent(reason)


# ------------------------------------------------------------------------------------------------ what blocks what

def play_blocked(state: CabinetState) -> str | None:
    """Why no game may start now (None: it may)."""
    return _blocked(state, game_lockup(state), waits_on_progressive=True)


def money_in_blocked(state: CabinetState) -> str | None:
    """Why money may not come in now (None: it may)."""
    lockup = next((x for x in state.lockups if not x.kind.startswith("printer_")), None)
    return _blocked(state, lockup, waits_on_progressive=False)


def _blocked(state: CabinetState, lockup: Lockup | None, *, waits_on_progressive: bool) -> str | None:
    """What play and money in both wait on, in the order the player is told it: an open door, `lockup`, a payout,
    a ticket printing, (for play) a progressive hit awaiting its award, the floor system's disable."""
    if state.doors_open:
        return f"{' and '.join(d.replace('_', ' ') for d in state.doors_open)} door open"
    if lockup is not None:
        return lockup.text
    if state.payout is not None:
        return "paying out"
    if state.ticket_out is not None:
        return "printing a ticket"
    if waits_on_progressive and state.progressive.pending_hit is not None:
        return "progressive jackpot: waiting for the link controller's award"
    if state.host_disabled:
        return "disabled by the floor system"
    return None


def game_lockup(state: CabinetState) -> Lockup | None:
    """The first lockup that stops play (a device's lockup stops only its part of the money)."""
    return next((x for x in state.lockups if x.kind not in DEVICE_LOCKUPS), None)


def ticket_out_blocked(state: CabinetState) -> str | None:
    """Why a cash out by ticket cannot start now (None: it can), beyond what stops any cash out."""
    lockup = next((x for x in state.lockups if x.kind.startswith("printer_")), None)
    if lockup is not None:
        return lockup.text
    if state.ticket_out is not None:
        return "a ticket is printing"
    return None


def notes_enabled(state: CabinetState, configured: frozenset[int]) -> frozenset[int]:
    """The notes (cents) the validator may take now: those configured that are whole credits, less what the SAS
    host disabled; none while money in is disabled."""
    enabled, host_notes = state.bills
    if not enabled or money_in_blocked(state):
        return frozenset()
    notes = {c for c in configured if credits_of(c, state.denomination) is not None}
    return frozenset(notes if host_notes is None else notes & set(host_notes))


# ------------------------------------------------------------------------------------------------ the folds

MONEY_SINCE = 20  # notes and tickets kept for the next game's recall (a player feeding notes without playing)


def _money(state: CabinetState, entry: dict[str, Any]) -> dict[str, Any]:
    return {"money": (state.money + (entry,))[-MONEY_SHOWN:],
            "money_since": (state.money_since + (entry,))[-MONEY_SINCE:]}


def _escrowed(state: CabinetState, what: str) -> Escrow:
    if state.escrow is None:
        raise _illegal(f"no {what} is in the validator")
    return state.escrow


def _note_escrow(state: CabinetState, record: NoteEscrow) -> tuple[CabinetState, list[Any]]:
    if state.escrow is not None:
        raise _illegal("the validator already holds an item")
    if int(record.cents) <= 0:
        raise _illegal("a note is worth a positive number of cents")
    escrow = Escrow("escrow", int(record.cents))
    return replace(state, escrow=escrow), [ItemEscrowed(escrow)]


def _note_stacking(state: CabinetState, record: NoteStacking) -> tuple[CabinetState, list[Any]]:
    e = _escrowed(state, "note")
    if e.ticket or e.stage != "escrow" or e.cents != record.cents:
        raise _illegal(f"no note of {record.cents} cents waits in escrow")
    if credits_of(e.cents, state.denomination) is None:
        raise _illegal(f"a note of {e.cents} cents is not whole credits of {state.denomination} cents")
    return replace(state, escrow=replace(e, stage="stacking")), []


def _take_note(state: CabinetState, cents: int) -> tuple[CabinetState, list[Any]]:
    credits = cents // state.denomination
    m = state.meters
    m = replace(m, notes_in=_bump(m.notes_in, cents, 1), notes_in_cents=m.notes_in_cents + cents,  # type: ignore[arg-type]
                notes_credits=m.notes_credits + credits)
    entry = {"kind": "note", "cents": cents, "credits": credits}
    return (replace(state, escrow=None, credits=state.credits + credits, meters=m, **_money(state, entry)),
            [NoteTaken(cents, credits), Credited(credits, "note")])


def _note_stacked(state: CabinetState, record: NoteStacked) -> tuple[CabinetState, list[Any]]:
    e = _escrowed(state, "note")
    cents = int(record.cents)
    if e.ticket or e.stage not in ("escrow", "stacking") or e.cents != cents:
        raise _illegal(f"no note of {cents} cents is in escrow")
    if credits_of(cents, state.denomination) != record.credits:
        raise _illegal(f"a note of {cents} cents is {credits_of(cents, state.denomination)} credits, not "
                       f"{record.credits}")
    return _take_note(state, cents)


def _note_returned(state: CabinetState, record: NoteReturned) -> tuple[CabinetState, list[Any]]:
    e = _escrowed(state, "note")
    if e.ticket or e.cents != record.cents or e.stage == "in_doubt":
        raise _illegal(f"no note of {record.cents} cents is in escrow")
    return replace(state, escrow=None), []


def _note_in_doubt(state: CabinetState, record: NoteInDoubt) -> tuple[CabinetState, list[Any]]:
    e = _escrowed(state, "note")
    if e.ticket or e.stage != "stacking" or e.cents != record.cents:
        raise _illegal(f"no note of {record.cents} cents was stacking")
    credits = e.cents // state.denomination
    lockup = Lockup(state.next_lockup, "note_in_doubt", f"a note of {_cents_text(e.cents)} was stacking at a power "
                    "loss: count the stacker (credit, or no credit)", credits)
    meters = replace(state.meters, lockups=_bump(state.meters.lockups, lockup.kind, 1))
    return (replace(state, escrow=replace(e, stage="in_doubt"), lockups=state.lockups + (lockup,),
                    next_lockup=lockup.id + 1, meters=meters), [LockupRaised(lockup)])


def in_doubt_cleared(state: CabinetState, lockup: Lockup, action: str) -> tuple[CabinetState, list[Any]]:
    e = state.escrow
    assert e is not None and e.stage == "in_doubt"
    effects: list[Any] = [LockupCleared(lockup, action)]
    if action != "credit":
        return replace(state, escrow=None), effects
    if e.ticket:
        assert e.validation is not None
        state, more = _take_ticket(state, e.validation, e.cents, e.restricted)
    else:
        state, more = _take_note(state, e.cents)
    return state, effects + more


def _ticket_out_requested(state: CabinetState, record: TicketOutRequested) -> tuple[CabinetState, list[Any]]:
    credits, restricted = int(record.credits), bool(record.restricted)
    blocked = play_blocked(state) or ticket_out_blocked(state)
    if blocked:
        raise _illegal(f"no cash out by ticket now: {blocked}")
    if state.slot.free is not None or state.slot.pending is not None:
        raise _illegal("finish the bonus (free spins or pick) before cashing out")
    if record.number != state.tickets + 1:
        raise _illegal(f"ticket {record.number} is not the next ticket ({state.tickets + 1})")
    have = state.restricted if restricted else state.cashable
    if not 0 < credits <= have:
        raise _illegal(f"cannot print a ticket of {credits} {'restricted' if restricted else 'cashable'} credits "
                       f"with {have} on the meter")
    if record.cents != credits * state.denomination:
        raise _illegal(f"{credits} credits are {credits * state.denomination} cents, not {record.cents}")
    ticket = TicketOut(record.number, credits, int(record.cents), restricted)
    return replace(state, credits=state.credits - credits, restricted=state.restricted - credits * restricted,
                   ticket_out=ticket, tickets=record.number), []


def _pending_ticket(state: CabinetState, number: int) -> TicketOut:
    t = state.ticket_out
    if t is None or t.number != number:
        raise _illegal(f"ticket {number} is not the ticket being printed")
    return t


def _ticket_out_validation(state: CabinetState, record: TicketOutValidation) -> tuple[CabinetState, list[Any]]:
    t = _pending_ticket(state, record.number)
    if t.validation is not None:
        raise _illegal(f"ticket {t.number} has its validation number")
    if not is_validation(record.validation):
        raise _illegal(f"a validation number is 18 digits, not {record.validation!r}")
    changes: dict[str, Any] = {}
    if record.by == "enhanced":
        if state.validation_id is None:
            raise _illegal("no validation id: the host has not set one")
        machine, sequence = state.validation_id
        if record.validation != enhanced_validation(machine, sequence):
            raise _illegal(f"{record.validation} is not validation id {machine}'s number for sequence {sequence}")
        changes["validation_id"] = (machine, next_sequence(sequence))
    elif record.by != "system":
        raise _illegal(f"validation by \"system\" or \"enhanced\", not {record.by!r}")
    ticket = replace(t, validation=record.validation, by=record.by, expires=record.expires)
    return replace(state, ticket_out=ticket, **changes), [TicketValidated(ticket)]


def _ticket_out_printed(state: CabinetState, record: TicketOutPrinted) -> tuple[CabinetState, list[Any]]:
    t = _pending_ticket(state, record.number)
    if t.validation is None:
        raise _illegal(f"ticket {t.number} has no validation number: it cannot have been printed")
    m = state.meters
    if t.restricted:
        m = replace(m, tickets_out_restricted=m.tickets_out_restricted + 1,
                    tickets_out_restricted_cents=m.tickets_out_restricted_cents + t.cents)
    else:
        m = replace(m, tickets_out_cashable=m.tickets_out_cashable + 1,
                    tickets_out_cashable_cents=m.tickets_out_cashable_cents + t.cents)
    m = replace(m, tickets_out_credits=m.tickets_out_credits + t.credits)
    entry = {"kind": "ticket_out", "number": t.number, "validation": t.validation, "cents": t.cents,
             "credits": t.credits, "restricted": t.restricted}
    return (replace(state, ticket_out=None, meters=m, **_money(state, entry)),
            [TicketPaid(False, t.validation, t.cents, t.restricted)])


def _ticket_out_failed(state: CabinetState, record: TicketOutFailed) -> tuple[CabinetState, list[Any]]:
    # The credits go back on the meter, always (restricted ones as restricted): the player cashes out again, by
    # the hopper or a hand pay while the printer is out of service. A validation number it used is never reused.
    t = _pending_ticket(state, record.number)
    return replace(state, ticket_out=None, credits=state.credits + t.credits,
                   restricted=state.restricted + t.credits * t.restricted), [Credited(t.credits, "ticket_failed")]


def _ticket_in_inserted(state: CabinetState, record: TicketInInserted) -> tuple[CabinetState, list[Any]]:
    if state.escrow is not None:
        raise _illegal("the validator already holds an item")
    if not is_validation(record.validation):
        raise _illegal(f"a ticket's validation number is 18 digits, not {record.validation!r}")
    escrow = Escrow("inserted", validation=record.validation)
    return replace(state, escrow=escrow), [ItemEscrowed(escrow)]


def _ticket_escrow(state: CabinetState, validation: str, stages: tuple[str, ...]) -> Escrow:
    e = state.escrow
    if e is None or e.validation != validation or e.stage not in stages:
        raise _illegal(f"ticket {validation} is not {' or '.join(stages)} in the validator")
    return e


def _ticket_in_authorised(state: CabinetState, record: TicketInAuthorised) -> tuple[CabinetState, list[Any]]:
    e = _ticket_escrow(state, record.validation, ("inserted",))
    if int(record.cents) <= 0:
        raise _illegal("an authorised ticket is worth a positive number of cents")
    # An amount that is not whole credits is recorded as the host said; the runtime refuses the ticket next.
    escrow = replace(e, stage="authorised", cents=int(record.cents), restricted=bool(record.restricted))
    return replace(state, escrow=escrow), [ItemEscrowed(escrow)]


def _ticket_in_refused(state: CabinetState, record: TicketInRefused) -> tuple[CabinetState, list[Any]]:
    e = _ticket_escrow(state, record.validation, ("inserted", "authorised"))
    escrow = replace(e, stage="refused")
    return replace(state, escrow=escrow), [ItemEscrowed(escrow)]


def _take_ticket(state: CabinetState, validation: str, cents: int, restricted: bool) -> tuple[CabinetState, list[Any]]:
    credits = cents // state.denomination
    m = state.meters
    if restricted:
        m = replace(m, tickets_in_restricted=m.tickets_in_restricted + 1,
                    tickets_in_restricted_cents=m.tickets_in_restricted_cents + cents)
    else:
        m = replace(m, tickets_in_cashable=m.tickets_in_cashable + 1,
                    tickets_in_cashable_cents=m.tickets_in_cashable_cents + cents)
    m = replace(m, tickets_in_credits=m.tickets_in_credits + credits)
    entry = {"kind": "ticket_in", "validation": validation, "cents": cents, "credits": credits,
             "restricted": restricted}
    return (replace(state, escrow=None, credits=state.credits + credits,
                    restricted=state.restricted + credits * restricted, meters=m, **_money(state, entry)),
            [TicketPaid(True, validation, cents, restricted), Credited(credits, "ticket")])


def _ticket_in_stacked(state: CabinetState, record: TicketInStacked) -> tuple[CabinetState, list[Any]]:
    e = _ticket_escrow(state, record.validation, ("authorised",))
    if (e.cents, e.restricted) != (record.cents, record.restricted):
        raise _illegal(f"ticket {e.validation} was authorised for {e.cents} cents, not {record.cents}")
    if credits_of(e.cents, state.denomination) is None or record.credits != e.cents // state.denomination:
        raise _illegal(f"a ticket of {e.cents} cents is not {record.credits} whole credits of {state.denomination} "
                       "cents")
    return _take_ticket(state, e.validation or "", e.cents, e.restricted)


def _ticket_in_returned(state: CabinetState, record: TicketInReturned) -> tuple[CabinetState, list[Any]]:
    _ticket_escrow(state, record.validation, ("inserted", "authorised", "refused"))
    return replace(state, escrow=None), []


def _device_fault(state: CabinetState, record: DeviceFault) -> tuple[CabinetState, list[Any]]:
    key = (str(record.device), str(record.code))
    if key[0] not in ("validator", "printer"):
        raise _illegal(f"no device {key[0]!r}")
    if key in state.device_faults:
        return state, []  # said again (a restart finds it still there)
    state = replace(state, device_faults=tuple(sorted(state.device_faults + (key,))),
                    meters=replace(state.meters, faults=state.meters.faults + 1))
    kind = f"{key[0]}_{key[1]}"
    if kind not in LOCKUPS:
        return state, []  # a warning (paper low): shown, play and tickets go on
    if any(x.kind == kind for x in state.lockups):
        return state, []
    text = f"{key[0]} {key[1].replace('_', ' ')}: call {' or '.join(LOCKUPS[kind][0])}"
    lockup = Lockup(state.next_lockup, kind, text)
    meters = replace(state.meters, lockups=_bump(state.meters.lockups, kind, 1))
    return (replace(state, lockups=state.lockups + (lockup,), next_lockup=lockup.id + 1, meters=meters),
            [LockupRaised(lockup)])


def _device_cleared(state: CabinetState, record: DeviceCleared) -> tuple[CabinetState, list[Any]]:
    key = (str(record.device), str(record.code))
    if key not in state.device_faults:
        return state, []
    state = replace(state, device_faults=tuple(f for f in state.device_faults if f != key))
    kind = f"{key[0]}_{key[1]}"
    lockup = next((x for x in state.lockups if x.kind == kind), None)
    if lockup is None or kind == "validator_cheat":  # a cheat stays locked until ops has looked
        return state, []
    return replace(state, lockups=tuple(x for x in state.lockups if x is not lockup)), \
        [LockupCleared(lockup, "device")]


def _validation_id(state: CabinetState, record: SasValidationId) -> tuple[CabinetState, list[Any]]:
    machine, sequence = int(record.machine), int(record.sequence)
    if not 0 <= machine < 1 << 24 or not 0 <= sequence < 1 << 24:
        raise _illegal("a validation id and sequence number are 3 bytes each")
    return replace(state, validation_id=(machine, sequence) if machine else None), []


def _bills(state: CabinetState, record: SasBills) -> tuple[CabinetState, list[Any]]:
    notes = state.bills[1] if record.notes is None else tuple(sorted(int(n) for n in record.notes))
    return replace(state, bills=(bool(record.enabled), notes)), []


def _cents_text(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def _rejected(state: CabinetState, record: NoteRejected) -> tuple[CabinetState, list[Any]]:
    return replace(state, meters=replace(state.meters, notes_rejected=state.meters.notes_rejected + 1)), []


MONEY_FOLDS: dict[type, Fold] = {
    NoteEscrow: _note_escrow, NoteStacking: _note_stacking, NoteStacked: _note_stacked, NoteReturned: _note_returned,
    NoteRejected: _rejected, NoteInDoubt: _note_in_doubt,
    TicketOutRequested: _ticket_out_requested, TicketOutValidation: _ticket_out_validation,
    TicketOutPrinted: _ticket_out_printed, TicketOutFailed: _ticket_out_failed,
    TicketInInserted: _ticket_in_inserted, TicketInAuthorised: _ticket_in_authorised,
    TicketInRefused: _ticket_in_refused, TicketInStacked: _ticket_in_stacked, TicketInReturned: _ticket_in_returned,
    DeviceFault: _device_fault, DeviceCleared: _device_cleared, SasValidationId: _validation_id, SasBills: _bills,
}


def devices(state: CabinetState) -> dict[str, dict[str, Any]]:
    """The validator's and printer's status as the journal knows it: "ok", or the faults and warnings reported."""
    out: dict[str, dict[str, Any]] = {}
    for device in ("validator", "printer"):
        codes = [c for d, c in state.device_faults if d == device]
        locked = [c for c in codes if f"{device}_{c}" in LOCKUPS]
        out[device] = {"status": "fault" if locked else "warning" if codes else "ok", "faults": locked,
                       "warnings": [c for c in codes if c not in locked]}
    return out
