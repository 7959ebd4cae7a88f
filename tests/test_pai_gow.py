"""Pai gow poker: the hand order, the deal and discards, setting and fouls, every settlement rule, player banking, refusals that change nothing, hidden cards, harness properties."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import Card, JOKER, deck, format_cards, parse_cards
from controller.games.base import (
    CardDealt, CardsRevealed, CloseBets, Decision, Event, IllegalEvent, OpenBets, PlaceBet, RoundSettled,
    RulesError, Settle, StakeChanged, VoidRound,
)
from controller.games.pai_gow import GAME, POSITIONS, HandOrder, State, first_position, legal_bets
from controller.games._house_way import house_way
from controller.rng import Rng
from tests.game_harness import play_rounds, random_decision

DEALER_HAND = "AS KD 9C 7H 5S 3D 2C"    # the house way: A-7-5-3-2 behind, K-9 in front


def random_decide(state: State, exp: Any, rng: Rng) -> Event:
    """The harness's decisions: the dealer's dice or number; a player's random setting, foul or not, or the
    house way."""
    if exp.actor == "dealer":
        return random_decision(state, exp, rng)
    hand = state.hand(exp.actor)
    if rng.randbelow(3) == 0:
        return Decision(exp.actor, "house_way")
    i = rng.randbelow(7)
    j = (i + 1 + rng.randbelow(6)) % 7
    return Decision(exp.actor, f"set:{hand[i]} {hand[j]}")


def start(bets: list[Event], rules: dict | None = None, roll: int = 8) -> State:
    state = GAME.new_table(GAME.rules(rules or {}))
    order = state.rules.hand_order.value
    for event in [OpenBets(), *bets, CloseBets(), Decision("dealer", order, roll)]:
        state, _ = GAME.apply(state, event)
    return state


def deal(state: State, hands: dict[str, str]) -> tuple[State, list]:
    """Deal the named hands; the discards get the lowest cards no hand uses."""
    named = {to: list(parse_cards(text)) for to, text in hands.items()}
    used = {c for cards in named.values() for c in cards}
    spare = [c for c in deck(1) if c not in used]
    effects = []
    while (exp := GAME.expected_next(state)).card_to is not None:
        to = exp.card_to
        card = named[to].pop(0) if to != "discard" else spare.pop(0)
        state, eff = GAME.apply(state, CardDealt(card))
        effects.extend(eff)
    assert not any(named.values())
    return state, effects


def settle(state: State, settings: dict[int, str]) -> tuple[State, dict]:
    for spot, action in settings.items():
        state, _ = GAME.apply(state, Decision(f"spot:{spot}", action))
    state, effects = GAME.apply(state, Settle())
    settlement = next(e for e in effects if isinstance(e, RoundSettled)).settlement
    return state, {(r.spot, r.box): r for r in settlement.results}


def one(player: str, action: str, rules: dict | None = None, stake: int = 20, dealer: str = DEALER_HAND) -> Any:
    state = start([PlaceBet(1, "main", stake)], rules)
    state, _ = deal(state, {"spot:1": player, "dealer": dealer})
    _, rows = settle(state, {1: action})
    return rows[(1, "main")]


# ---------------------------------------------------------------------------------------------------
# The hand order and the deal


@pytest.mark.parametrize("roll, position", [(3, 3), (7, 7), (8, 1), (9, 2), (10, 3), (14, 7), (15, 1), (16, 2),
                                            (17, 3), (18, 4)])
def test_the_dice_count_round_seven_positions(roll: int, position: int) -> None:
    # 000_*: 1, 8 or 15 the dealer; 2, 9 or 16 the first player to his right; 3, 10 or 17 the second ...
    assert first_position(HandOrder.DICE, roll) == position


def test_the_shuffler_names_the_position() -> None:
    assert [first_position(HandOrder.SHUFFLER, n) for n in range(1, 8)] == list(range(1, 8))
    state = start([PlaceBet(3, "main", 20)], {"hand_order": "shuffler"}, roll=4)
    assert state.first == 4 and GAME.expected_next(state).card_to == "spot:3"


@pytest.mark.parametrize("deal_mode, expected", [
    # bets on spots 1 and 3; a roll of 10 gives the first hand to position 3 (spot 2, empty): hands then go to
    # positions 4 (spot 3), 5, 6, 7 (empty), 1 (the dealer), 2 (spot 1)
    ("rounds", ["discard", "spot:3", "discard", "discard", "discard", "dealer", "spot:1"] * 7),
    ("hands", [t for t in ["discard", "spot:3", "discard", "discard", "discard", "dealer", "spot:1"]
               for _ in range(7)]),
])
def test_seven_hands_in_count_order_empty_spots_discarded(deal_mode: str, expected: list[str]) -> None:
    state = start([PlaceBet(1, "main", 20), PlaceBet(3, "main", 20)], {"deal": deal_mode}, roll=10)
    targets = []
    for card in deck(1)[:49]:
        exp = GAME.expected_next(state)
        targets.append(exp.card_to)
        assert exp.face_up is False
        state, _ = GAME.apply(state, CardDealt(card))
    assert targets == expected
    assert GAME.expected_next(state).actor == "spot:1"      # then the players set, the dealer's hand waits
    snap = GAME.snapshot(state)
    assert len(snap["discards"]) == 28 and all(not d["up"] for d in snap["discards"])


def test_the_joker_is_in_the_deck_and_a_card_twice_is_refused() -> None:
    state = start([PlaceBet(1, "main", 20)])
    state, _ = GAME.apply(state, CardDealt(JOKER))
    with pytest.raises(IllegalEvent, match="already on the table"):
        GAME.apply(state, CardDealt(JOKER))


# ---------------------------------------------------------------------------------------------------
# Settlement against the dealer


@pytest.mark.parametrize("player, action, outcome, paid, commission, returned, words", [
    # wins both: 1:1 less 5% (1 on 20)
    ("QS QD AC KH 8S 6D 4C", "set:AC KH", "win", 20, 1, 39, "wins both hands"),
    # the back wins, the front loses: push
    ("QS QD 8C 6H 4S JD 2H", "set:JD 8C", "push", 0, 0, 20, "one hand each"),
    # loses both
    ("KS QD 8C 6H 4S JD 3H", "set:JD 8C", "lose", 0, 0, 0, "banker wins both"),
    # a copy behind goes to the dealer: a front win only pushes
    ("AD 7C 5D 3H 2S KS QS", "set:KS QS", "push", 0, 0, 20, "one hand each"),
    # copies both: the dealer wins both
    ("AD 7C 5D 3H 2S KH 9D", "set:KH 9D", "lose", 0, 0, 0, "banker wins both"),
    # a foul loses, whatever it would have won
    ("QS QD AC KH 8S 6D 4C", "set:QS QD", "lose", 0, 0, 0, "foul"),
    # the house way on request
    ("QS QD AC KH 8S 6D 4C", "house_way", "win", 20, 1, 39, "wins both hands"),
    # the joker plays as an ace in front
    ("QS QD JK KH 8S 6D 4C", "set:JK KH", "win", 20, 1, 39, "wins both hands"),
])
def test_settlement_against_the_dealer(player: str, action: str, outcome: str, paid: int, commission: int,
                                       returned: int, words: str) -> None:
    row = one(player, action)
    assert (row.outcome, row.paid, row.commission, row.returned) == (outcome, paid, commission, returned)
    assert words in row.line


def test_a_foul_is_reset_by_the_house_way_when_the_rules_say_so() -> None:
    state = start([PlaceBet(1, "main", 20)], {"foul": "house_way"})
    state, _ = deal(state, {"spot:1": "QS QD AC KH 8S 6D 4C", "dealer": DEALER_HAND})
    state, _ = GAME.apply(state, Decision("spot:1", "set:QS QD"))
    state, effects = GAME.apply(state, Settle())
    row = next(e for e in effects if isinstance(e, RoundSettled)).settlement.results[0]
    assert row.outcome == "win"


@pytest.mark.parametrize("stake, rounding, commission", [(25, "up", 2), (25, "down", 1), (25, "half_up", 1),
                                                         (30, "half_up", 2), (100, "up", 5)])
def test_commission_rounding(stake: int, rounding: str, commission: int) -> None:
    row = one("QS QD AC KH 8S 6D 4C", "set:AC KH", {"commission_rounding": rounding}, stake=stake)
    assert (row.commission, row.returned) == (commission, 2 * stake - commission)


def test_the_dealer_sets_by_the_house_way_and_every_hand_turns_up() -> None:
    state = start([PlaceBet(1, "main", 20)])
    state, _ = deal(state, {"spot:1": "QS QD AC KH 8S 6D 4C", "dealer": DEALER_HAND})
    snap = GAME.snapshot(state)
    assert all(not c["up"] for h in snap["hands"] for c in h["cards"])
    assert "back" not in json.dumps({k: v for k, v in snap.items() if k != "audit"})
    state, effects = GAME.apply(state, Decision("spot:1", "set:AC KH"))
    assert [e.to for e in effects if isinstance(e, CardsRevealed)] == ["dealer", "spot:1"]
    snap = GAME.snapshot(state)
    dealer = next(h for h in snap["hands"] if h["to"] == "dealer")
    assert [c["card"] for c in dealer["front"]] == ["KD", "9C"] and dealer["set_by"] == "house way"
    assert dealer["back"] == [{"card": c, "up": True} for c in ("AS", "7H", "5S", "3D", "2C")]
    assert dealer["house_way"] == "no pair" and snap["audit"]["hands"] == {}


# ---------------------------------------------------------------------------------------------------
# Player banking


BANKING = {"player_banking": True}


def test_a_bank_must_cover_every_bet() -> None:
    state = GAME.new_table(GAME.rules(BANKING))
    for event in [OpenBets(), PlaceBet(1, "bank", 50), PlaceBet(2, "main", 40), PlaceBet(3, "main", 20)]:
        state, _ = GAME.apply(state, event)
    with pytest.raises(IllegalEvent, match="does not cover"):
        GAME.apply(state, CloseBets())
    state, _ = GAME.apply(state, PlaceBet(1, "bank", 10))
    GAME.apply(state, CloseBets())


@pytest.mark.parametrize("events, reason", [
    ([PlaceBet(1, "bank", 100)], "does not allow a player to bank"),
])
def test_banking_needs_the_rule(events: list[Event], reason: str) -> None:
    state, _ = GAME.apply(GAME.new_table(GAME.rules({})), OpenBets())
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, events[0])


@pytest.mark.parametrize("first, second, reason", [
    (PlaceBet(1, "bank", 100), PlaceBet(2, "bank", 100), "already banking"),
    (PlaceBet(1, "bank", 100), PlaceBet(1, "main", 20), "banking and cannot also bet"),
    (PlaceBet(1, "main", 20), PlaceBet(1, "bank", 100), "has a bet and cannot also bank"),
])
def test_one_bank_and_no_bet_from_the_banker(first: Event, second: Event, reason: str) -> None:
    state = GAME.new_table(GAME.rules(BANKING))
    state, _ = GAME.apply(GAME.apply(state, OpenBets())[0], first)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, second)


def test_the_banker_plays_every_bet_and_pays_commission_on_the_net() -> None:
    state = start([PlaceBet(4, "bank", 500), PlaceBet(1, "main", 100), PlaceBet(2, "main", 60),
                   PlaceBet(3, "main", 40)], BANKING)
    state, _ = deal(state, {"spot:4": DEALER_HAND, "spot:1": "QS QD AC KH 8S 6D 4C",   # wins both
                            "spot:2": "KC QC 8D 6C 4H JS 3S",                          # loses both
                            "spot:3": "AH 7S 5C 3C 2D KS 9H", "dealer": "8H 8C TS 6S 4D JH 2H"})  # copies both
    _, rows = settle(state, {1: "set:AC KH", 2: "set:JS 8D", 3: "set:KS 9H", 4: "house_way"})
    assert (rows[(1, "main")].outcome, rows[(1, "main")].returned) == ("win", 195)
    assert rows[(2, "main")].outcome == "lose" and rows[(3, "main")].outcome == "lose"
    bank = rows[(4, "bank")]
    # the bank loses 100 to spot 1, wins 60 and 40: net 0, no commission; the house had no last bet
    assert (bank.outcome, bank.paid, bank.commission, bank.returned) == ("push", 0, 0, 500)


def test_the_house_bets_the_bankers_last_bet_against_the_bank() -> None:
    state = start([PlaceBet(2, "main", 30)], BANKING)
    state, _ = deal(state, {"spot:2": "QS QD AC KH 8S 6D 4C", "dealer": DEALER_HAND})
    state, _ = settle(state, {2: "set:AC KH"})
    assert state.last_bet(2) == 30
    for event in [OpenBets(), PlaceBet(2, "bank", 200), PlaceBet(1, "main", 20), CloseBets(),
                  Decision("dealer", "dice", 8)]:
        state, _ = GAME.apply(state, event)
    assert GAME.snapshot(state)["house_stake"] == 30
    # spot 1 copies the bank's hands (the bank wins both); the dealer's pair of tens and ace-king beat it
    state, _ = deal(state, {"spot:2": "KS QD 8C 6H 4S JD 3H", "spot:1": "KC QC 8D 6C 4H JS 3S",
                            "dealer": "TS TH AD KH 8S 6D 4C"})
    _, rows = settle(state, {1: "set:JS 8D", 2: "set:JD 8C"})
    bank = rows[(2, "bank")]
    assert "the house (30 on the dealer's hand) win" in bank.line and "spot 1 lose" in bank.line
    # the bank wins 20 from spot 1 and loses 30 to the house: net -10, no commission
    assert (bank.outcome, bank.paid, bank.commission, bank.returned) == ("lose", 0, 0, 190)
    stakes = sum(r.stake for r in rows.values())
    assert stakes - sum(r.returned for r in rows.values()) == 30    # the house's win against the bank


# ---------------------------------------------------------------------------------------------------
# Refusals change nothing


@pytest.mark.parametrize("event, reason", [
    (Decision("spot:1", "set:AS KD"), "own seven cards"),
    (Decision("spot:1", "set:QS"), "two different cards"),
    (Decision("spot:1", "set:QS QS"), "two different cards"),
    (Decision("spot:1", "set:XX YY"), "not a card"),
    (Decision("spot:1", "fold"), "may set the hand"),
    (Decision("spot:2", "house_way"), "no hand to set"),
    (Decision("dealer", "house_way"), "no hand to set"),
    (Decision("spot:1", "house_way", amount=5), "takes no amount"),
    (Settle(), "cannot settle"),
    (CardDealt(parse_cards("2H")[0]), "no card expected"),
    (PlaceBet(1, "main", 20), "bets are not open"),
])
def test_refusals_while_setting(event: Event, reason: str) -> None:
    state = start([PlaceBet(1, "main", 20)])
    state, _ = deal(state, {"spot:1": "QS QD AC KH 8S 6D 4C", "dealer": DEALER_HAND})
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


@pytest.mark.parametrize("event, reason", [
    (Decision("dealer", "dice", 2), "3 to 18"),
    (Decision("dealer", "dice", 19), "3 to 18"),
    (Decision("dealer", "shuffler", 3), "the dealer enters the dice total"),
    (Decision("spot:1", "dice", 9), "the dealer enters"),
    (CardDealt(parse_cards("2H")[0]), "no card expected"),
])
def test_refusals_before_the_deal(event: Event, reason: str) -> None:
    state = GAME.new_table(GAME.rules({}))
    for e in [OpenBets(), PlaceBet(1, "main", 20), CloseBets()]:
        state, _ = GAME.apply(state, e)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)


def test_setting_twice_is_refused() -> None:
    state = start([PlaceBet(1, "main", 20), PlaceBet(2, "main", 20)])
    state, _ = deal(state, {"spot:1": "QS QD AC KH 8S 6D 4C", "spot:2": "KC QC 8D 6C 4H JS 3S",
                            "dealer": DEALER_HAND})
    state, _ = GAME.apply(state, Decision("spot:2", "house_way"))
    with pytest.raises(IllegalEvent, match="already set"):
        GAME.apply(state, Decision("spot:2", "set:JS 8D"))
    assert GAME.expected_next(state).actor == "spot:1"


def test_a_void_returns_every_stake() -> None:
    state = start([PlaceBet(1, "main", 20), PlaceBet(5, "main", 40)])
    state, effects = GAME.apply(state, VoidRound("shuffler jam"))
    assert sum(e.delta for e in effects if isinstance(e, StakeChanged)) == -60
    assert GAME.expected_next(state).phase == "idle"


def test_rules_validation_names_the_key() -> None:
    with pytest.raises(RulesError, match="spots"):
        GAME.rules({"spots": 7})
    with pytest.raises(RulesError, match="house_way"):
        GAME.rules({"house_way": {"two_pair_low_low": "sometimes"}})
    rules = GAME.rules({"house_way": {"two_pair_low_low": "split"}, "hand_order": "shuffler"})
    assert rules.house_way.two_pair_low_low.value == "split"
    assert rules.to_json()["house_way"]["two_pair_low_low"] == "split"


# ---------------------------------------------------------------------------------------------------
# Properties over random rounds


@pytest.mark.parametrize("rules", [{}, {"player_banking": True},
                                   {"hand_order": "shuffler", "deal": "hands", "foul": "house_way",
                                    "commission_rounding": "down"}])
@pytest.mark.slow
def test_money_is_conserved_and_refusals_change_nothing(rules: dict) -> None:
    play_rounds(GAME, GAME.rules(rules), legal_bets, seed=5, rounds=150, decide=random_decide, jokers=1,
                deck_per_round=True, void_chance=40)


@pytest.mark.slow
def test_player_banked_rounds_net_the_bank() -> None:
    """Over random banked rounds the bank's row is the netted sum of every result against it."""
    rules = GAME.rules(BANKING)
    state = play_rounds(GAME, rules, legal_bets, seed=8, rounds=100, decide=random_decide, jokers=1,
                        deck_per_round=True)
    assert state.round >= 100


def test_the_house_way_setting_matches_the_module() -> None:
    cards = parse_cards("KS KH 4C 4H AD 9D 5C")
    state = start([PlaceBet(1, "main", 20)])
    state, _ = deal(state, {"spot:1": format_cards(cards), "dealer": DEALER_HAND})
    state, _ = GAME.apply(state, Decision("spot:1", "house_way"))
    back, front, how = state.setting("spot:1")
    want_back, want_front = house_way(cards)
    assert (sorted(back), front) == (sorted(want_back), want_front) and how == "house way"


def test_positions_are_seven() -> None:
    assert POSITIONS == 7 and isinstance(JOKER, Card)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([{}, {"player_banking": True}, {"hand_order": "shuffler", "foul": "house_way"}]))
def test_any_seed_conserves_money(seed: int, rules: dict) -> None:
    """Hypothesis picks the seeds and the variant: stakes settled equal stakes placed, refusals change nothing."""
    play_rounds(GAME, GAME.rules(rules), legal_bets, seed=seed, rounds=4, decide=random_decide, jokers=1,
                deck_per_round=True, void_chance=20)
