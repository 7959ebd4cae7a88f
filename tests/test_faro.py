"""Faro and stuss: soda, turns, bets to win and coppered, bets that stay, splits, calling the turn (cat-hop), the hock,
the casekeeper, taking bets down, voids, refusals and random play."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import deck, parse_cards
from controller.games import get_game
from controller.games.base import (
    CardDealt, CloseBets, Event, IllegalEvent, NewShoe, OpenBets, PlaceBet, RemoveBet, RulesError, Settle,
    StakeChanged, VoidRound,
)
from controller.games.faro import GAME, State, call_boxes, casekeeper, legal_bets
from tests.game_harness import play_rounds
from tests.game_steps import deal, results, run, settlement

STUSS = get_game("stuss")


def table(game: Any = GAME, rules: dict[str, Any] | None = None, soda: str = "2C") -> State:
    state, _ = run(game, game.new_table(game.rules(rules or {})), [NewShoe(1)])
    if game is GAME:
        state, _ = run(game, state, deal(soda))
    return state


def turn(state: State, bets: list[tuple[int, str, int]], cards: str, game: Any = GAME) -> tuple[State, list[Any]]:
    """One turn: bets, the cards, the settlement."""
    state, effects = run(game, state, [OpenBets()] + [PlaceBet(*b) for b in bets] + [CloseBets()] + deal(cards)
                         + [Settle()])
    return state, effects


def deck_ending(last: str, soda: str = "2C") -> list[Any]:
    """A deck order: the soda, every other card, then `last` (the last cards of the deal)."""
    end = parse_cards(last)
    first = parse_cards(soda)
    middle = [c for c in deck() if c not in end and c not in first]
    return [*first, *middle, *end]


def to_last_turn(last: str, staying: list[tuple[int, str, int]] | None = None) -> State:
    """A deal played until the last three cards (`last`) are in the box, with `staying` bet on the turn before."""
    cards = deck_ending(last)
    state = table(soda=str(cards[0]))
    rest = cards[1:]
    while len(rest) > 3:
        bets = [PlaceBet(*b) for b in staying or ()] if len(rest) == 5 else []
        state, _ = run(GAME, state, [OpenBets(), *bets, CloseBets(), CardDealt(rest[0]), CardDealt(rest[1]), Settle()])
        rest = rest[2:]
    return state


# ---------------------------------------------------------------------------------------------------
# Turns


def test_soda_counts_for_nothing_but_the_casekeeper() -> None:
    state = table(soda="KS")
    assert GAME.snapshot(state)["soda"] == {"card": "KS", "up": True}
    assert casekeeper(state)["K"] == {"out": 1, "left": 3} and casekeeper(state)["A"] == {"out": 0, "left": 4}
    exp = GAME.expected_next(table(soda="KS"))
    assert exp.phase == "idle"


@pytest.mark.parametrize("box, cards, outcome, net", [
    ("K", "7D KH", "win", 100),          # K comes as the winner
    ("K", "KH 7D", "lose", -100),        # K comes as the loser
    ("copper:K", "KH 7D", "win", 100),   # coppered: the loser wins the bet
    ("copper:K", "7D KH", "lose", -100),
    ("K", "KH KD", "split", -50),        # split: the house takes half
    ("copper:K", "KH KD", "split", -50),
])
def test_a_turn_settles_the_bets_on_its_ranks(box: str, cards: str, outcome: str, net: int) -> None:
    state, effects = turn(table(), [(1, box, 100)], cards)
    assert results(effects)[(1, box)][:2] == (outcome, net)
    assert not state.bets


def test_split_lines_and_the_odd_credit() -> None:
    _, effects = turn(table(), [(1, "9", 15), (2, "copper:9", 4)], "9H 9D")
    got = results(effects)
    assert got[(1, "9")] == ("split", -8, "split on 9: the house takes half")
    assert got[(2, "copper:9")][:2] == ("split", -2)
    _, effects = turn(table(STUSS), [(1, "9", 15)], "9H 9D", STUSS)
    assert results(effects)[(1, "9")] == ("split", -15, "split on 9: the house takes the bet")


def test_bets_stay_until_their_rank_shows() -> None:
    state, effects = turn(table(), [(1, "K", 100), (2, "5", 20)], "7D 8H")
    s = settlement(effects)
    assert s.results == () and (s.carried_in, s.carried_out) == (0, 120)
    assert state.bets.total == 120
    state, effects = turn(state, [(3, "5", 10)], "5C 9S")
    s = settlement(effects)
    assert {(r.spot, r.outcome) for r in s.results} == {(2, "lose"), (3, "lose")}
    assert (s.carried_in, s.carried_out, s.stakes) == (120, 100, 30)
    assert s.results[0].line == "lose, 5 comes as the loser"


def test_bets_added_to_a_bet_that_stayed_settle_together() -> None:
    state, _ = turn(table(), [(1, "K", 100)], "7D 8H")
    state, effects = turn(state, [(1, "K", 50)], "3D KS")
    assert results(effects)[(1, "K")][:2] == ("win", 150)


def test_a_dead_rank_takes_no_bet() -> None:
    state, _ = turn(table(soda="QS"), [], "QH QD")
    state, _ = turn(state, [], "QC 2D")
    state, _ = run(GAME, state, [OpenBets()])
    with pytest.raises(IllegalEvent, match="no Q is left in the box: the rank is dead"):
        GAME.apply(state, PlaceBet(1, "Q", 10))
    with pytest.raises(IllegalEvent, match="dead"):
        GAME.apply(state, PlaceBet(1, "copper:Q", 10))


def test_taking_bets_back_and_down() -> None:
    state, _ = turn(table(), [(1, "K", 100)], "7D 8H")
    state, _ = run(GAME, state, [OpenBets(), PlaceBet(1, "K", 30)])
    state, effects = run(GAME, state, [RemoveBet(1, "K", 30)])
    assert effects == [StakeChanged(1, "K", 100, -30)]
    with pytest.raises(IllegalEvent, match="taken down between turns"):
        GAME.apply(state, RemoveBet(1, "K", 10))
    state, _ = run(GAME, state, [CloseBets()] + deal("7S 8S") + [Settle()])
    state, effects = run(GAME, state, [RemoveBet(1, "K", 100)])           # between turns: take it down
    assert effects == [StakeChanged(1, "K", 0, -100)] and not state.bets


def test_void_returns_the_turns_chips_and_keeps_the_bets_that_stayed() -> None:
    state, _ = turn(table(), [(1, "K", 100)], "7D 8H")
    state, _ = run(GAME, state, [OpenBets(), PlaceBet(1, "K", 20), PlaceBet(2, "4", 10), CloseBets()] + deal("KD"))
    state, effects = run(GAME, state, [VoidRound("two cards came out together")])
    assert StakeChanged(1, "K", 100, -20) in effects and StakeChanged(2, "4", 0, -10) in effects
    assert effects[-1].returned == 30 and state.bets.total == 100
    assert casekeeper(state)["K"]["out"] == 1                # the card shown stays out of the box


# ---------------------------------------------------------------------------------------------------
# The last turn


def test_calling_the_turn_pays_4_to_1_and_the_hock_neither_wins_nor_loses() -> None:
    state = to_last_turn("KS 7H 3D")
    assert GAME.snapshot(state)["last_turn"] is True
    state, _ = run(GAME, state, [OpenBets()])
    assert sorted(call_boxes(state)) == ["call:37K", "call:3K7", "call:73K", "call:7K3", "call:K37", "call:K73"]
    state, effects = run(GAME, state, [PlaceBet(1, "call:K73", 10), PlaceBet(2, "call:7K3", 10),
                                       PlaceBet(3, "3", 10), PlaceBet(4, "K", 10), CloseBets()])
    exp = GAME.expected_next(state)
    state, _ = run(GAME, state, deal("KS 7H"))
    assert GAME.expected_next(state).card_to == "hock"
    state, effects = run(GAME, state, deal("3D") + [Settle()])
    got = results(effects)
    assert got[(1, "call:K73")] == ("win", 40, "calling the turn 4:1: K73")
    assert got[(2, "call:7K3")][:2] == ("lose", -10)
    assert got[(3, "3")] == ("push", 0, "hock 3: the last card neither wins nor loses")
    assert got[(4, "K")][:2] == ("lose", -10)
    assert GAME.expected_next(state).phase == "shuffling" and exp.card_to == "loser"


def test_a_cat_hop_call_pays_2_to_1() -> None:
    state = to_last_turn("KS KH 3D")
    state, _ = run(GAME, state, [OpenBets()])
    assert sorted(call_boxes(state)) == ["call:3KK", "call:K3K", "call:KK3"]
    assert GAME.snapshot(state)["calls"] == {"3KK": "2:1", "K3K": "2:1", "KK3": "2:1"}
    state, effects = run(GAME, state, [PlaceBet(1, "call:K3K", 10), PlaceBet(2, "K", 10), CloseBets()]
                         + deal("KS 3D KH") + [Settle()])
    got = results(effects)
    assert got[(1, "call:K3K")] == ("win", 20, "calling the turn 2:1 (cat-hop): K3K")
    assert got[(2, "K")][:2] == ("lose", -10)               # K as the loser; the hock K settles nothing


def test_three_of_a_rank_cannot_be_called() -> None:
    state = to_last_turn("KS KH KD")
    state, _ = run(GAME, state, [OpenBets()])
    assert call_boxes(state) == {}
    with pytest.raises(IllegalEvent, match="not three of a rank"):
        GAME.apply(state, PlaceBet(1, "call:KKK", 10))


def test_calls_only_on_the_last_turn_and_in_a_possible_order() -> None:
    state, _ = run(GAME, table(), [OpenBets()])
    with pytest.raises(IllegalEvent, match="last three cards"):
        GAME.apply(state, PlaceBet(1, "call:K73", 10))
    state = to_last_turn("KS 7H 3D")
    state, _ = run(GAME, state, [OpenBets()])
    with pytest.raises(IllegalEvent, match="not an order"):
        GAME.apply(state, PlaceBet(1, "call:K74", 10))


def test_a_voided_last_turn_gives_back_the_bets_that_stayed_in_one_more_round() -> None:
    state = to_last_turn("KS 7H 3D", staying=[(2, "7", 20)])
    state, _ = run(GAME, state, [OpenBets(), PlaceBet(1, "3", 10), CloseBets()] + deal("KS 3D"))
    state, effects = run(GAME, state, [VoidRound("misdeal")])
    assert effects[-1].returned == 10 and state.bets.total == 20            # the bet that stayed is still there
    exp = GAME.expected_next(state)
    assert exp.text == "the deal is over: open the last round to give back the bets that stayed"
    state, effects = run(GAME, state, [OpenBets(), Settle()])
    s = settlement(effects)
    assert [(r.spot, r.outcome, r.returned) for r in s.results] == [(2, "push", 20)]
    assert (s.carried_in, s.carried_out) == (20, 0) and GAME.expected_next(state).phase == "shuffling"


# ---------------------------------------------------------------------------------------------------
# Stuss, refusals, configuration, random play


def test_stuss_has_no_soda_and_no_hock() -> None:
    state = table(STUSS)
    assert GAME.expected_next(state).phase == "idle"
    state, _ = run(STUSS, state, [OpenBets(), CloseBets()])
    assert STUSS.expected_next(state).card_to == "loser"
    cards = list(deck())
    state = table(STUSS)
    for i in range(26):
        state, _ = run(STUSS, state, [OpenBets(), CloseBets(), CardDealt(cards[2 * i]), CardDealt(cards[2 * i + 1])])
        assert STUSS.expected_next(state).phase == "settling"
        state, _ = run(STUSS, state, [Settle()])
    assert STUSS.expected_next(state).phase == "shuffling" and STUSS.snapshot(state)["game"] == "stuss"


@pytest.mark.parametrize("event, reason", [
    (Settle(), "cannot settle"), (PlaceBet(1, "K", 5), "not open"), (NewShoe(1), "deal is over"),
    (CardDealt(parse_cards("KS")[0], target="winner"), "goes to loser"), (OpenBets(), "cannot open"),
])
def test_refusals_say_why_and_change_nothing(event: Event, reason: str) -> None:
    state, _ = run(GAME, table(), [OpenBets(), PlaceBet(1, "K", 10), CloseBets()])
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


def test_a_deck_is_one_deck() -> None:
    with pytest.raises(IllegalEvent, match="one deck"):
        GAME.apply(GAME.new_table(GAME.rules({})), NewShoe(2))
    state, _ = run(GAME, table(soda="KS"), [OpenBets(), CloseBets()])
    with pytest.raises(IllegalEvent, match="every KS of its 1 deck"):
        GAME.apply(state, CardDealt(parse_cards("KS")[0]))


@pytest.mark.parametrize("data, message", [({"decks": 2}, "rules.decks"), ({"soda": False}, "call_the_turn"),
                                           ({"split_takes": "most"}, "split_takes")])
def test_rules_errors_name_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        GAME.rules(data)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["faro", "stuss"])
def test_random_play_conserves_money_refuses_cleanly_and_replays(name: str) -> None:
    game = get_game(name)
    state = play_rounds(game, game.rules({}), legal_bets, seed=9, rounds=300, void_chance=30, fresh_shoes=True,
                        bets_from_state=True)
    assert state.round >= 300


@pytest.mark.slow
@settings(max_examples=10)
@given(seed=st.integers(0, 2 ** 32))
def test_random_play_property(seed: int) -> None:
    play_rounds(GAME, GAME.rules({}), legal_bets, seed=seed, rounds=40, void_chance=10, fresh_shoes=True,
                bets_from_state=True)
