"""The cabinet with `port = "sim"` validator and printer: the real ID-003 and TCL drivers over pseudo-terminals to their simulators. A note goes in and is credited, a cash out prints a ticket with the secure-enhanced number, the ticket goes back in and is credited once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from controller.cabinet import ATTENDANT, PLAYER, Cabinet
from tests.cabinet_helpers import RUNNING, cabinet_config, run
from tests.tito_fakes import FakeTicketHost

pytestmark = pytest.mark.slow

WORKED = "006429188185446104"  # validation id 0x654321, sequence 1 (controller/tito.py)


def test_notes_and_tickets_through_the_simulated_devices(tmp_path: Path) -> None:
    cfg = _with_devices(tmp_path)

    async def main() -> None:
        cab = Cabinet(cfg)
        cab.ticket_host = FakeTicketHost(validate=False)  # the ticket system the SAS host would be
        RUNNING.append(cab)
        await cab.start()
        sim = cab._validator_sim
        assert sim is not None and cab._printer_sim is not None
        assert await asyncio.to_thread(sim.wait_until, lambda v: v.phase == "idle" and not v.status()["inhibited"], 10)  # enabled, taking notes
        sim.insert_note(2000)
        assert await cab.wait_for(lambda s: s.credits == 80, 10)
        assert (await cab.command(PLAYER, "cash_out", {}))["result"]["via"] == "ticket"
        assert await cab.wait_for(lambda s: s.meters.tickets_out_cashable == 1, 10)
        printed = cab._printer_sim.tickets[-1]
        assert printed.ticket is not None and printed.ticket.validation == WORKED and printed.ticket.cents == 2000
        assert await asyncio.to_thread(sim.wait_until, lambda v: v.phase == "idle" and not v.status()["inhibited"], 10)
        sim.insert_ticket(WORKED)
        assert await cab.wait_for(lambda s: s.meters.tickets_in_cashable == 1 and s.escrow is None, 10)
        assert cab.state.credits == 80
        assert await asyncio.to_thread(sim.wait_until, lambda v: v.phase == "idle", 10)
        sim.set_jam(True)   # a note the slot will not take now is refused in the validator's words
        refused = await cab.command(ATTENDANT, "insert_note", {"cents": 500})
        assert refused["ok"] is False and refused["error"] == \
            "the validator takes nothing now: the validator is in fault (jam_in_acceptor)"
        RUNNING.remove(cab)
        await cab.stop()

    run(main(), timeout=60)


def _with_devices(tmp: Path) -> object:
    from controller.config import cabinet_config_from_mapping

    base = cabinet_config(tmp, "frozen-assets", panel=None, denomination=25, tito={"validation_id": 0x654321})
    data = {**base.raw, "validator": {"port": "sim"}, "printer": {"port": "sim", "venue": "Croupier test"}}
    return cabinet_config_from_mapping(data, tmp / "cabinet.toml")


def test_the_cabinet_demo_runs_with_a_simulated_validator_and_printer(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import tomllib

    from controller.cli import main

    assert main(["demo", "--cabinet", "frozen-assets", "--spins", "2", "--seed", "5", "--no-screens", "--quiet",
                 "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "croupier command --table demo-frozen-assets insert_note cents=2000" in out
    demo = tomllib.loads((tmp_path / "demo.toml").read_text())
    assert demo["validator"] == {"port": "sim"} and demo["printer"]["port"] == "sim"
    assert demo["cabinet"]["tito"] == {"validation_id": 1}  # no SAS: the demo's own validation id numbers tickets
    assert main(["meters", "--config", str(tmp_path / "demo.toml")]) == 0
    assert "balance: credits + owed" in capsys.readouterr().out
