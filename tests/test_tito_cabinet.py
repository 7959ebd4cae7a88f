"""The cabinet runtime with a bill validator, a ticket printer and a ticket system (in-process fakes of drivers/*/events.py's links): every step journaled before the device acts, restarts settle what a power loss left, and the ticket system's silence times out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from controller.cabinet import ATTENDANT, OPS, PLAYER, Cabinet
from controller.cabinetrecords import SasBills, SasDisable
from controller.cabinetstate import balance
from controller.cabinettito import NO_ANSWER
from tests.cabinet_helpers import RUNNING, cabinet_config, journal, run
from tests.tito_fakes import FakePrinter, FakeTicketHost, FakeValidator

WORKED = "006429188185446104"  # validation id 0x654321, sequence 1 (SAS 15.14's example, controller/tito.py)


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def config(tmp: Path, **tito: Any) -> Any:
    return cabinet_config(tmp, "frozen-assets", panel=None, denomination=25, tito=tito)


class Devices:
    """The fakes one cabinet life gets, kept for the test to drive."""

    def __init__(self, tmp: Path, **validator: Any) -> None:
        self.tmp, self.kw = tmp, validator
        self.validator: FakeValidator | None = None
        self.printer: FakePrinter | None = None
        self.at_stack: list[str] = []  # the journal's last record each time the cabinet said stack

    def attach(self, cab: Cabinet, printer: bool = True) -> Cabinet:
        def validator(on_event: Any) -> FakeValidator:
            self.validator = FakeValidator(on_event, self.tmp / "validator.json", **self.kw)
            stack = self.validator.stack

            def watched() -> None:
                self.at_stack.append(journal_tail(cab))
                stack()

            self.validator.stack = watched  # type: ignore[method-assign]
            self.adjust_validator(self.validator)
            return self.validator

        def make_printer(on_event: Any) -> FakePrinter:
            self.printer = FakePrinter(on_event, self.tmp / "printer.json")
            self.adjust_printer(self.printer)
            return self.printer

        cab.validator_factory = validator
        if printer:
            cab.printer_factory = make_printer
        return cab

    def adjust_validator(self, validator: FakeValidator) -> None:
        """Where a subclass's validator differs from the fake: each one as it is made."""

    def adjust_printer(self, printer: FakePrinter) -> None:
        """Where a subclass's printer differs from the fake: each one as it is made."""


def journal_tail(cab: Cabinet) -> str:
    last = list(cab.journal.entries(after=cab.journal.last_seq - 1))[-1].record  # type: ignore[union-attr]
    return f"{last['kind']}:{last.get('what')}"


async def start(cfg: Any, devices: Devices, *, host: Any = None, clock: Any = None, printer: bool = True) -> Cabinet:
    cab = Cabinet(cfg, clock=clock) if clock is not None else Cabinet(cfg)
    devices.attach(cab, printer)
    cab.ticket_host = host
    RUNNING.append(cab)
    await cab.start()
    await cab.wait_for(lambda s: True, 0)
    return cab


def kinds(cfg: Any, what: str) -> list[str]:
    return [f"{r['kind']}:{r.get('what')}" for r in journal(cfg) if r["kind"] in ("note", "ticket_in", "ticket_out")
            and (what == "" or r["kind"] == what)]


def balanced(cab: Cabinet) -> bool:
    held, owed = balance(cab.state)  # type: ignore[arg-type]
    return held == owed


def test_a_note_is_journaled_in_escrow_and_stacking_before_the_validator_stacks_it(tmp_path: Path) -> None:
    cfg, dev = config(tmp_path), Devices(tmp_path)

    async def main() -> None:
        cab = await start(cfg, dev)
        assert await cab.wait_for(lambda s: dev.validator is not None and dev.validator.enabled[0], 2)
        assert dev.validator.enabled == (frozenset({100, 500, 1000, 2000, 5000, 10000}), False)  # no ticket system
        dev.validator.insert_note(500)
        assert await cab.wait_for(lambda s: s.credits == 20, 2)
        assert dev.at_stack == ["note:stacking"] and balanced(cab)
        await cab.stop()

    run(main())
    assert kinds(cfg, "note") == ["note:escrow", "note:stacking", "note:stacked"]
    assert [r["cents"] for r in journal(cfg) if r["kind"] == "note"] == [500, 500, 500]


