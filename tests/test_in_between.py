"""In-between as a pot game: antes and refills, the spread, bets up to the pot, consecutive cards, a pair paying two
or three chips, the deal going round, the pot traced through every settlement, refusals and random play."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import parse_cards
from controller.games._pot import DealerChanged, turn_order
from controller.games.base import (
    Decision, Event, IllegalEvent, NewShoe, OpenBets, PlaceBet, RulesError, Settle, StakeChanged, VoidRound,
)
from controller.games.in_between import GAME, State, between, legal_bets, spread
from controller.tablestate import new_state, step
from tests.game_harness import play_rounds
from tests.game_steps import deal, run, settlement


def table(rules: dict[str, Any] | None = None) -> State:
    r = GAME.rules({"spots": 4, **(rules or {})})
    state, _ = run(GAME, GAME.new_table(r), [NewShoe(1)])
    return state


def play(state: State, spread_cards: str, bet: int | None = None, third: str = "") -> tuple[State, list[Any]]:
    """One turn: open, the spread, the player's bet, the third card, settle."""
    events: list[Event] = [OpenBets(), *deal(spread_cards)]
    if bet is not None:
        events.append(Decision(f"spot:{state_player(state)}", "bet", bet))
    events += deal(third) + [Settle()]
    return run(GAME, state, events)


def state_player(state: State) -> int:
    return turn_order(state.rules.spots, state.dealer)[state.turn]


def test_spread_and_between() -> None:
    a, two, k, q, k2 = parse_cards("AS 2C KD QH KS")
    assert (spread(a, two), spread(k, q), spread(k, k2), spread(q, two)) == (11, 0, -1, 9)
    assert between(k, a, two) and not between(a, a, two) and not between(two, a, two) and not between(k2, q, k)


def test_antes_start_the_pot_and_a_win_is_paid_from_it() -> None:
    state = table()
    state, effects = run(GAME, state, [OpenBets()])
    assert [e for e in effects if isinstance(e, StakeChanged)] == [StakeChanged(s, "ante", 1, 1) for s in range(1, 5)]
    assert state.pot.chips == 4 and GAME.snapshot(state)["player"] == 2            # the dealer's left plays first
    state, _ = run(GAME, state, deal("3C JH"))
    exp = GAME.expected_next(state)
    assert (exp.actor, exp.amount_range) == ("spot:2", (1, 4)) and "between 3 and J" in exp.text
    state, effects = run(GAME, state, [Decision("spot:2", "bet", 3)] + deal("7D") + [Settle()])
    s = settlement(effects)
    assert [(r.spot, r.box, r.outcome, r.returned) for r in s.results] == [
        (1, "ante", "ante", 0), (2, "ante", "ante", 0), (3, "ante", "ante", 0), (4, "ante", "ante", 0),
        (2, "bet", "win", 6)]
    assert (s.pot_in, s.pot_out, s.stakes, s.returned, s.house_win) == (0, 1, 7, 6, 0)
    assert s.results[-1].line == "7 between 3 and J: 1:1 from the pot"
    assert state.pot.chips == 1 and GAME.snapshot(state)["player"] == 3


@pytest.mark.parametrize("third, outcome, pot_after", [
    ("7D", "win", 2), ("JD", "lose", 6), ("3S", "lose", 6), ("AS", "lose", 6), ("2S", "lose", 6),
])
def test_the_third_card(third: str, outcome: str, pot_after: int) -> None:
    state, effects = play(table(), "3C JH", 2, third)
    assert settlement(effects).results[-1].outcome == outcome and state.pot.chips == pot_after


def test_consecutive_cards_lose_the_minimum_bet_without_a_third_card() -> None:
    state, _ = run(GAME, table({"min_bet": 2}), [OpenBets()] + deal("9C TH"))
    assert GAME.expected_next(state).phase == "settling"
    state, effects = run(GAME, state, [Settle()])
    r = settlement(effects).results[-1]
    assert (r.box, r.stake, r.outcome, r.line) == ("bet", 2, "lose", "9-T consecutive: the minimum bet goes to the pot")
    assert state.pot.chips == 6


@pytest.mark.parametrize("rules, paid", [({}, 2), ({"pair_pays": 3}, 3)])
def test_a_pair_on_the_spread_pays_chips_from_the_pot(rules: dict[str, Any], paid: int) -> None:
    state, _ = run(GAME, table(rules), [OpenBets()] + deal("8C 8H"))
    assert GAME.expected_next(state).phase == "settling"                # no bet, no third card
    state, effects = run(GAME, state, [Settle()])
    s = settlement(effects)
    r = s.results[-1]
    assert (r.box, r.stake, r.paid, r.returned) == ("pair", 0, paid, paid)
    assert r.line == f"pair of 8s on the spread: {paid} chip(s) from the pot"
    assert (s.pot_in, s.pot_out) == (0, 4 - paid) and s.house_win == 0


