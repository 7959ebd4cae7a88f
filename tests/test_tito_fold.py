"""Notes and tickets folded (controller/cabinetstate.py): credited only when stacked, paid only when printed, restricted credits apart, faults as lockups, and money conserved over any sequence of events."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from controller.cabinetrecords import (
    Clear, Credit, DeviceCleared, DeviceFault, NoteEscrow, NoteInDoubt, NoteRejected, NoteReturned, NoteStacked,
    NoteStacking, SasBills, SasValidationId, TicketInAuthorised, TicketInInserted, TicketInRefused, TicketInReturned,
    TicketInStacked, TicketOutFailed, TicketOutPrinted, TicketOutRequested, TicketOutValidation,
)
from controller.cabinetstate import (
    CabinetState, balance, money_in_blocked, new_state, notes_enabled, play_blocked, replay, step, ticket_out_blocked,
)
from controller.games.base import IllegalEvent
from controller.slots.catalog import get_title
from controller.slots.title import Bet
from controller.tito import enhanced_validation

TITLE = get_title("frozen-assets")
DENOM = 25 if 25 in TITLE.denominations else TITLE.denominations[0]
TICKET = "001234567890123456"


def fresh() -> CabinetState:
    return new_state("cab-1", TITLE, DENOM)


def fold(state: CabinetState, *records: Any) -> CabinetState:
    for r in records:
        state, _ = step(state, r.to_json())
        held, owed = balance(state)
        assert held == owed, r
    return state


def test_a_note_is_credited_only_when_stacked() -> None:
    s = fold(fresh(), NoteEscrow(500))
    assert s.credits == 0 and s.escrow is not None and s.escrow.stage == "escrow"
    s = fold(s, NoteStacking(500))
    assert s.credits == 0 and s.escrow is not None and s.escrow.stage == "stacking"
    s = fold(s, NoteStacked(500, 500 // DENOM))
    assert s.credits == 500 // DENOM and s.escrow is None
    m = s.meters
    assert (m.notes_in, m.notes_in_cents, m.notes_credits) == (((500, 1),), 500, 20)
    assert m.credits_in == 20 and s.money[-1] == {"kind": "note", "cents": 500, "credits": 20}


def test_a_returned_note_credits_nothing_and_a_rejected_one_is_metered() -> None:
    s = fold(fresh(), NoteEscrow(2000), NoteReturned(2000, "disabled"), NoteRejected("unknown note"))
    assert s.credits == 0 and s.escrow is None and s.meters.notes_rejected == 1 and s.meters.notes_in_cents == 0


def test_a_note_of_part_credits_is_not_stacked_nor_enabled() -> None:
    s = fold(fresh(), NoteEscrow(510))
    with pytest.raises(IllegalEvent, match="not whole credits"):
        step(s, NoteStacking(510).to_json())
    with pytest.raises(IllegalEvent, match="is 20 credits, not 21"):
        step(fold(fresh(), NoteEscrow(500)), NoteStacked(500, 21).to_json())
    assert notes_enabled(fresh(), frozenset({100, 510, 500})) == {100, 500}


def test_notes_enabled_follow_the_host_and_money_in() -> None:
    s = fold(fresh(), SasBills(True, (500, 1000)))
    assert notes_enabled(s, frozenset({100, 500, 2000})) == {500}
    assert notes_enabled(fold(s, SasBills(False, None)), frozenset({500})) == frozenset()
    assert fold(s, SasBills(False, None), SasBills(True, None)).bills == (True, (500, 1000))
    assert notes_enabled(fold(fresh(), DeviceFault("validator", "jam")), frozenset({500})) == frozenset()


def test_a_note_in_doubt_locks_until_the_attendant_counts_the_stacker() -> None:
    s = fold(fresh(), NoteEscrow(1000), NoteStacking(1000), NoteInDoubt(1000))
    assert [x.kind for x in s.lockups] == ["note_in_doubt"] and s.lockups[0].clear_by == ("attendant", "ops")
    assert play_blocked(s) and money_in_blocked(s)
    with pytest.raises(IllegalEvent, match="cleared by attendant or ops, not player"):
        step(s, Clear(1, "credit", "player").to_json())
    credited = fold(s, Clear(1, "credit", "attendant:jo"))
    assert credited.credits == 40 and credited.meters.notes_in_cents == 1000 and not credited.lockups
    not_credited = fold(s, Clear(1, "no_credit", "attendant:jo"))
    assert not_credited.credits == 0 and not_credited.escrow is None and not not_credited.lockups


def test_a_note_in_escrow_not_stacking_is_never_in_doubt() -> None:
    with pytest.raises(IllegalEvent, match="was stacking"):
        step(fold(fresh(), NoteEscrow(1000)), NoteInDoubt(1000).to_json())


def _ticket_out(s: CabinetState, credits: int, number: int = 1, restricted: bool = False) -> CabinetState:
    return fold(s, TicketOutRequested(credits, credits * DENOM, restricted, number))


def test_ticket_out_takes_the_credits_then_pays_when_printed() -> None:
    s = fold(fresh(), Credit("operator", 40, "ops"))
    s = _ticket_out(s, 40)
    assert s.credits == 0 and s.pending == 40 and s.ticket_out is not None
    assert play_blocked(s) == "printing a ticket" and money_in_blocked(s) == "printing a ticket"
    with pytest.raises(IllegalEvent, match="no validation number"):
        step(s, TicketOutPrinted(1).to_json())
    s = fold(s, TicketOutValidation(1, TICKET, "system"), TicketOutPrinted(1))
    m = s.meters
    assert s.pending == 0 and s.ticket_out is None and s.tickets == 1
    assert (m.tickets_out_cashable, m.tickets_out_cashable_cents, m.tickets_out_credits, m.credits_out) == \
        (1, 1000, 40, 40)


def test_a_failed_ticket_puts_the_credits_back() -> None:
    s = _ticket_out(fold(fresh(), Credit("operator", 40, "ops")), 40)
    s = fold(s, TicketOutValidation(1, TICKET, "system"), TicketOutFailed(1, "paper out"))
    assert s.credits == 40 and s.ticket_out is None and s.meters.tickets_out_credits == 0
    s = _ticket_out(s, 40, number=2)  # the next ticket takes the next number
    assert s.ticket_out is not None and s.ticket_out.number == 2


def test_enhanced_validation_computes_the_number_and_counts_the_sequence() -> None:
    s = fold(fresh(), Credit("operator", 80, "ops"), SasValidationId(0x654321, 1))
    s = _ticket_out(s, 40)
    with pytest.raises(IllegalEvent, match="not validation id"):
        step(s, TicketOutValidation(1, "004580945669109504", "enhanced").to_json())
    s = fold(s, TicketOutValidation(1, "006429188185446104", "enhanced"), TicketOutPrinted(1))
    assert s.validation_id == (0x654321, 2)
    s = _ticket_out(s, 40, number=2)
    s = fold(s, TicketOutValidation(2, enhanced_validation(0x654321, 2), "enhanced"))
    assert s.validation_id == (0x654321, 3)


def test_enhanced_validation_needs_a_validation_id() -> None:
    s = _ticket_out(fold(fresh(), Credit("operator", 4, "ops")), 4)
    with pytest.raises(IllegalEvent, match="no validation id"):
        step(s, TicketOutValidation(1, TICKET, "enhanced").to_json())


def test_ticket_in_is_credited_only_when_authorised_and_stacked() -> None:
    s = fold(fresh(), TicketInInserted(TICKET))
    with pytest.raises(IllegalEvent, match="not authorised"):
        step(s, TicketInStacked(TICKET, 1000, 40, False).to_json())
    s = fold(s, TicketInAuthorised(TICKET, 1000, False, 0))
    assert s.credits == 0
    s = fold(s, TicketInStacked(TICKET, 1000, 40, False))
    m = s.meters
    assert s.credits == 40 and s.escrow is None and s.restricted == 0
    assert (m.tickets_in_cashable, m.tickets_in_cashable_cents, m.tickets_in_credits, m.credits_in) == (1, 1000, 40, 40)


def test_a_refused_or_returned_ticket_credits_nothing() -> None:
    s = fold(fresh(), TicketInInserted(TICKET), TicketInRefused(TICKET, "already redeemed", 0x80))
    with pytest.raises(IllegalEvent, match="not authorised"):
        step(s, TicketInStacked(TICKET, 1000, 40, False).to_json())
    s = fold(s, TicketInReturned(TICKET, "refused"))
    assert s.credits == 0 and s.escrow is None and s.meters.credits_in == 0


def test_restricted_credits_are_bet_first_and_never_cashed_as_cash() -> None:
    s = fold(fresh(), Credit("operator", 10, "ops"), TicketInInserted(TICKET), TicketInAuthorised(TICKET, 500, True, 0),
             TicketInStacked(TICKET, 500, 20, True))
    assert (s.credits, s.restricted, s.cashable) == (30, 20, 10)
    assert s.meters.tickets_in_restricted == 1 and s.meters.tickets_in_restricted_cents == 500
    with pytest.raises(IllegalEvent, match="with 10 cashable"):
        step(s, {"kind": "cashout", "credits": 30, "via": "hand_pay"})
    with pytest.raises(IllegalEvent, match="with 10 on the meter"):
        step(s, TicketOutRequested(11, 11 * DENOM, False, 1).to_json())
    bet = Bet(1, 1)
    s, _ = step(s, {"kind": "bet", "coins": bet.coins, "lines": bet.lines})
    s, _ = step(s, {"kind": "spin", "game": 1, "stops": [0, 0, 0], "bet": bet.to_json()})
    assert s.restricted == 20 - bet.total
    restricted_ticket = _ticket_out(s, s.restricted, restricted=True)
    assert restricted_ticket.restricted == 0 and restricted_ticket.ticket_out.restricted  # type: ignore[union-attr]


def test_validator_faults_lock_money_in_and_printer_faults_ticket_out() -> None:
    s = fold(fresh(), Credit("operator", 40, "ops"), DeviceFault("validator", "jam"))
    assert [x.kind for x in s.lockups] == ["validator_jam"] and s.lockups[0].clear_by == ("attendant", "ops")
    assert money_in_blocked(s) and play_blocked(s) is None
    with pytest.raises(IllegalEvent, match="still reported"):
        step(s, Clear(1, "clear", "attendant").to_json())
    s = fold(s, DeviceCleared("validator", "jam"))
    assert not s.lockups and money_in_blocked(s) is None
    s = fold(s, DeviceFault("printer", "paper_low"))
    assert not s.lockups and ticket_out_blocked(s) is None and s.device_faults == (("printer", "paper_low"),)
    s = fold(s, DeviceFault("printer", "paper_out"))
    assert ticket_out_blocked(s) and play_blocked(s) is None and money_in_blocked(s) is None
    with pytest.raises(IllegalEvent, match="no cash out by ticket now"):
        step(s, TicketOutRequested(40, 40 * DENOM, False, 1).to_json())
    paid, _ = step(s, {"kind": "cashout", "credits": 40, "via": "hand_pay"})  # cash out goes to a hand pay
    assert paid.payout is not None and paid.payout.via == "hand_pay"


def test_a_cheat_stays_locked_until_ops_clears_it() -> None:
    s = fold(fresh(), DeviceFault("validator", "cheat"), DeviceCleared("validator", "cheat"))
    assert [x.kind for x in s.lockups] == ["validator_cheat"]
    with pytest.raises(IllegalEvent, match="cleared by ops, not attendant"):
        step(s, Clear(1, "clear", "attendant").to_json())
    assert not fold(s, Clear(1, "clear", "ops")).lockups


def test_recall_carries_the_notes_and_tickets_since_the_last_game() -> None:
    s = fold(fresh(), NoteEscrow(500), NoteStacking(500), NoteStacked(500, 20))
    bet = Bet(1, 1)
    s, _ = step(s, {"kind": "bet", "coins": bet.coins, "lines": bet.lines})
    s, _ = step(s, {"kind": "spin", "game": 1, "stops": [0, 0, 0], "bet": bet.to_json()})
    assert s.recall[-1]["money"] == [{"kind": "note", "cents": 500, "credits": 20}] and s.money_since == ()
    s, _ = step(s, {"kind": "spin", "game": 2, "stops": [0, 0, 0], "bet": bet.to_json()})
    assert "money" not in s.recall[-1]


# ---------------------------------------------------------------------------------------- money conservation

EVENTS = st.one_of(
    st.tuples(st.just("note"), st.sampled_from([100, 500, 510, 2000])),
    st.tuples(st.just("stacking"), st.just(0)), st.tuples(st.just("stacked"), st.just(0)),
    st.tuples(st.just("returned"), st.just(0)), st.tuples(st.just("doubt"), st.just(0)),
    st.tuples(st.just("clear_credit"), st.booleans()),
    st.tuples(st.just("ticket_out"), st.integers(1, 200)), st.tuples(st.just("validate"), st.just(0)),
    st.tuples(st.just("printed"), st.just(0)), st.tuples(st.just("failed"), st.just(0)),
    st.tuples(st.just("ticket_in"), st.integers(0, 3)), st.tuples(st.just("authorise"), st.integers(1, 400)),
    st.tuples(st.just("refuse"), st.just(0)), st.tuples(st.just("ticket_stacked"), st.just(0)),
    st.tuples(st.just("spin"), st.integers(0, 40)), st.tuples(st.just("fault"), st.sampled_from(["jam", "paper_out"])),
    st.tuples(st.just("cleared"), st.sampled_from(["jam", "paper_out"])),
)


def _record(s: CabinetState, what: str, arg: Any) -> Any:
    e = s.escrow
    val = e.validation if e and e.validation else TICKET
    restricted = bool(e and e.cents % 2)
    t = s.ticket_out
    return {
        "note": lambda: NoteEscrow(arg), "stacking": lambda: NoteStacking(e.cents if e else 0),
        "stacked": lambda: NoteStacked(e.cents if e else 0, (e.cents if e else 0) // DENOM),
        "returned": lambda: TicketInReturned(val, "x") if e and e.ticket else NoteReturned(e.cents if e else 0, "x"),
        "doubt": lambda: NoteInDoubt(e.cents if e else 0),
        "clear_credit": lambda: Clear(s.lockups[0].id if s.lockups else 0, "credit" if arg else "no_credit", "ops"),
        "ticket_out": lambda: TicketOutRequested(min(arg, s.cashable) or 1, (min(arg, s.cashable) or 1) * DENOM,
                                                 False, s.tickets + 1),
        "validate": lambda: TicketOutValidation(t.number if t else 0, f"{(t.number if t else 0):018d}", "system"),
        "printed": lambda: TicketOutPrinted(t.number if t else 0), "failed": lambda: TicketOutFailed(t.number if t else 0, "x"),
        "ticket_in": lambda: TicketInInserted(f"{arg:018d}"),
        "authorise": lambda: TicketInAuthorised(val, arg * DENOM, arg % 2 == 1, 0),
        "refuse": lambda: TicketInRefused(val, "x"),
        "ticket_stacked": lambda: TicketInStacked(val, e.cents if e else 0, (e.cents if e else 0) // DENOM, restricted),
        "spin": lambda: {"kind": "spin", "game": s.games + 1, "stops": [arg, arg, arg], "bet": Bet(1, 1).to_json()},
        "fault": lambda: DeviceFault("validator" if arg == "jam" else "printer", arg),
        "cleared": lambda: DeviceCleared("validator" if arg == "jam" else "printer", arg),
    }[what]()


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENTS, max_size=60))
def test_money_is_conserved_over_any_sequence_of_note_and_ticket_events(events: list[tuple[str, Any]]) -> None:
    """credits + pending + paid out == money in, after every record the fold accepts; replay rebuilds the state."""
    s = fresh()
    journal: list[tuple[int, dict[str, Any]]] = []
    for what, arg in events:
        rec = _record(s, what, arg)
        rec = rec if isinstance(rec, dict) else rec.to_json()
        try:
            s, _ = step(s, rec)
        except IllegalEvent:
            continue
        journal.append((len(journal) + 1, rec))
        m = s.meters
        assert 0 <= s.restricted <= s.credits
        assert s.credits + s.pending + m.credits_out == m.credits_in - m.coin_in + m.coin_out
        assert m.credits_in == m.notes_credits + m.tickets_in_credits
        assert m.notes_credits * DENOM == m.notes_in_cents
        assert m.tickets_in_credits * DENOM == m.tickets_in_cashable_cents + m.tickets_in_restricted_cents
        assert m.tickets_out_credits * DENOM == m.tickets_out_cashable_cents + m.tickets_out_restricted_cents
    again = replay(fresh(), journal)
    assert (again.credits, again.restricted, again.meters, again.escrow, again.ticket_out, again.lockups) == \
        (s.credits, s.restricted, s.meters, s.escrow, s.ticket_out, s.lockups)
