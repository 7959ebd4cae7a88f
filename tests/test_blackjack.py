"""Blackjack: every rule table-driven (naturals, peek, insurance, splits, doubles, surrender, H17, 6:5, the shoe),
hidden hole card, refusals, money conservation and replay over random play, and the math fast path settling
exactly as the engine on the same seeded cards."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.analysis.blackjack import FastRules, analyse, play, simulate
from controller.analysis.blackjack_strategy import basic_strategy, chart, decide
from controller.cards import Card, Composition, parse_card, parse_cards
from controller.games._shoe import ShoeState
from controller.games.base import (
    CardDealt, CardPlaced, CardsRevealed, CloseBets, Decision, Event, IllegalEvent, NewShoe, OpenBets, PlaceBet,
    RemoveBet, RoundVoided, RulesError, Settle, ShuffleDue, StakeChanged, VoidRound,
)
from controller.games.blackjack import GAME, Phase, State, legal_bets
from controller.hands.points import blackjack_value
from controller.rng import Rng
from tests.game_harness import play_rounds
from tests.game_steps import SeededShoes, committed, results, run, settlement


def table(rules: dict[str, Any] | None = None, bets: dict[int, int] | None = None, cut: int | None = None) -> State:
    """A table with a fresh shoe, bets placed and closed: ready for the deal."""
    r = GAME.rules(rules or {})
    events: list[Event] = [NewShoe(r.decks, cut), OpenBets()]
    events += [PlaceBet(spot, "main", amount) for spot, amount in (bets or {1: 10}).items()]
    events.append(CloseBets())
    state, _ = run(GAME, GAME.new_table(r), events)
    return state


def script(items: str) -> list[Event]:
    """'AS 6H 1:split KD 1/1:stand 1:insure:5' -> cards and decisions ('spot[/hand]:action[:amount]')."""
    events: list[Event] = []
    for item in items.split():
        if ":" not in item:
            events.append(CardDealt(parse_card(item)))
            continue
        who, action, *amount = item.split(":")
        spot, _, hand = who.partition("/")
        events.append(Decision(f"spot:{spot}", action, int(amount[0]) if amount else 0, int(hand or 0)))
    return events


def play_script(items: str, rules: dict[str, Any] | None = None, bets: dict[int, int] | None = None,
                settle: bool = True) -> tuple[State, list[Any]]:
    state = table(rules, bets)
    state, effects = run(GAME, state, script(items))
    if settle:
        assert GAME.expected_next(state).phase == "settling", GAME.expected_next(state).text
        state, more = run(GAME, state, [Settle()])
        effects += more
        assert settlement(effects).stakes == committed(effects) + sum(bets.values() if bets else [10])
    return state, effects


# ---------------------------------------------------------------------------------------------------
# Rules, table-driven: (rules, bets, cards and decisions, {(spot, box): (outcome, net)})

CASES = [
    # naturals: 3:2, 6:5, rounding down on an odd bet, push against a dealer blackjack
    ({}, {1: 10}, "AS 9H KD 7C", {(1, "main"): ("blackjack", 15)}),
    ({"blackjack_pays": "6:5"}, {1: 10}, "AS 9H KD 7C", {(1, "main"): ("blackjack", 12)}),
    ({}, {1: 15}, "AS 9H KD 7C", {(1, "main"): ("blackjack", 22)}),
    ({}, {1: 10}, "AS KH KD AC", {(1, "main"): ("push", 0)}),
    # peek with a ten up: the dealer's blackjack ends the round before anyone plays
    ({}, {1: 10, 2: 20}, "9H 5C KD 9C 5D AS", {(1, "main"): ("lose", -10), (2, "main"): ("lose", -20)}),
    # insurance when the dealer has blackjack: the main bet loses, insurance pays 2:1 on up to half the bet
    ({}, {1: 10}, "9H AS 9C KD 1:insure:5", {(1, "main"): ("lose", -10), (1, "insurance"): ("win", 10)}),
    # insurance lost; then 18 against a soft 18 pushes (the dealer stands on soft 17 and up)
    ({}, {1: 10}, "9H AS 9C 7D 1:insure:5 1:stand", {(1, "main"): ("push", 0), (1, "insurance"): ("lose", -5)}),
    ({}, {1: 10}, "9H AS 9C 7D 1:decline 1:stand", {(1, "main"): ("push", 0)}),
    # split aces: one card each, an ace and a ten after a split is 21 and pays 1:1, not 3:2
    ({}, {1: 10}, "AS 6H AD 9C 1:split KD 5C TC",
     {(1, "main"): ("win", 10), (1, "split:1"): ("win", 10)}),
    # split aces against a dealer 21: the split 21 only pushes
    ({}, {1: 10}, "AS 6H AD 5C 1:split KD 5D TC",
     {(1, "main"): ("push", 0), (1, "split:1"): ("lose", -10)}),
    # resplit up to max_hands, double after split
    # (a resplit hand goes next to the hand it came from: hand 2 is "split:2", hand 3 the first split)
    ({"max_hands": 3}, {1: 10}, "8S 6H 8D TC 1:split 8C 1:split 3H 1:double TD 9C 1/1:stand 2C 1/2:double 9D 4H",
     {(1, "main"): ("win", 20), (1, "split:2"): ("lose", -10), (1, "split:1"): ("lose", -20)}),
    # surrender: half the bet back (rounded down: the house keeps the odd credit)
    ({"late_surrender": True}, {1: 10}, "TS TH 6D 7C 1:surrender", {(1, "main"): ("surrender", -5)}),
    ({"late_surrender": True}, {1: 15}, "TS TH 6D 7C 1:surrender", {(1, "main"): ("surrender", -8)}),
    # the dealer stands on soft 17 (S17) ...
    ({}, {1: 10}, "TS 6H 9D AC 1:stand", {(1, "main"): ("win", 10)}),
    # ... or hits it (H17): A-6 draws 5 (12), then 9 (21)
    ({"dealer_hits_soft_17": True}, {1: 10}, "TS 6H 9D AC 1:stand 5C 9S", {(1, "main"): ("lose", -10)}),
    # the dealer does not draw when every hand is bust
    ({}, {1: 10}, "TS 6H 6D 5C 1:hit KC", {(1, "main"): ("lose", -10)}),
    # multi-spot: each spot settles on its own against the same dealer hand (dealer 6+T+8 busts)
    ({}, {1: 10, 3: 20, 5: 50}, "TS 9H 5C 6H 8D 7C 2D TD 1:stand 3:stand 5:hit 9S 5:hit KC 8C",
     {(1, "main"): ("win", 10), (3, "main"): ("win", 20), (5, "main"): ("lose", -50)}),
    # a double wins or loses twice the bet
    ({}, {1: 10}, "6S 6H 5D TC 1:double TD 9S", {(1, "main"): ("win", 20)}),
]


@pytest.mark.parametrize("rules, bets, items, expected", CASES)
def test_rule_cases(rules: dict[str, Any], bets: dict[int, int], items: str,
                    expected: dict[tuple[int, str], tuple[str, int]]) -> None:
    _, effects = play_script(items, rules, bets)
    got = {key: (outcome, net) for key, (outcome, net, _) in results(effects).items()}
    assert got == expected


def test_paytable_lines_name_the_rule() -> None:
    _, effects = play_script("AS 6H AD 9C 1:split KD 5C TC")
    lines = {box: line for (_, box), (_, _, line) in results(effects).items()}
    assert lines["main"].startswith("21 after a split pays 1:1 (not a blackjack)")
    _, effects = play_script("AS 9H KD 7C", {"blackjack_pays": "6:5"})
    assert results(effects)[(1, "main")][2] == "blackjack 6:5"
    _, effects = play_script("9H AS 9C KD 1:insure:5")
    assert results(effects)[(1, "insurance")][2] == "insurance 2:1"


def expected_at(items: str, rules: dict[str, Any] | None = None, bets: dict[int, int] | None = None) -> Any:
    state, _ = run(GAME, table(rules, bets), script(items))
    return GAME.expected_next(state)


def test_split_aces_get_one_card_each() -> None:
    exp = expected_at("AS 6H AD 9C 1:split 5D")
    assert exp.card_to == "spot:1/hand:1"           # no decision on the first ace: it stands on A-5
    exp = expected_at("AS 6H AD 9C 1:split AH")
    assert exp.card_to == "spot:1/hand:1"           # a second ace cannot be resplit by default
    exp = expected_at("AS 6H AD 9C 1:split AH", {"resplit_aces": True})
    assert exp.actor == "spot:1" and exp.actions == ("split", "stand")


def test_resplit_limit_and_double_after_split() -> None:
    exp = expected_at("8S 6H 8D TC 1:split 8C", {"max_hands": 2})
    assert "split" not in exp.actions and "double" in exp.actions
    exp = expected_at("8S 6H 8D TC 1:split 3C", {"double_after_split": False})
    assert exp.actions == ("hit", "stand")
    exp = expected_at("8S 6H 8D TC 1:split 3C")
    assert exp.actions == ("hit", "stand", "double")


@pytest.mark.parametrize("rule, cards, can_double", [
    ("any", "5S 6H 3D TC", True), ("9-11", "5S 6H 3D TC", False), ("9-11", "5S 6H 4D TC", True),
    ("9-11", "AS 6H 8D TC", False), ("10-11", "5S 6H 4D TC", False), ("10-11", "5S 6H 6D TC", True),
    ("10-11", "5S 6H 6D TC 1:hit", False),
])
def test_double_rules(rule: str, cards: str, can_double: bool) -> None:
    items = cards if not cards.endswith("hit") else cards + " 2C"
    assert ("double" in expected_at(items, {"double": rule}).actions) is can_double


def test_surrender_only_on_the_first_two_cards() -> None:
    assert "surrender" not in expected_at("TS TH 6D 7C").actions
    assert "surrender" in expected_at("TS TH 6D 7C", {"late_surrender": True}).actions
    assert "surrender" not in expected_at("TS TH 6D 7C 1:hit AC", {"late_surrender": True}).actions
    assert "surrender" not in expected_at("8S TH 8D 7C 1:split 8C", {"late_surrender": True}).actions


def test_insurance_is_offered_with_an_ace_up_only_to_bets_that_can_take_it() -> None:
    exp = expected_at("9H AS 9C 7D", bets={1: 10})
    assert exp.actor == "spot:1" and exp.actions == ("insure", "decline") and exp.amount_range == (1, 5)
    exp = expected_at("9H 9D AS 7S 9C 8H", bets={1: 1, 2: 11}, rules={"limits": {"main": {"min": 1, "max": 100}}})
    assert exp.actor == "spot:2" and exp.amount_range == (1, 5)   # a one-credit bet has no half to insure
    assert expected_at("9H AS 8C 7D", {"insurance": False}).actions == ("hit", "stand", "double")


def test_hole_card_stays_hidden_until_revealed() -> None:
    state, effects = run(GAME, table(), script("TS 9H 7D KC"))
    snap = GAME.snapshot(state)
    hole = snap["dealer"]["cards"][1]
    assert hole == {"card": "KC", "up": False}        # views blank the card of every face-down Placed
    assert snap["dealer"]["showing"] == "9"
    assert "19" not in json.dumps({k: v for k, v in snap.items() if k != "audit"})
    assert snap["audit"]["dealer_total"] == "19"
    assert [e for e in effects if isinstance(e, CardPlaced)][-1].up is False
    exp = GAME.expected_next(state)
    assert "19" not in exp.text and "K" not in exp.text.split(":")[-1]
    state, effects = run(GAME, state, script("1:stand"))
    assert CardsRevealed("dealer", parse_cards("9H KC")) in effects
    assert GAME.snapshot(state)["dealer"]["cards"][1]["up"] is True


def test_dealer_blackjack_shows_the_hole_card_at_once() -> None:
    _, effects = run(GAME, table(), script("9H KD 9C AS"))
    assert CardsRevealed("dealer", parse_cards("KD AS")) in effects


# ---------------------------------------------------------------------------------------------------
# Refusals leave the state as it was


@pytest.mark.parametrize("items, event, reason", [
    ("TS 9H 7D KC", Decision("spot:2", "hit"), "spot:1"),
    ("TS 9H 7D KC", Decision("spot:1", "split"), "not allowed"),
    ("TS 9H 7D KC", Decision("spot:1", "hit", 0, 1), "hand 1"),
    ("TS 9H 7D KC", Decision("spot:1", "double", 10), "takes no amount"),
    ("TS 9H 7D KC", Decision("dealer", "hit"), "spot:1"),
    ("TS 9H 7D KC", CardDealt(parse_card("2C")), "no card expected"),
    ("TS 9H", CardDealt(parse_card("2C"), target="dealer"), "goes to spot:1"),
    ("TS 9H", PlaceBet(2, "main", 10), "not open"),
    ("TS 9H", Settle(), "cannot settle"),
    ("TS 9H", OpenBets(), "cannot open bets"),
    ("TS 9H", NewShoe(6), "between rounds"),
    ("9H AS 9C 7D", Decision("spot:1", "insure", 6), "1 to 5"),
    ("9H AS 9C 7D", Decision("spot:1", "decline", 3), "takes no amount"),
    ("", CardDealt(parse_card("JK")), "joker"),
])
def test_refusals_say_why_and_change_nothing(items: str, event: Event, reason: str) -> None:
    state, _ = run(GAME, table(), script(items))
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


def test_a_card_the_shoe_cannot_hold_is_refused() -> None:
    state, _ = run(GAME, table({"decks": 1}), script("AS 9H"))
    with pytest.raises(IllegalEvent, match="AS cannot come from this shoe"):
        GAME.apply(state, CardDealt(parse_card("AS")))


def test_bets_and_limits() -> None:
    state, _ = run(GAME, GAME.new_table(GAME.rules({})), [NewShoe(6), OpenBets()])
    with pytest.raises(IllegalEvent, match="over the table maximum of 1000"):
        GAME.apply(state, PlaceBet(1, "main", 1001))
    with pytest.raises(IllegalEvent, match="no box 'insurance'"):
        GAME.apply(state, PlaceBet(1, "insurance", 5))
    with pytest.raises(IllegalEvent, match="spot 1 main: 5 is under the table minimum of 10"):
        GAME.apply(state, PlaceBet(1, "main", 5))   # refused when placed, not only when bets close
    state, effects = run(GAME, state, [PlaceBet(1, "main", 10), PlaceBet(1, "main", 5), RemoveBet(1, "main", 2),
                                       PlaceBet(1, "main", 2)])
    assert committed(effects) == 15
    with pytest.raises(IllegalEvent, match="taking back 10 would leave 5, under the table minimum of 10"):
        GAME.apply(state, RemoveBet(1, "main", 10))


# ---------------------------------------------------------------------------------------------------
# The shoe


def test_cut_card_ends_the_shoe_after_the_round() -> None:
    state = table(cut=4)
    state, effects = run(GAME, state, script("TS 9H 7D"))
    assert not any(isinstance(e, ShuffleDue) for e in effects)
    state, effects = run(GAME, state, script("KC"))
    assert any(isinstance(e, ShuffleDue) for e in effects)
    state, _ = run(GAME, state, script("1:stand") + [Settle()])
    assert GAME.expected_next(state).phase == "shuffling"
    with pytest.raises(IllegalEvent, match="cannot open bets"):
        GAME.apply(state, OpenBets())
    with pytest.raises(IllegalEvent, match="plays 6 deck"):
        GAME.apply(state, NewShoe(8))
    state, _ = run(GAME, state, [NewShoe(6), OpenBets()])
    assert state.shoe.dealt == 0 and state.shoe.remaining == 312


def test_an_empty_shoe_mid_round_is_reshuffled_without_the_cards_on_the_table() -> None:
    state, _ = run(GAME, table({"decks": 1}), script("TS 9H 5D"))
    left = Composition.from_cards(parse_cards("KC 2S"))  # pretend the rest of the deck is in the discards
    state = replace(state, shoe=ShoeState(1, 52, 50, left))
    state, effects = run(GAME, state, script("KC 1:hit 2S"))
    assert any(isinstance(e, ShuffleDue) for e in effects)
    state, _ = run(GAME, state, script("1:hit"))
    exp = GAME.expected_next(state)
    assert exp.phase == "shuffling" and exp.card_to is None
    with pytest.raises(IllegalEvent, match="the shoe is empty"):
        GAME.apply(state, CardDealt(parse_card("3C")))
    state, _ = run(GAME, state, [NewShoe(1)])
    assert state.shoe.remaining == 52 - 5           # the five cards on the table stay out
    with pytest.raises(IllegalEvent, match="TS cannot come from this shoe"):
        GAME.apply(state, CardDealt(parse_card("TS"), target="spot:1"))
    state, _ = run(GAME, state, script("3C 1:stand") + [Settle()])
    assert state.phase is Phase.IDLE


def test_void_returns_every_stake_doubles_splits_and_insurance_included() -> None:
    state, effects = run(GAME, table(bets={1: 10, 2: 20}), script("8S 9H AS 8D 8H 7C 1:insure:5 2:decline "
                                                                   "1:split 3C 1:double"))
    on_layout = committed(effects) + 30
    state, effects = run(GAME, state, [VoidRound("shoe misread")])
    voided = [e for e in effects if isinstance(e, RoundVoided)]
    assert voided and voided[0].returned == on_layout == 10 + 5 + 10 + 10 + 20
    assert -committed(effects) == on_layout
    assert all(e.stake == 0 for e in effects if isinstance(e, StakeChanged))
    assert state.phase is Phase.IDLE and not state.seats


# ---------------------------------------------------------------------------------------------------
# Configuration


@pytest.mark.parametrize("data, message", [
    ({"decks": 9}, "rules.decks"), ({"penetration": 10}, "rules.penetration"),
    ({"double": "8-11"}, "double"), ({"blackjack_pays": "1:2"}, "rules.blackjack_pays"),
    ({"max_hands": 0}, "rules.max_hands"), ({"spots": 8}, "rules.spots"), ({"surrender": True}, "unknown key"),
    ({"limits": {"main": {"min": 1, "max": 10}, "side": {"min": 1, "max": 5}}}, "no such box side"),
    ({"decks": "six"}, "decks"),
])
def test_rules_errors_name_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        GAME.rules(data)


# ---------------------------------------------------------------------------------------------------
# Property tests over random play


def random_decide(state: Any, exp: Any, rng: Rng) -> Event:
    action = rng.choice(exp.actions)
    amount = 0
    if action == "insure":
        lo, hi = exp.amount_range
        amount = lo + rng.randbelow(hi - lo + 1)
    return Decision(exp.actor, action, amount, exp.hand)


RULE_SETS = [
    {},
    {"decks": 1, "penetration": 90, "spots": 7},
    {"decks": 2, "late_surrender": True, "resplit_aces": True, "max_hands": 8, "double": "9-11",
     "dealer_hits_soft_17": True, "blackjack_pays": "6:5"},
    {"decks": 8, "insurance": False, "double_after_split": False, "split_unlike_tens": False, "max_hands": 2},
]


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULE_SETS)
def test_random_play_conserves_money_refuses_cleanly_and_replays(rules: dict[str, Any]) -> None:
    state = play_rounds(GAME, GAME.rules(rules), legal_bets, seed=11, rounds=250, decide=random_decide,
                        void_chance=60, fresh_shoes=True)
    assert state.round >= 250


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 32))
def test_random_play_property(seed: int) -> None:
    play_rounds(GAME, GAME.rules({"late_surrender": True, "resplit_aces": True}), legal_bets, seed=seed, rounds=20,
                decide=random_decide, void_chance=30, fresh_shoes=True)


# ---------------------------------------------------------------------------------------------------
# Basic strategy and the math fast path


@pytest.mark.parametrize("h17, das, total, soft, pair, up, expected", [
    (False, True, 11, False, 0, 1, "hit"), (True, True, 11, False, 0, 1, "double"),
    (False, True, 16, False, 0, 10, "surrender"), (False, True, 12, False, 0, 4, "stand"),
    (False, True, 18, True, 0, 2, "stand"), (True, True, 18, True, 0, 2, "double"),
    (False, True, 18, True, 0, 9, "hit"), (False, True, 16, False, 8, 10, "split"),
    (True, True, 16, False, 8, 1, "surrender"), (False, True, 4, False, 2, 2, "split"),
    (False, False, 4, False, 2, 2, "hit"), (False, True, 20, False, 10, 6, "stand"),
    (False, True, 18, False, 9, 7, "stand"), (False, True, 12, True, 1, 10, "split"),
    (True, True, 17, False, 0, 1, "surrender"), (False, True, 17, False, 0, 1, "stand"),
])
def test_basic_strategy_cells(h17: bool, das: bool, total: int, soft: bool, pair: int, up: int,
                              expected: str) -> None:
    assert decide(chart(h17, das), total, soft, pair, up, True, True, True) == expected


def test_strategy_falls_back_when_an_option_is_not_allowed() -> None:
    c = chart(False, True)
    assert decide(c, 11, False, 0, 6, False, False, False) == "hit"        # double, else hit
    assert decide(c, 18, True, 0, 4, False, False, False) == "stand"       # double, else stand
    assert decide(c, 16, False, 0, 10, False, False, False) == "hit"       # surrender, else hit
    assert decide(c, 16, False, 8, 10, True, False, True) == "surrender"   # no room to split 8s


def engine_rounds(rules: dict[str, Any], rounds: int, seed: int, stake: int) -> tuple[list[list[Card]], list[int]]:
    """Step the engine through `rounds` rounds of one basic-strategy spot on seeded shoes; each round's cards
    in the order they were dealt, followed by the cards after them in the shoe, and its net."""
    r = GAME.rules(rules)
    c = chart(r.dealer_hits_soft_17, r.double_after_split)
    shoes = SeededShoes(GAME, r.decks, seed)
    state = GAME.new_table(r)
    rows: list[list[Card]] = []
    nets: list[int] = []
    while len(nets) < rounds:
        if GAME.expected_next(state).phase == "shuffling":
            state = shoes.new_shoe(state)
            continue
        start = shoes.pos
        state, effects = run(GAME, state, [OpenBets(), PlaceBet(1, "main", stake), CloseBets()])
        while (exp := GAME.expected_next(state)).phase != "settling":
            assert exp.phase != "shuffling", "the shoe ran out mid-round: leave more cards behind the cut"
            if exp.card_to is not None:
                state, more = shoes.deal(state)
            else:
                if exp.actions == ("insure", "decline"):
                    event = Decision(exp.actor, "decline")  # type: ignore[arg-type]
                else:
                    hand = next(h for s in state.seats for h in s.hands if not h.done)
                    action = basic_strategy(c, hand.cards, state.dealer[0], exp.actions)
                    event = Decision(exp.actor, action, 0, exp.hand)  # type: ignore[arg-type]
                state, more = GAME.apply(state, event)
            effects += more
        state, more = GAME.apply(state, Settle())
        s = settlement(list(more))
        assert [e.card for e in effects if isinstance(e, CardPlaced)] == shoes.cards[start:shoes.pos]
        rows.append(shoes.since(start, 30))
        nets.append(s.returned - s.stakes)
    return rows, nets


def assert_fast_path_matches_engine(rules: dict[str, Any], rounds: int, seed: int, stake: int) -> None:
    rows, nets = engine_rounds(rules, rounds, seed, stake)
    width = max(len(row) for row in rows)
    values = np.array([[blackjack_value(c) for c in row] + [10] * (width - len(row)) for row in rows], np.int8)
    out = play(values, FastRules.of(GAME.rules(rules)), stake)
    assert not out.overflow.any()
    mismatch = np.flatnonzero(out.net != np.array(nets))
    assert mismatch.size == 0, (f"{mismatch.size} rounds differ, first: {[str(c) for c in rows[mismatch[0]][:12]]} "
                                f"engine {nets[mismatch[0]]} fast {out.net[mismatch[0]]}")


FAST_RULES = [
    {},
    {"dealer_hits_soft_17": True, "late_surrender": True, "resplit_aces": True, "max_hands": 3, "decks": 2},
    {"blackjack_pays": "6:5", "double": "9-11", "double_after_split": False, "decks": 1, "max_hands": 2,
     "penetration": 50},
    {"double": "10-11", "decks": 8, "max_hands": 8, "resplit_aces": True},
]


@pytest.mark.slow
@pytest.mark.parametrize("rules", FAST_RULES)
def test_fast_path_settles_as_the_engine(rules: dict[str, Any]) -> None:
    assert_fast_path_matches_engine(rules, 4_000, seed=5, stake=15)


@pytest.mark.long
@pytest.mark.parametrize("rules", FAST_RULES)
def test_fast_path_settles_as_the_engine_long(rules: dict[str, Any]) -> None:
    assert_fast_path_matches_engine(rules, 100_000, seed=6, stake=10)


def test_fast_path_replays_a_round_longer_than_its_row() -> None:
    r = FastRules.of(GAME.rules({"max_hands": 8, "resplit_aces": True}))
    rng = np.random.default_rng(3)
    full = rng.permuted(np.tile(np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10] * 4 * 6, np.int8), (500, 1)),
                       axis=1)
    whole = play(full, r, 10)
    short = play(full[:, :7], r, 10)
    assert short.overflow.any() and not whole.overflow.any()
    fine = ~short.overflow
    assert (short.net[fine] == whole.net[fine]).all()


@pytest.mark.slow
def test_simulation_is_seeded_and_independent_of_processes() -> None:
    rules = GAME.rules({})
    one = simulate(rules, 250_000, seed=4, processes=1)
    two = simulate(rules, 250_000, seed=4, processes=2)
    assert one == two
    assert one != simulate(rules, 250_000, seed=5, processes=1)


@pytest.mark.slow
def test_report_shape_and_edge() -> None:
    lines: list[str] = []
    rep = analyse(GAME.rules({}), 400_000, 1, lines.append)
    assert rep["game"] == "blackjack" and rep["method"] == "simulation" and rep["rounds"] == 400_000
    assert set(rep["house_edge"]) == {"base"} and set(rep["ci95"]) == {"base"}
    edge, half = rep["house_edge"]["base"], rep["ci95"]["base"]
    assert 0.003 < half < 0.005
    assert abs(edge - -0.0045) < 2.5 * half    # published: about 0.4%-0.5% for these rules
    assert 0.04 < rep["probabilities"]["player_blackjack"] < 0.055 and lines
