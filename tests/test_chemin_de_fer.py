"""Chemin de fer: banco and cover staking with its priorities, the punter's and banker's options, naturals,
commission on a winning bank, the bank's rotation, hidden hands, refusals and random play."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import parse_cards
from controller.games.base import (
    BetsClosed, CardPlaced, CardsRevealed, CloseBets, Decision, Event, IllegalEvent, NewShoe, OpenBets, PlaceBet,
    RemoveBet, RulesError, Settle, StakeChanged,
)
from controller.games.chemin_de_fer import GAME, BankerChanged, State, legal_bets, option_cells
from tests.game_harness import play_rounds
from tests.game_steps import deal, results, run


def betting(rules: dict[str, Any] | None = None, banker: int = 1) -> State:
    r = GAME.rules(rules or {})
    state, _ = run(GAME, GAME.new_table(r), [NewShoe(r.decks)])
    while state.banker != banker:
        state, _ = run(GAME, state, [Decision("dealer", "pass")])
    state, _ = run(GAME, state, [OpenBets()])
    return state


def coup_table(rules: dict[str, Any] | None = None, bank: int = 1000, punts: tuple[tuple[int, str, int], ...] = (
        (3, "banco", 1000),)) -> State:
    state = betting(rules)
    state, _ = run(GAME, state, [PlaceBet(1, "bank", bank)] + [PlaceBet(*p) for p in punts] + [CloseBets()])
    return state


def decide(state: State, who: str, action: str) -> Decision:
    spot = state.banker if who == "banker" else state.punter
    return Decision(f"spot:{spot}", action)


# ---------------------------------------------------------------------------------------------------
# Staking


def test_banco_plays_alone_and_covers_go_back() -> None:
    state = betting()
    state, effects = run(GAME, state, [PlaceBet(1, "bank", 1000), PlaceBet(2, "cover", 200),
                                       PlaceBet(5, "banco", 1000), PlaceBet(3, "banco", 1000), CloseBets()])
    assert state.punter == 3                                    # nearest the banker's right in rotation order
    assert StakeChanged(2, "cover", 0, -200) in effects and StakeChanged(5, "banco", 0, -1000) in effects
    assert state.bets.json() == [{"spot": 1, "box": "bank", "amount": 1000}, {"spot": 3, "box": "banco", "amount": 1000}]


def test_banco_priority_goes_round_the_table_from_the_banker() -> None:
    state = betting(banker=6)
    state, _ = run(GAME, state, [PlaceBet(6, "bank", 500), PlaceBet(2, "banco", 500), PlaceBet(8, "banco", 500),
                                 CloseBets()])
    assert state.punter == 8


def test_largest_cover_plays_and_the_uncovered_bank_goes_back() -> None:
    state = betting()
    state, effects = run(GAME, state, [PlaceBet(1, "bank", 1000), PlaceBet(2, "cover", 300),
                                       PlaceBet(4, "cover", 500), CloseBets()])
    assert state.punter == 4
    assert StakeChanged(1, "bank", 800, -200) in effects and isinstance(effects[-1], BetsClosed)
    state = betting()
    state, _ = run(GAME, state, [PlaceBet(1, "bank", 1000), PlaceBet(5, "cover", 300), PlaceBet(2, "cover", 300),
                                 CloseBets()])
    assert state.punter == 2                                    # equal covers: rotation order


@pytest.mark.parametrize("events, reason", [
    ([PlaceBet(2, "bank", 500)], "only the banker"),
    ([PlaceBet(1, "bank", 500), PlaceBet(1, "cover", 100)], "cannot punt against his own bank"),
    ([PlaceBet(2, "cover", 100)], "has not put up a bank"),
    ([PlaceBet(1, "bank", 500), PlaceBet(2, "banco", 400)], "whole bank of 500"),
    ([PlaceBet(1, "bank", 500), PlaceBet(2, "cover", 300), PlaceBet(3, "cover", 300)], "200 left to cover"),
    ([PlaceBet(1, "bank", 500), PlaceBet(2, "banco", 500), PlaceBet(1, "bank", 100)], "cannot change now"),
    ([PlaceBet(1, "bank", 500), PlaceBet(2, "cover", 300), RemoveBet(1, "bank", 300)], "under the 300"),
    ([PlaceBet(1, "bank", 500), PlaceBet(2, "banco", 500), RemoveBet(2, "banco", 100)], "withdrawn whole"),
    ([PlaceBet(1, "bank", 500), PlaceBet(2, "cover", 100), PlaceBet(2, "banco", 500)], "already has a cover"),
    ([PlaceBet(1, "bank", 500), CloseBets()], "no punter"),
    ([PlaceBet(1, "bank", 50)], "spot 1 bank: 50 is under the table minimum"),  # refused when placed
    ([CloseBets()], "has not put up a bank"),
])
def test_staking_refusals(events: list[Event], reason: str) -> None:
    state = betting()
    *ok, last = events
    state, _ = run(GAME, state, ok)
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, last)
    assert repr(state) == before


# ---------------------------------------------------------------------------------------------------
# The coup


def test_punter_chooses_on_five() -> None:
    state, effects = run(GAME, coup_table(), deal("5S KH KD 2C"))
    assert all(isinstance(e, CardPlaced) and not e.up for e in effects if isinstance(e, CardPlaced))
    exp = GAME.expected_next(state)
    assert (exp.actor, exp.actions) == ("spot:3", ("draw", "stand")) and "5" not in exp.text
    state, effects = run(GAME, state, [decide(state, "punter", "stand")])
    assert CardsRevealed("banker", parse_cards("KH 2C")) in effects   # the banker shows, then draws on 2
    assert GAME.expected_next(state).card_to == "banker"
    state, effects = run(GAME, state, deal("4H"))
    assert CardsRevealed("punter", parse_cards("5S KD")) in effects
    state, effects = run(GAME, state, [Settle()])
    got = results(effects)
    assert got[(1, "bank")][:2] == ("win", 950) and got[(3, "banco")][:2] == ("lose", -1000)
    assert got[(1, "bank")][2] == "bank wins 1:1 less 5% commission, banker 6, punter 5"


def test_punter_may_draw_on_five_and_must_draw_under_five() -> None:
    state, _ = run(GAME, coup_table(), deal("5S KH KD 2C"))
    state, _ = run(GAME, state, [decide(state, "punter", "draw")])
    exp = GAME.expected_next(state)
    assert (exp.card_to, exp.face_up) == ("punter", True)
    state, _ = run(GAME, coup_table(), deal("4S KH KD 2C"))
    assert GAME.expected_next(state).card_to == "punter"        # no choice on 4
    state, _ = run(GAME, coup_table({"punter_option_on_5": False}), deal("5S KH KD 2C"))
    assert GAME.expected_next(state).card_to == "punter"        # without the option, 5 draws
    state, _ = run(GAME, coup_table(), deal("6S KH KD 7C"))
    assert GAME.expected_next(state).phase == "settling"        # punter stands on 6, banker on 7


@pytest.mark.parametrize("rules, banker, third, kind", [
    ({}, 3, 9, "option"), ({}, 5, 4, "option"), ({}, 3, 8, "stand"), ({}, 4, 1, "stand"), ({}, 4, 2, "draw"),
    ({}, 6, 6, "draw"), ({}, 6, 5, "stand"), ({}, 2, 8, "draw"),
    ({"banker_options": ["4:1"]}, 4, 1, "option"), ({"banker_options": ["4:1"]}, 3, 9, "draw"),
])
def test_banker_cells(rules: dict[str, Any], banker: int, third: int, kind: str) -> None:
    # punter 4 (2+2) draws `third`; the banker holds `banker` on two cards (K plus a card of that value)
    v = {0: "K", 1: "A"}
    third_card = v.get(third, str(third)) + "H"
    state, _ = run(GAME, coup_table(rules), deal(f"2C {v.get(banker, str(banker))}S 2D KD {third_card}"))
    exp = GAME.expected_next(state)
    got = {"deciding": "option", "dealing": "draw", "settling": "stand"}[exp.phase]
    assert got == kind, exp.text
    if kind == "option":
        assert exp.actor == "spot:1" and f"with {banker} against a third card of {third}" in exp.text


def test_banker_option_when_the_punter_stood() -> None:
    state, _ = run(GAME, coup_table({"banker_options": ["5:-"]}), deal("6S 5H KD KC"))
    exp = GAME.expected_next(state)
    assert exp.actor == "spot:1" and "a punter who stood" in exp.text
    state, _ = run(GAME, state, [decide(state, "banker", "stand"), Settle()])


def test_free_choice_lets_the_punter_stand_on_anything() -> None:
    state, _ = run(GAME, coup_table({"free_choice": True}), deal("2S 3H KD KC"))
    assert GAME.expected_next(state).actor == "spot:3"
    state, _ = run(GAME, state, [decide(state, "punter", "stand")])
    assert GAME.expected_next(state).actor == "spot:1"


@pytest.mark.parametrize("cards, banker_net, punter_net", [
    ("8S 7H KD KC", -1000, 1000),     # punter natural 8: shown at once, nobody draws
    ("4S 9H KD KC", 950, -1000),      # banker natural 9: the punter does not draw on 4
    ("9S 9H KD KC", 0, 0),            # natural against natural of the same number: stand-off
])
def test_naturals(cards: str, banker_net: int, punter_net: int) -> None:
    state, effects = run(GAME, coup_table(), deal(cards))
    assert GAME.expected_next(state).phase == "settling"
    assert {e.to for e in effects if isinstance(e, CardsRevealed)} == {"punter", "banker"}
    state, effects = run(GAME, state, [Settle()])
    got = results(effects)
    assert (got[(1, "bank")][1], got[(3, "banco")][1]) == (banker_net, punter_net)


def test_covers_share_the_result_and_commission_rounds_up() -> None:
    state = coup_table(bank=1000, punts=((2, "cover", 333), (4, "cover", 300)))
    state, effects = run(GAME, state, deal("6S 7H KD KC") + [Settle()])
    got = results(effects)
    assert got[(1, "bank")][:2] == ("win", 633 - 32)            # 5% of 633 = 31.65, the house takes 32
    assert got[(2, "cover")][:2] == ("lose", -333) and got[(4, "cover")][:2] == ("lose", -300)
    state = coup_table(bank=1000, punts=((2, "cover", 333), (4, "cover", 300)))
    state, effects = run(GAME, state, deal("7S 6H KD KC") + [Settle()])
    got = results(effects)
    assert got[(1, "bank")][:2] == ("lose", -633) and got[(2, "cover")][:2] == ("win", 333)


# ---------------------------------------------------------------------------------------------------
# The bank's rotation


def test_bank_stays_with_a_winner_and_passes_on_a_loss() -> None:
    state = coup_table()
    state, effects = run(GAME, state, deal("6S 7H KD KC") + [Settle()])     # banker wins
    assert state.banker == 1 and not any(isinstance(e, BankerChanged) for e in effects)
    state, _ = run(GAME, state, [OpenBets(), PlaceBet(1, "bank", 500), PlaceBet(2, "banco", 500), CloseBets()])
    state, effects = run(GAME, state, deal("9S 9H KD KC") + [Settle()])     # stand-off: the banker stays
    assert state.banker == 1
    state, _ = run(GAME, state, [OpenBets(), PlaceBet(1, "bank", 500), PlaceBet(2, "banco", 500), CloseBets()])
    state, effects = run(GAME, state, deal("7S 6H KD KC") + [Settle()])     # banker loses: next spot
    assert state.banker == 2 and BankerChanged(2, "the bank lost the coup 7 to 6") in effects


def test_banker_may_pass_the_bank_and_it_goes_round() -> None:
    state = GAME.new_table(GAME.rules({"spots": 3}))
    state, _ = run(GAME, state, [NewShoe(8)])
    with pytest.raises(IllegalEvent, match="only the banker"):
        GAME.apply(state, Decision("spot:2", "pass"))
    state, effects = run(GAME, state, [Decision("spot:1", "pass"), Decision("spot:2", "pass"),
                                       Decision("dealer", "pass")])
    assert state.banker == 1 and [e.spot for e in effects if isinstance(e, BankerChanged)] == [2, 3, 1]


# ---------------------------------------------------------------------------------------------------
# Views, refusals, configuration


def test_hands_stay_hidden_until_the_rules_show_them() -> None:
    state, _ = run(GAME, coup_table(), deal("5S KH KD 2C"))
    snap = GAME.snapshot(state)
    assert [c["up"] for c in snap["punter_hand"]["cards"]] == [False, False]
    assert [c["up"] for c in snap["banker_hand"]["cards"]] == [False, False]
    assert snap["punter_hand"]["points"] is None and snap["banker_hand"]["points"] is None
    assert snap["audit"] == {"punter_points": 5, "banker_points": 2}
    state, _ = run(GAME, state, [decide(state, "punter", "draw")] + deal("3H"))
    snap = GAME.snapshot(state)
    assert [c["up"] for c in snap["punter_hand"]["cards"]] == [False, False, True]
    assert [c["up"] for c in snap["banker_hand"]["cards"]] == [True, True]
    assert snap["banker_hand"]["points"] == 2 and snap["punter_hand"]["points"] is None
    json.dumps(snap)


@pytest.mark.parametrize("event, reason", [
    (Decision("spot:1", "draw"), "for spot:3"), (Decision("spot:3", "hit"), "only draw or stand"),
    (Decision("spot:3", "draw", 5), "no amount"), (Settle(), "cannot settle"),
    (NewShoe(8), "between coups"), (PlaceBet(2, "cover", 10), "not open"),
])
def test_refusals_say_why_and_change_nothing(event: Event, reason: str) -> None:
    state, _ = run(GAME, coup_table(), deal("5S KH KD 2C"))
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


@pytest.mark.parametrize("data, message", [
    ({"banker_options": ["3-9"]}, "banker_options"), ({"banker_options": ["8:1"]}, "banker_options"),
    ({"spots": 1}, "rules.spots"), ({"decks": 9}, "rules.decks"), ({"cards_behind_cut": 2}, "cards_behind_cut"),
])
def test_rules_errors_name_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        GAME.rules(data)


def test_option_cells_parse() -> None:
    assert option_cells(GAME.rules({})) == {(3, 9), (5, 4)}
    assert option_cells(GAME.rules({"banker_options": ["5:-", "4:1"]})) == {(5, None), (4, 1)}


# ---------------------------------------------------------------------------------------------------
# Random play


@pytest.mark.parametrize("rules", [{}, {"free_choice": True, "decks": 6, "spots": 3},
                                   {"banker_options": ["3:9", "5:4", "4:1", "5:-"], "commission_rounding": "down"}])
@pytest.mark.slow
def test_random_play_conserves_money_refuses_cleanly_and_replays(rules: dict[str, Any]) -> None:
    state = play_rounds(GAME, GAME.rules(rules), legal_bets, seed=7, rounds=300, void_chance=40, fresh_shoes=True,
                        bets_from_state=True)
    assert state.round >= 300


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 32))
def test_random_play_property(seed: int) -> None:
    play_rounds(GAME, GAME.rules({}), legal_bets, seed=seed, rounds=25, void_chance=20, fresh_shoes=True,
                bets_from_state=True)