def test_a_note_the_host_disabled_goes_back_and_money_in_disabled_inhibits_the_validator(tmp_path: Path) -> None:
    cfg, dev = config(tmp_path), Devices(tmp_path)

    async def main() -> None:
        cab = await start(cfg, dev)
        await cab._submit(lambda batch: batch.add(SasBills(True, (100, 500)).to_json()))
        assert dev.validator.enabled[0] == {100, 500}
        dev.validator.enabled = (frozenset({2000}), False)  # the validator takes it anyway: the cabinet returns it
        dev.validator.insert_note(2000)
        assert await cab.wait_for(lambda s: s.escrow is None and "return" in dev.validator.commands, 2)
        assert cab.state.credits == 0 and "stack" not in dev.validator.commands
        await cab._submit(lambda batch: batch.add(SasDisable().to_json()))
        assert dev.validator.enabled == (frozenset(), False)
        await cab.stop()

    run(main())
    returned = [r for r in journal(cfg) if r["kind"] == "note" and r["what"] == "returned"]
    assert returned == [{"kind": "note", "what": "returned", "cents": 2000,
                         "reason": "a note of 2000 cents is not enabled"}]


def test_ticket_out_by_the_cabinets_own_validation_id_prints_the_worked_example(tmp_path: Path) -> None:
    cfg, dev = config(tmp_path, validation_id=0x654321), Devices(tmp_path)

    async def main() -> None:
        cab = await start(cfg, dev)
        await cab.command(OPS, "add_credits", {"credits": 40})
        answer = await cab.command(PLAYER, "cash_out", {})
        assert answer["result"] == {"via": "ticket", "credits": 40, "number": 1, "restricted": False}
        assert await cab.wait_for(lambda s: s.ticket_out is None and s.meters.tickets_out_cashable == 1, 2)
        assert [(t.number, t.cents, t.validation) for t in dev.printer.tickets] == [(1, 1000, WORKED)]
        assert cab.state.credits == 0 and cab.state.meters.tickets_out_cashable_cents == 1000 and balanced(cab)
        await cab.stop()

    run(main())
    assert kinds(cfg, "ticket_out") == ["ticket_out:requested", "ticket_out:validation", "ticket_out:printed"]


def test_without_a_ticket_system_or_validation_id_cash_out_is_a_hand_pay(tmp_path: Path) -> None:
    cfg, dev = config(tmp_path), Devices(tmp_path)

    async def main() -> None:
        cab = await start(cfg, dev)
        await cab.command(OPS, "add_credits", {"credits": 40})
        answer = await cab.command(PLAYER, "cash_out", {})
        assert answer["result"] == {"via": "hand_pay", "credits": 40} and dev.printer.tickets == []
        await cab.stop()

    run(main())


def test_system_validation_then_redeem_once(tmp_path: Path) -> None:
    cfg, dev, host = config(tmp_path, validation="system"), Devices(tmp_path), FakeTicketHost()

    async def main() -> None:
        cab = await start(cfg, dev, host=host)
        await cab.command(OPS, "add_credits", {"credits": 40})
        await cab.command(PLAYER, "cash_out", {})
        assert await cab.wait_for(lambda s: s.meters.tickets_out_cashable == 1, 2)
        number = dev.printer.tickets[0].validation
        assert number == "01" + "1".zfill(16) and dev.validator.enabled[1]  # a ticket system: tickets enabled
        dev.validator.insert_ticket(number)
        assert await cab.wait_for(lambda s: s.credits == 40 and s.escrow is None, 2)
        dev.validator.insert_ticket(number)  # the same ticket again (a copy): refused and returned
        assert await cab.wait_for(lambda s: s.escrow is None and s.meters.tickets_in_cashable == 1 and
                                  dev.validator.commands[-1] == "return", 2)
        assert cab.state.credits == 40 and balanced(cab)
        await cab.stop()

    run(main())
    assert kinds(cfg, "ticket_in") == ["ticket_in:inserted", "ticket_in:authorised", "ticket_in:stacked",
                                       "ticket_in:inserted", "ticket_in:refused", "ticket_in:returned"]


