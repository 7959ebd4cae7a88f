"""SAS notes and tickets end to end: the cabinet with its bill validator and ticket printer (tests/tito_fakes.py's in-process devices) and the technician's host with its ticket system over a pty: a note credited and metered, the host disabling and choosing notes, a ticket printed under system and secure enhanced validation, redeemed once and refused the second time, and the devices' faults, each as the floor sees it."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from typing import Any, Callable

from controller.cabinet import OPS, PLAYER, Cabinet
from controller.sas import SasConfig
from controller.ticketsystem import TicketSystem
from tests.cabinet_helpers import RUNNING, cabinet_config, journal as records, run
from tests.sas_helpers import drain, host_for, polled
from tests.tito_fakes import FakePrinter, FakeValidator

WORKED = "006429188185446104"  # validation id 654321 and the sequence after 0 (SAS 15.14's example)


def config(tmp: Path, validation: str = "system") -> Any:
    cfg = cabinet_config(tmp, "frozen-assets", panel=None, denomination=25, tito={"validation": validation})
    return dataclasses.replace(cfg, sas=SasConfig(port="pty", address=1, chirp_after=0.0, accounting_denomination=1))


class Devices:
    validator: FakeValidator
    printer: FakePrinter


async def started(cfg: Any, tmp: Path) -> tuple[Cabinet, Devices]:
    dev = Devices()

    def validator(on_event: Any) -> FakeValidator:
        dev.validator = FakeValidator(on_event, tmp / "validator.json")
        return dev.validator

    def printer(on_event: Any) -> FakePrinter:
        dev.printer = FakePrinter(on_event, tmp / "printer.json")
        return dev.printer

    cab = Cabinet(cfg)
    cab.validator_factory, cab.printer_factory = validator, printer
    RUNNING.append(cab)
    await cab.start()
    await cab.wait_for(lambda s: True, 0)
    return cab, dev


def until(system: TicketSystem, code: int, timeout: float = 5.0) -> list[int]:
    """The ticket system's polls until it has seen exception `code`: every code seen."""
    seen: list[int] = []
    deadline = time.monotonic() + timeout
    while code not in seen:
        assert time.monotonic() < deadline, f"no {code:02X} after {seen}"
        seen += system.poll()
    return seen


def test_a_note_is_reported_and_metered_and_the_host_chooses_the_notes(tmp_path: Path) -> None:
    cfg = config(tmp_path)

    async def main() -> dict[str, Any]:
        cab, dev = await started(cfg, tmp_path)
        host = host_for(cab)
        await polled(lambda: drain(host))
        out: dict[str, Any] = {}
        dev.validator.insert_note(2000)
        assert await cab.wait_for(lambda s: s.meters.notes_in_cents == 2000, 5)
        out["codes"] = await polled(lambda: drain(host))
        out["reads"] = await polled(lambda: (host.bill_meters(), host.bill_value(), host.bills_in(20),
                                             host.last_bill(), host.credits(), host.selected_meters([0x0B, 0x44])))
        await polled(lambda: host.enable_bills(False))
        assert await cab.wait_for(lambda s: not dev.validator.enabled[0], 5)
        out["disabled"] = dev.validator.enabled
        await polled(lambda: host.configure_bills([1, 5]))
        await polled(lambda: host.enable_bills(True))
        assert await cab.wait_for(lambda s: bool(dev.validator.enabled[0]), 5)
        out["enabled"] = dev.validator.enabled
        host.close()
        await cab.stop()
        return out

    out = run(main())
    assert out["codes"] == [0x4A]  # $20 accepted
    meters, value, twenties, last, credits, selected = out["reads"]
    assert meters == {1: 0, 5: 0, 10: 0, 20: 1, 50: 0, 100: 0} and value == 20 and twenties == 1
    assert last == {"country": 37, "denomination": 4, "count": 1} and credits == 2000
    assert selected == {0x0B: 2000, 0x44: 1}
    assert out["disabled"][0] == frozenset() and out["enabled"][0] == frozenset({100, 500})


def test_system_validation_prints_the_hosts_number_and_the_ticket_redeems_once(tmp_path: Path) -> None:
    cfg = config(tmp_path)

    async def main() -> dict[str, Any]:
        cab, dev = await started(cfg, tmp_path)
        host = host_for(cab)
        system = TicketSystem(host, system_id=7)
        await polled(lambda: drain(host))
        out: dict[str, Any] = {}
        assert (await cab.command(OPS, "add_credits", {"credits": 40}))["ok"]
        assert (await cab.command(PLAYER, "cash_out", {}))["ok"]
        out["cash out"] = await polled(lambda: until(system, 0x3D))      # 57 -> 57/58, printed -> 3D -> 4D
        out["printed"] = [t.validation for t in dev.printer.tickets]
        out["known"] = {k: (t.cents, t.state) for k, t in system.tickets.items()}
        out["meters out"] = await polled(lambda: (host.validation_meters(0x00), host.selected_meters([0x0E, 0x12])))
        dev.validator.insert_ticket(out["printed"][0])
        out["redeem"] = await polled(lambda: until(system, 0x68))        # 67 -> 70/71, stacked -> 68 -> 71 FF
        assert await cab.wait_for(lambda s: s.credits == 40, 5)
        out["status"] = await polled(host.ticket_status)
        out["state"] = system.tickets[out["printed"][0]].state
        out["meters in"] = await polled(lambda: (host.validation_meters(0x80), host.selected_meters([0x0D, 0x11])))
        dev.validator.insert_ticket(out["printed"][0])                  # a copy of the same ticket
        out["again"] = await polled(lambda: until(system, 0x68))
        assert await cab.wait_for(lambda s: s.escrow is None, 5)
        out["again status"] = await polled(host.ticket_status)
        out["credits"] = cab._live.credits
        host.close()
        await cab.stop()
        return out

    out = run(main())
    assert 0x57 in out["cash out"] and out["cash out"][-1] == 0x3D
    (validation,) = out["printed"]
    assert validation[:2] == "07" and out["known"] == {validation: (1000, "issued")}
    assert out["meters out"] == ((1, 1000), {0x0E: 1000, 0x12: 1})
    assert out["redeem"][0] == 0x67 and out["redeem"][-1] == 0x68 and out["state"] == "redeemed"
    assert out["status"] == {"status": 0x00, "cents": 1000, "validation": validation}
    assert out["meters in"] == ((1, 1000), {0x0D: 1000, 0x11: 1})
    assert out["again status"] == {"status": 0x80, "cents": 0, "validation": validation}
    assert out["credits"] == 40
    kinds = [f"{r['kind']}:{r['what']}" for r in records(cfg) if r["kind"] in ("ticket_in", "ticket_out")]
    assert kinds == ["ticket_out:requested", "ticket_out:validation", "ticket_out:printed", "ticket_in:inserted",
                     "ticket_in:authorised", "ticket_in:stacked", "ticket_in:inserted", "ticket_in:refused",
                     "ticket_in:returned"]


