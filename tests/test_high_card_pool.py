"""The high-card pool (the seed's red dog): hands face down, a bet up to the pot beaten by a higher card of the turned
suit, the forfeit, the pot refilled, the deal rotating with a fresh shuffle, hidden hands, refusals, random play."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import parse_cards
from controller.games._pot import DealerChanged
from controller.games.base import (
    CardsRevealed, Decision, Event, IllegalEvent, NewShoe, OpenBets, RulesError, Settle, StakeChanged, VoidRound,
)
from controller.games.high_card_pool import GAME, State, beating_card, legal_bets
from controller.rng import Rng
from tests.game_harness import play_rounds
from tests.game_steps import deal, run, settlement

# three players, spot 1 deals: hands go to spots 2, 3, 1 in turn, a card each time round
HANDS = {2: "AH 7C 3D 9S 2C", 3: "KD QD 4C 5H 6S", 1: "TS JS 8H 8D 4H"}


def dealt(hands: dict[int, str] = HANDS, rules: dict[str, Any] | None = None) -> State:
    r = GAME.rules({"spots": 3, **(rules or {})})
    order = [parse_cards(hands[s]) for s in (2, 3, 1)]
    cards = [order[p][i] for i in range(r.hand_size) for p in range(3)]
    state, _ = run(GAME, GAME.new_table(r), [NewShoe(1), OpenBets()])
    return run(GAME, state, deal(" ".join(map(str, cards))))[0]


def decide(state: Any, exp: Any, rng: Rng) -> Event:
    action = rng.choice(exp.actions)
    return Decision(exp.actor, action, 1 + rng.randbelow(exp.amount_range[1]) if action == "bet" else 0)


def test_beating_card_is_the_lowest_higher_card_of_the_suit() -> None:
    hand = tuple(parse_cards("TS JS 8H 8D 4H"))
    assert beating_card(hand, parse_cards("9S")[0]) == parse_cards("TS")[0]
    assert beating_card(hand, parse_cards("5H")[0]) == parse_cards("8H")[0]
    assert beating_card(hand, parse_cards("QS")[0]) is None and beating_card(hand, parse_cards("2C")[0]) is None


def test_hands_are_dealt_face_down_round_the_table() -> None:
    r = GAME.rules({"spots": 3})
    state, effects = run(GAME, GAME.new_table(r), [NewShoe(1), OpenBets()])
    assert [e for e in effects if isinstance(e, StakeChanged)] == [StakeChanged(s, "ante", 1, 1) for s in (1, 2, 3)]
    exp = GAME.expected_next(state)
    assert (exp.card_to, exp.face_up) == ("spot:2", False)
    state = dealt()
    snap = GAME.snapshot(state)
    assert [h["spot"] for h in snap["hands"]] == [2, 3, 1]
    assert all(not c["up"] for h in snap["hands"] for c in h["cards"])
    exp = GAME.expected_next(state)
    assert (exp.actor, exp.actions, exp.amount_range) == ("spot:2", ("bet", "forfeit"), (1, 3))


def test_a_higher_card_of_the_suit_wins_from_the_pot_and_only_it_is_shown() -> None:
    state, effects = run(GAME, dealt(), [Decision("spot:2", "bet", 2)] + deal("8S"))
    assert CardsRevealed("spot:2", tuple(parse_cards("9S"))) in effects
    assert [c["up"] for c in GAME.snapshot(state)["hands"][0]["cards"]] == [False, False, False, True, False]
    assert GAME.expected_next(state).text == "spot 2 beats 8♠ with 9♠: settle"
    state, effects = run(GAME, state, [Settle()])
    s = settlement(effects)
    r = s.results[-1]
    assert (r.box, r.outcome, r.returned, r.line) == ("bet", "win", 4, "9S beats 8S: 1:1 from the pot")
    assert (s.pot_in, s.pot_out, s.house_win) == (0, 1, 0) and state.pot.chips == 1


def test_a_loser_shows_his_whole_hand_and_the_bet_goes_to_the_pot() -> None:
    state, effects = run(GAME, dealt(), [Decision("spot:2", "bet", 3)] + deal("KC"))
    assert CardsRevealed("spot:2", tuple(parse_cards(HANDS[2]))) in effects
    state, effects = run(GAME, state, [Settle()])
    r = settlement(effects).results[-1]
    assert (r.outcome, r.line) == ("lose", "nothing above KC in its suit: the bet goes to the pot")
    assert state.pot.chips == 6


def test_a_higher_card_of_another_suit_does_not_beat() -> None:
    state, _ = run(GAME, dealt(), [Decision("spot:2", "bet", 1)] + deal("TD"))
    assert GAME.expected_next(state).text == "spot 2 cannot beat T♦: settle"
    _, effects = run(GAME, state, [Settle()])
    assert settlement(effects).results[-1].outcome == "lose"            # AH is higher, but a heart


def test_forfeit_puts_one_chip_in_and_turns_no_card() -> None:
    state, effects = run(GAME, dealt(), [Decision("spot:2", "forfeit")])
    assert effects == [StakeChanged(2, "forfeit", 1, 1)] and GAME.expected_next(state).phase == "settling"
    state, effects = run(GAME, state, [Settle()])
    r = settlement(effects).results[-1]
    assert (r.box, r.outcome, r.line) == ("forfeit", "forfeit", "forfeit: 1 chip(s) to the pot")
    assert state.pot.chips == 4 and GAME.expected_next(state).text.startswith("spot 3's turn")


def test_the_pot_refills_after_it_is_won_and_the_deal_passes_with_a_fresh_shuffle() -> None:
    state, _ = run(GAME, dealt(), [Decision("spot:2", "bet", 3)] + deal("8S") + [Settle()])
    assert state.pot.chips == 0
    state, effects = run(GAME, state, [OpenBets()])                       # spot 3: everyone antes again
    assert sum(e.delta for e in effects if isinstance(e, StakeChanged)) == 3 and state.pot.chips == 3
    state, _ = run(GAME, state, [Decision("spot:3", "forfeit"), Settle(), OpenBets(), Decision("spot:1", "forfeit")])
    state, effects = run(GAME, state, [Settle()])
    assert DealerChanged(2, "every player has bet: the deal passes to spot 2") in effects
    assert GAME.expected_next(state).phase == "shuffling" and state.pot.chips == 5
    state, _ = run(GAME, state, [NewShoe(1), OpenBets()])
    assert GAME.expected_next(state).card_to == "spot:3"                  # the new dealer's left


def test_void_of_the_deal_reshuffles_and_a_later_void_replays_the_turn() -> None:
    r = GAME.rules({"spots": 3})
    state, _ = run(GAME, GAME.new_table(r), [NewShoe(1), OpenBets()] + deal("AH KD"))
    state, effects = run(GAME, state, [VoidRound("misdeal")])
    assert effects[-1].returned == 3 and GAME.expected_next(state).phase == "shuffling" and state.pot.chips == 0
    state, _ = run(GAME, dealt(), [Decision("spot:2", "bet", 2)])
    state, effects = run(GAME, state, [VoidRound("card on the floor")])
    assert effects[-1].returned == 5 and GAME.expected_next(state).text.startswith("spot 2's turn")
    assert len(state.hands[0]) == 5


@pytest.mark.parametrize("event, reason", [
    (Decision("spot:3", "bet", 1), "spot:2's"), (Decision("spot:2", "bet", 4), "bet takes 1 to 3"),
    (Decision("spot:2", "forfeit", 1), "no amount"), (Decision("spot:2", "raise", 1), "is not allowed now"),
    (Settle(), "cannot settle"), (NewShoe(1), "before its first turn"), (OpenBets(), "cannot open"),
])
def test_refusals_say_why_and_change_nothing(event: Event, reason: str) -> None:
    state = dealt()
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


@pytest.mark.parametrize("data, message", [({"spots": 9}, "four cards each"), ({"hand_size": 3}, "hand_size"),
                                           ({"spots": 11, "hand_size": 4}, "rules.spots")])
def test_rules_errors_name_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        GAME.rules(data)


@pytest.mark.slow
@pytest.mark.parametrize("rules", [{}, {"spots": 10, "hand_size": 4}, {"spots": 2, "ante": 3, "forfeit": 2}])
def test_random_play_conserves_money_and_the_pot(rules: dict[str, Any]) -> None:
    state = play_rounds(GAME, GAME.rules(rules), legal_bets, seed=8, rounds=300, void_chance=30, fresh_shoes=True,
                        decide=decide)
    assert state.round >= 300


@settings(max_examples=10)
@given(seed=st.integers(0, 2 ** 32))
def test_random_play_property(seed: int) -> None:
    play_rounds(GAME, GAME.rules({"spots": 4}), legal_bets, seed=seed, rounds=30, void_chance=15, fresh_shoes=True,
                decide=decide)