def test_a_silent_ticket_system_times_out_both_ways(tmp_path: Path) -> None:
    cfg, dev, clock = config(tmp_path, validation="system", host_timeout=10), Devices(tmp_path), Clock()
    host = FakeTicketHost(answer=False, validate=False)

    async def main() -> None:
        cab = await start(cfg, dev, host=host, clock=clock)
        await cab.command(OPS, "add_credits", {"credits": 40})
        await cab.command(PLAYER, "cash_out", {})
        assert cab.state.credits == 0 and cab.state.pending == 40
        clock.now += 9.9
        cab.tito_check()
        assert not await cab.wait_for(lambda s: s.ticket_out is None, 0.05)
        clock.now += 0.2
        cab.tito_check()
        assert await cab.wait_for(lambda s: s.ticket_out is None and s.credits == 40, 2)
        dev.validator.insert_ticket("009999999999999999")
        assert await cab.wait_for(lambda s: s.escrow is not None and s.escrow.stage == "inserted", 2)
        clock.now += 10.1
        cab.tito_check()
        assert await cab.wait_for(lambda s: s.escrow is None, 2)
        assert dev.validator.commands[-1] == "return" and dev.printer.tickets == [] and balanced(cab)
        await cab.stop()

    run(main())
    rows = journal(cfg)
    assert [r["reason"] for r in rows if r["kind"] == "ticket_out" and r["what"] == "failed"] == \
        ["no validation number from the ticket system"]
    assert [r["reason"] for r in rows if r["kind"] == "ticket_in" and r["what"] == "refused"] == [NO_ANSWER]


def test_printer_faults_send_cash_out_to_a_hand_pay_and_paper_low_is_a_warning(tmp_path: Path) -> None:
    cfg, dev = config(tmp_path, validation_id=7), Devices(tmp_path)

    async def main() -> None:
        cab = await start(cfg, dev)
        await cab.command(OPS, "add_credits", {"credits": 40})
        dev.printer.fault("paper_low")
        assert await cab.wait_for(lambda s: ("printer", "paper_low") in s.device_faults, 2)
        assert not cab.state.lockups
        dev.printer.fault("paper_out")
        assert await cab.wait_for(lambda s: [x.kind for x in s.lockups] == ["printer_paper_out"], 2)
        answer = await cab.command(PLAYER, "cash_out", {})
        assert answer["result"] == {"via": "hand_pay", "credits": 40}
        await cab.command(ATTENDANT, "clear", {"lockup": cab.state.lockups[-1].id})
        dev.printer.clear("paper_out")
        assert await cab.wait_for(lambda s: not s.lockups, 2)
        await cab.stop()

    run(main())


def test_validator_faults_lock_money_in_until_the_validator_clears_them(tmp_path: Path) -> None:
    cfg, dev = config(tmp_path), Devices(tmp_path)

    async def main() -> None:
        cab = await start(cfg, dev)
        for code in ("jam", "stacker_full", "stacker_open", "cheat", "failure", "offline"):
            dev.validator.fault(code)
            assert await cab.wait_for(lambda s: any(x.kind == f"validator_{code}" for x in s.lockups), 2)
            assert dev.validator.enabled == (frozenset(), False)
            answer = await cab.command(OPS, "clear", {"lockup": cab.state.lockups[-1].id})
            assert answer["ok"] is False and "still reported" in answer["error"]
            dev.validator.clear(code)
            if code == "cheat":  # a cheat stays until ops has looked
                assert await cab.wait_for(lambda s: ("validator", "cheat") not in s.device_faults, 2)
                assert (await cab.command(OPS, "clear", {"lockup": cab.state.lockups[-1].id}))["ok"]
            assert await cab.wait_for(lambda s: not s.lockups, 2)
        assert dev.validator.enabled[0]
        await cab.stop()

    run(main())


def _world(tmp: Path, **data: Any) -> None:
    base = {"escrow": None, "stacker": [], "returned": [], "last": None, "faults": []}
    (tmp / "validator.json").write_text(json.dumps({**base, **data}))


class DeadValidator(Devices):
    """A first life whose validator never answers the stack (the power goes first)."""

    def adjust_validator(self, validator: FakeValidator) -> None:
        validator.stack = lambda: None  # type: ignore[method-assign]