def test_secure_enhanced_validation_prints_the_protocols_number(tmp_path: Path) -> None:
    cfg = config(tmp_path, "enhanced")

    async def main() -> dict[str, Any]:
        cab, dev = await started(cfg, tmp_path)
        host = host_for(cab)
        system = TicketSystem(host)
        await polled(lambda: drain(host))
        out: dict[str, Any] = {}
        assert (await cab.command(OPS, "add_credits", {"credits": 8}))["ok"]
        assert (await cab.command(PLAYER, "cash_out", {}))["ok"]   # no validation id yet: the host numbers it
        out["before 4C"] = await polled(lambda: until(system, 0x3D))
        out["4C"] = await polled(lambda: host.set_validation_id(0x654321, 0))
        assert (await cab.command(OPS, "add_credits", {"credits": 8}))["ok"]
        assert (await cab.command(PLAYER, "cash_out", {}))["ok"]
        out["codes"] = await polled(lambda: until(system, 0x3D))
        out["printed"] = [t.validation for t in dev.printer.tickets]
        out["4D"] = await polled(lambda: host.validation_info(2))
        out["read"] = await polled(lambda: host.set_validation_id(0, 0))
        out["resent"] = await polled(lambda: host.set_validation_id(0x654321, 0))
        host.close()
        await cab.stop()
        return out

    out = run(main())
    assert 0x57 in out["before 4C"] and out["printed"][0][:2] == "01"
    assert out["4C"] == (0x654321, 0) and out["printed"][1] == WORKED and 0x57 not in out["codes"]
    info = out["4D"]
    assert (info["validation"], info["system"], info["cents"], info["ticket"]) == (WORKED, 0, 200, 2)
    # the sequence number the ticket took; the same id and sequence sent again leave it there
    assert out["read"] == (0x654321, 1) and out["resent"] == (0x654321, 1)
    ids = [r for r in records(cfg) if r["kind"] == "sas" and r["what"] == "validation_id"]
    assert ids == [{"kind": "sas", "what": "validation_id", "machine": 0x654321, "sequence": 1}]  # the next ticket's


def test_device_faults_reach_the_floor(tmp_path: Path) -> None:
    cfg = config(tmp_path)

    async def main() -> list[int]:
        cab, dev = await started(cfg, tmp_path)
        host = host_for(cab)
        await polled(lambda: drain(host))
        steps: list[Callable[[], Any]] = [lambda: dev.validator.fault("jam"), lambda: dev.validator.clear("jam"),
                                          lambda: dev.validator.fault("stacker_open"),
                                          lambda: dev.validator.clear("stacker_open"),
                                          lambda: dev.printer.fault("paper_out"), lambda: dev.printer.clear("paper_out")]
        for step in steps:
            seq = cab._live.seq
            step()
            assert await cab.wait_for(lambda s: s.seq > seq, 5)
        codes = await polled(lambda: drain(host))
        host.close()
        await cab.stop()
        return codes

    codes = run(main())
    assert [c for c in codes if c not in (0x51, 0x52)] == [0x28, 0x1B, 0x1C, 0x61]


def test_the_demo_ticket_system_numbers_and_redeems_on_its_own_thread(tmp_path: Path) -> None:
    from controller.ticketsystem import serve_tickets

    cfg = config(tmp_path)

    async def main() -> list[str]:
        cab, dev = await started(cfg, tmp_path)
        said: list[str] = []
        stop, thread = serve_tickets(cab.sas.pty[2], every=0.02, echo=said.append)
        assert (await cab.command(OPS, "add_credits", {"credits": 40}))["ok"]
        assert (await cab.command(PLAYER, "cash_out", {}))["ok"]
        assert await cab.wait_for(lambda s: any(v.read for v in cab.sas.state.validations), 10)
        dev.validator.insert_ticket(dev.printer.tickets[0].validation)
        assert await cab.wait_for(lambda s: s.credits == 40 and s.escrow is None, 10)
        assert await cab.wait_for(lambda s: cab.sas.state.queue == (), 10)
        stop.set()
        await asyncio.to_thread(thread.join, 5)
        await cab.stop()
        return said

    said = run(main())
    assert [line.split(" ")[2] for line in said] == ["validation", "printed", "authorised", "redeemed"]