def test_bets_are_capped_by_the_pot_and_an_emptied_pot_is_refilled() -> None:
    state, _ = run(GAME, table(), [OpenBets()] + deal("2C AH"))
    with pytest.raises(IllegalEvent, match="bet takes 1 to 4"):
        GAME.apply(state, Decision("spot:2", "bet", 5))
    state, effects = run(GAME, state, [Decision("spot:2", "bet", 4)] + deal("7D") + [Settle()])
    assert state.pot.chips == 0
    state, effects = run(GAME, state, [OpenBets()])             # spot 3's turn: everyone antes again
    assert sum(e.delta for e in effects if isinstance(e, StakeChanged)) == 4 and state.pot.chips == 4
    state, _ = run(GAME, state, deal("2D AS"))
    assert GAME.expected_next(state).amount_range == (1, 4)
    state = table({"max_bet": 2})
    state, _ = run(GAME, state, [OpenBets()] + deal("2C AH"))
    assert GAME.expected_next(state).amount_range == (1, 2)


def test_the_deal_goes_round_and_passes_left() -> None:
    state = table()
    players = []
    for spread_cards, third in [("3C JH", "7D"), ("3D JS", "7C"), ("3H JC", "7H"), ("3S JD", "7S")]:
        players.append(state_player(state))
        state, effects = play(state, spread_cards, 1, third)
    assert players == [2, 3, 4, 1] and state.dealer == 2
    assert DealerChanged(2, "every player has had a turn: the deal passes to spot 2") in effects
    assert state_player(state) == 3


def test_void_gives_back_the_antes_and_the_bet_and_replays_the_turn() -> None:
    state, _ = run(GAME, table(), [OpenBets()] + deal("3C JH") + [Decision("spot:2", "bet", 3)])
    state, effects = run(GAME, state, [VoidRound("card on the floor")])
    assert sum(e.delta for e in effects if isinstance(e, StakeChanged)) == -7 and effects[-1].returned == 7
    assert state.pot.chips == 0 and state_player(state) == 2


@pytest.mark.parametrize("event, reason", [
    (Decision("spot:3", "bet", 1), "spot:2's"), (Decision("spot:2", "raise", 1), "is not allowed now"),
    (Decision("spot:2", "bet", 0), "bet takes 1 to 4"), (Settle(), "cannot settle"), (OpenBets(), "cannot open"),
    (PlaceBet(2, "bet", 1), "not part of in-between"), (NewShoe(1), "between turns"),
])
def test_refusals_say_why_and_change_nothing(event: Event, reason: str) -> None:
    state, _ = run(GAME, table(), [OpenBets()] + deal("3C JH"))
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


@pytest.mark.parametrize("data, message", [({"spots": 1}, "rules.spots"), ({"max_bet": 1, "min_bet": 2}, "max_bet"),
                                           ({"cards_behind_cut": 2}, "cards_behind_cut")])
def test_rules_errors_name_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        GAME.rules(data)


def test_meters_keep_the_pot_out_of_the_house_win() -> None:
    rules = GAME.rules({"spots": 4})
    table = new_state("t", GAME, rules)
    state = table.game
    for event in [NewShoe(1), OpenBets(), *deal("3C JH"), Decision("spot:2", "bet", 3), *deal("7D"), Settle(),
                  OpenBets(), *deal("4C 9H"), Decision("spot:3", "bet", 1), *deal("KD"), Settle()]:
        table, _ = step(table, {"kind": "game", "event": event.to_json()})
        state, _ = GAME.apply(state, event)
    m = table.meters
    assert (m.handle, m.returned, m.pot, m.house_win) == (4 + 3 + 1, 6, 2, 0) and m.pot == state.pot.chips
    assert m.json()["pot"] == 2


@pytest.mark.slow
@pytest.mark.parametrize("rules", [{}, {"spots": 10, "pair_pays": 3, "ante": 2, "min_bet": 3, "max_bet": 7}])
def test_random_play_conserves_money_and_the_pot(rules: dict[str, Any]) -> None:
    state = play_rounds(GAME, GAME.rules(rules), legal_bets, seed=4, rounds=400, void_chance=30, fresh_shoes=True)
    assert state.round >= 400


@pytest.mark.slow
@settings(max_examples=10)
@given(seed=st.integers(0, 2 ** 32))
def test_random_play_property(seed: int) -> None:
    play_rounds(GAME, GAME.rules({"spots": 3}), legal_bets, seed=seed, rounds=40, void_chance=15, fresh_shoes=True)