async def _died_stacking(cfg: Any, tmp: Path, world: dict[str, Any]) -> None:
    """A first life told the validator to stack a 10.00 note and died before the validator did (`world`: where the
    note is now)."""
    dev = DeadValidator(tmp)
    cab = await start(cfg, dev)
    dev.validator.insert_note(1000)
    assert await cab.wait_for(lambda s: s.escrow is not None and s.escrow.stage == "stacking", 2)
    await cab.stop()
    _world(tmp, **world)


def _stacking_then_restart(tmp: Path, world: dict[str, Any], forget: bool = False) -> tuple[Any, list[Any]]:
    cfg = config(tmp)
    seen: list[Any] = []

    async def main() -> None:
        await _died_stacking(cfg, tmp, world)
        cab = await start(cfg, Devices(tmp, forget=forget))
        assert await cab.wait_for(lambda s: s.escrow is None or s.escrow.stage == "in_doubt", 2)
        seen.append(cab.state)
        await cab.stop()

    run(main())
    return cfg, seen


def test_restart_a_note_stacked_at_the_power_loss_is_credited(tmp_path: Path) -> None:
    item = {"cents": 1000, "barcode": None}
    cfg, [state] = _stacking_then_restart(tmp_path, {"stacker": [item], "last": {"item": item, "where": "stacker"}})
    assert state.credits == 40 and kinds(cfg, "note")[-1] == "note:stacked"


def test_restart_a_note_still_in_the_acceptor_is_returned(tmp_path: Path) -> None:
    cfg, [state] = _stacking_then_restart(tmp_path, {"escrow": {"cents": 1000, "barcode": None}})
    assert state.credits == 0 and kinds(cfg, "note")[-1] == "note:returned"


def test_restart_a_note_the_validator_lost_track_of_waits_for_the_attendant(tmp_path: Path) -> None:
    item = {"cents": 1000, "barcode": None}
    cfg, [state] = _stacking_then_restart(tmp_path, {"stacker": [item], "last": {"item": item, "where": "stacker"}},
                                          forget=True)
    assert [x.kind for x in state.lockups] == ["note_in_doubt"] and state.credits == 0

    async def main() -> None:
        cab = await start(cfg, Devices(tmp_path))
        refused = await cab.command(ATTENDANT, "clear", {})
        assert refused["ok"] is False and "count the stacker first" in refused["error"]
        assert (await cab.command(ATTENDANT, "clear", {"action": "credit", "lockup": 1}))["ok"]
        assert cab.state.credits == 40 and not cab.state.lockups and balanced(cab)
        await cab.stop()

    run(main())
    assert [r for r in journal(cfg) if r["kind"] == "clear"][-1] == \
        {"kind": "clear", "lockup": 1, "action": "credit", "by": "attendant"}


class SilentPrinter(Devices):
    """A first life whose printer takes the ticket and never prints it or answers (the power goes first)."""

    def adjust_printer(self, printer: FakePrinter) -> None:
        printer.print_ticket = lambda ticket: printer.tickets.append(ticket)  # type: ignore[method-assign]


def test_restart_reprints_a_numbered_ticket_with_the_same_number_and_pays_it_once(tmp_path: Path) -> None:
    cfg = config(tmp_path, validation_id=0x654321)

    async def main() -> None:
        first = SilentPrinter(tmp_path)
        cab = await start(cfg, first)
        await cab.command(OPS, "add_credits", {"credits": 40})
        await cab.command(PLAYER, "cash_out", {})
        assert [t.validation for t in first.printer.tickets] == [WORKED]
        await cab.stop()
        second = Devices(tmp_path)
        cab = await start(cfg, second)
        assert await cab.wait_for(lambda s: s.ticket_out is None, 2)
        assert [t.validation for t in second.printer.tickets] == [WORKED]
        assert cab.state.meters.tickets_out_cashable == 1 and cab.state.validation_id == (0x654321, 2)
        assert balanced(cab)
        await cab.stop()

    run(main())
    assert kinds(cfg, "ticket_out") == ["ticket_out:requested", "ticket_out:validation", "ticket_out:printed"]


