"""`croupier recall` shows the notes and tickets with each game, and `croupier meters` balances coins, notes, tickets and operator credits against play, hand pays and tickets out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.cabinet import OPS, PLAYER
from controller.cli import main
from controller.commands.table.demo import to_toml
from tests.cabinet_helpers import Script, run
from tests.test_tito_cabinet import WORKED, Devices, config, start
from tests.tito_fakes import FakeTicketHost


def losing_stops(title: Any) -> list[int]:
    from controller.slots import Bet, new_state as new_slot_state, spin

    slot = new_slot_state(title)
    return next(list(stops) for stops in ((a, b, c) for a in range(20) for b in range(20) for c in range(20))
                if not spin(slot, stops, Bet(1, 1))[1].won and not spin(slot, stops, Bet(1, 1))[1].awards)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cabinet that took a 5.00 note, played one losing game, printed a ticket for the rest, then took it back."""
    tmp = tmp_path_factory.mktemp("tito-cli")
    cfg = config(tmp, validation_id=0x654321)
    dev = Devices(tmp)

    async def main_() -> None:
        cab = await start(cfg, dev, host=FakeTicketHost(validate=False))
        cab.rng = Script(losing_stops(cfg.title))
        dev.validator.insert_note(500)
        assert await cab.wait_for(lambda s: s.credits == 20, 2)
        assert (await cab.command(PLAYER, "spin", {}))["ok"]
        assert await cab.wait_for(lambda s: s.games == 1 and not cab.showing, 2)
        await cab.command(OPS, "add_credits", {"credits": 4})
        assert (await cab.command(PLAYER, "cash_out", {}))["result"]["via"] == "ticket"
        assert await cab.wait_for(lambda s: s.ticket_out is None, 2)
        dev.validator.insert_ticket(WORKED)
        assert await cab.wait_for(lambda s: s.meters.tickets_in_cashable == 1, 2)
        await cab.stop()

    run(main_())
    path = tmp / "cabinet.toml"
    path.write_text(to_toml(dict(cfg.raw)))
    return path


def test_meters_balance_notes_and_tickets(played: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["meters", "--config", str(played)]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    left = 20 - 1 + 4  # the note's 20 credits, one played, 4 added
    assert f"in {20 + 4 + left} = coins 0 + notes 20 (1 x 5.00) + tickets in {left} (1 cashable, 0 restricted) + " \
           "operator 4" in lines
    assert f"out {left} = hopper 0 + hand pays 0 + tickets out {left} (1 cashable, 0 restricted)" in lines
    assert f"played 1, won 0 (hand-paid jackpots 0 apart); on the meter {left} (0 restricted), owed 0" in lines
    assert f"balance: credits + owed {left} = in - out - bets + wins {left}" in lines
    assert main(["meters", "--config", str(played), "--json"]) == 0
    m: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert (m["notes_in"], m["notes_credits"], m["tickets_out_credits"], m["tickets_in_credits"]) == \
        ({"500": 1}, 20, left, left)


def test_recall_shows_the_notes_and_tickets_with_each_game(played: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recall", "--config", str(played)]) == 0
    lines = capsys.readouterr().out.splitlines()
    game = next(i for i, line in enumerate(lines) if line.startswith("game 1:"))
    assert lines[game - 1] == "  note in 5.00 (20 credits)"
    after = lines.index("after game 1:")
    assert lines[after + 1:] == [f"  ticket out #1 {WORKED} 5.75 (23 credits)", f"  ticket in {WORKED} 5.75 (23 credits)"]
