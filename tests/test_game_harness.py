"""The property-test harness itself: a correct toy game passes, and broken ones are caught."""

from __future__ import annotations

import dataclasses

import pytest

from controller.games.base import RoundSettled, Settlement
from tests import toy_game
from tests.game_harness import play_rounds


def test_toy_game_conserves_money_and_replays() -> None:
    state = play_rounds(toy_game.GAME, toy_game.GAME.rules({}), toy_game.legal_bets, seed=1, rounds=300,
                        void_chance=40)
    assert state.round >= 300


def test_a_game_that_overpays_is_caught() -> None:
    def apply(state, event):  # type: ignore[no-untyped-def]
        new, effects = toy_game.apply(state, event)
        out = []
        for eff in effects:
            if isinstance(eff, RoundSettled):
                bad = tuple(dataclasses.replace(r, returned=r.returned + 1) for r in eff.settlement.results)
                eff = RoundSettled(eff.round, Settlement(bad))
            out.append(eff)
        return new, tuple(out)

    broken = dataclasses.replace(toy_game.GAME, apply=apply)
    with pytest.raises(AssertionError, match="returns more"):
        play_rounds(broken, broken.rules({}), toy_game.legal_bets, seed=2, rounds=50)


def test_a_game_that_loses_a_stake_is_caught() -> None:
    def apply(state, event):  # type: ignore[no-untyped-def]
        new, effects = toy_game.apply(state, event)
        out = []
        for eff in effects:
            if isinstance(eff, RoundSettled) and eff.settlement.results:
                eff = RoundSettled(eff.round, Settlement(eff.settlement.results[1:]))
            out.append(eff)
        return new, tuple(out)

    broken = dataclasses.replace(toy_game.GAME, apply=apply)
    with pytest.raises(AssertionError, match="stakes settled"):
        play_rounds(broken, broken.rules({}), toy_game.legal_bets, seed=3, rounds=50)