def test_a_restricted_ticket_in_is_kept_apart_and_goes_out_on_a_restricted_ticket(tmp_path: Path) -> None:
    from controller.cabinetrecords import TicketInAuthorised

    cfg, dev = config(tmp_path, validation_id=0x654321), Devices(tmp_path)
    promo = "009876543210987654"

    async def main() -> None:
        cab = await start(cfg, dev, host=FakeTicketHost(answer=False, validate=False))
        dev.validator.insert_ticket(promo)
        assert await cab.wait_for(lambda s: s.escrow is not None and s.escrow.stage == "inserted", 2)
        await cab._submit(lambda batch: batch.add(TicketInAuthorised(promo, 500, True, 0, 7).to_json()))
        assert await cab.wait_for(lambda s: s.credits == 20, 2)
        assert (cab.state.restricted, cab.state.cashable, cab.state.meters.tickets_in_restricted_cents) == (20, 0, 500)
        answer = await cab.command(PLAYER, "cash_out", {})
        assert answer["result"] == {"via": "ticket", "credits": 20, "number": 1, "restricted": True}
        assert await cab.wait_for(lambda s: s.ticket_out is None, 2)
        assert [(t.restricted, t.cents) for t in dev.printer.tickets] == [(True, 500)]
        m = cab.state.meters
        assert (m.tickets_out_restricted, m.tickets_out_restricted_cents, cab.state.credits) == (1, 500, 0)
        await cab.stop()

    run(main())


def test_without_a_printer_restricted_credits_are_not_cashed(tmp_path: Path) -> None:
    from controller.cabinetrecords import TicketInAuthorised

    cfg, dev = config(tmp_path), Devices(tmp_path)
    promo = "009876543210987654"

    async def main() -> None:
        cab = await start(cfg, dev, host=FakeTicketHost(answer=False), printer=False)
        dev.validator.insert_ticket(promo)
        assert await cab.wait_for(lambda s: s.escrow is not None and s.escrow.stage == "inserted", 2)
        await cab._submit(lambda batch: batch.add(TicketInAuthorised(promo, 500, True, 0).to_json()))
        assert await cab.wait_for(lambda s: s.credits == 20, 2)
        answer = await cab.command(PLAYER, "cash_out", {})
        assert answer == {"ok": False, "error": "restricted credits are played, not cashed (no ticket can be printed "
                                                "now)"}
        await cab.stop()

    run(main())


async def _process_restart(cfg: Any, tmp: Path, world: dict[str, Any], clock: Clock) -> tuple[Cabinet, Devices]:
    """The second life after `_died_stacking`, whose validator kept its power and says nothing when it starts."""
    await _died_stacking(cfg, tmp, world)
    second = Devices(tmp, kept_power=True)
    return await start(cfg, second, clock=clock), second


def test_a_process_restart_tells_a_validator_still_holding_the_note_to_stack_it(tmp_path: Path) -> None:
    cfg = config(tmp_path, host_timeout=10)

    async def main() -> None:
        cab, dev = await _process_restart(cfg, tmp_path, {"escrow": {"cents": 1000, "barcode": None}}, Clock())
        assert await cab.wait_for(lambda s: s.credits == 40 and s.escrow is None, 2)
        assert dev.validator.commands[0] == "stack" and balanced(cab)
        await cab.stop()

    run(main())
    assert kinds(cfg, "note") == ["note:escrow", "note:stacking", "note:stacked"]


def test_a_process_restart_puts_a_note_the_validator_never_settles_in_doubt(tmp_path: Path) -> None:
    cfg, clock = config(tmp_path, host_timeout=10), Clock()

    async def main() -> None:
        cab, dev = await _process_restart(cfg, tmp_path, {}, clock)  # the validator is idle: where did it go?
        clock.now += 9.9
        cab.tito_check()
        assert not await cab.wait_for(lambda s: bool(s.lockups), 0.05)
        clock.now += 0.2
        cab.tito_check()
        assert await cab.wait_for(lambda s: [x.kind for x in s.lockups] == ["note_in_doubt"], 2)
        assert cab.state.credits == 0
        await cab.stop()

    run(main())
    assert kinds(cfg, "note") == ["note:escrow", "note:stacking", "note:in_doubt"]
