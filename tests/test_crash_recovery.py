"""Crash test: a simulated table SIGKILLed at 200 seeded points (mid-bet, mid-deal, mid-settlement) and restarted
each time loses no bet, pays none twice, resumes the round in progress, and its meters equal its settlements."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from controller.games.base import RoundSettled, RoundVoided, StakeChanged, event_from_json
from controller.journal import Journal
from controller.tablestate import new_state, step
from tests import crash_driver
from tests.table_helpers import table_config

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("game, kills", [("baccarat", 200), ("blackjack", 40)])
def test_kill_and_restart(tmp_path: Path, game: str, kills: int) -> None:
    cfg = table_config(tmp_path, game, seed=2026)
    aims = ("game:place_bet", "game:card_dealt", "game:settle") + (("game:decision",) if game == "blackjack" else ())
    kill_lines = crash_driver.run(cfg, tmp_path, kills, aims=aims)

    # Where the kills landed: inside betting, dealing and settlement, not only between rounds.
    landed = Counter((x["record"] or {}).get("event", {}).get("kind") for x in kill_lines if x["record"])
    assert landed["place_bet"] and landed["card_dealt"], landed
    if kills >= 100:
        assert landed["settle"], landed  # a kill right after a settlement was journaled
    if game == "blackjack":
        assert landed["decision"], landed

    with Journal(cfg.journal, cfg.table_id) as j:   # the chain verifies after every crash
        records = [e.record for e in j.entries()]
    state = new_state(cfg.table_id, cfg.game, cfg.rules)
    settled: Counter[int] = Counter()
    opened = 0
    committed = stakes = returned = 0
    for r in records:
        state, effects = step(state, r)  # the journal replays cleanly
        if r["kind"] == "game" and r["event"]["kind"] == "open_bets":
            opened += 1
            assert opened == sum(settled.values()) + 1, "a new round opened before the last one settled"
        for e in effects:
            if isinstance(e, StakeChanged):
                committed += e.delta
            elif isinstance(e, RoundSettled):
                settled[e.round] += 1
                assert e.settlement.stakes == committed, f"round {e.round}: stakes lost or invented"
                committed = 0
                stakes += e.settlement.stakes
                returned += e.settlement.returned
            elif isinstance(e, RoundVoided):
                pytest.fail(f"round {e.round} was voided: a crash must resume, not void")
    assert settled and max(settled.values()) == 1, "a round was paid twice"
    assert sorted(settled) == list(range(1, len(settled) + 1))
    assert committed == 0 and opened == len(settled), "the last round was left unsettled"
    assert state.meters.rounds == len(settled)
    assert (state.meters.handle, state.meters.returned) == (stakes, returned)
    assert state.meters.power_ups == kills + 1
    assert all(event_from_json(r["event"]) for r in records if r["kind"] == "game")



def test_tail_loss_after_a_kill_refuses_to_start(tmp_path: Path) -> None:
    """After a SIGKILL, whatever takes the journal's tail (the WAL deleted, the last rows deleted, the file
    truncated, emptied, zeroed or deleted), every start refuses with exit 2 and one line naming what is missing,
    and leaves the evidence as it found it."""
    killed = tmp_path / "killed"
    killed.mkdir()
    crash_driver.run(table_config(killed, "baccarat", seed=2026), killed, 3, 30, end_killed=True)
    crash_driver.check_tail_loss(killed, lambda folder: table_config(folder, "baccarat", seed=2026), tmp_path)
